/*
 * Shutdown, end to end: a merchant app (test/support/shutdown-app.ts) in its own process, the
 * sandbox CLI as the platform in another, SIGTERM sent while a slow paid handler runs. On each
 * HTTP adapter (memory store): the handler finishes (its receipt SMS reaches the sandbox), every
 * inbound endpoint answers new work 503 `HUBTEL_SHUTTING_DOWN` with Retry-After meanwhile
 * (nothing recorded or run for it), the process says in one line what it leaves pending (and
 * loses), and exits 0. On Redis (jobs on BullMQ): the line says the job still running here past
 * the grace, which the next instance then takes over, running only the handler that had not
 * finished; a retry waiting in BullMQ is not this process's, and is kept there.
 */
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { CheckoutEvents } from 'nestjs-hubtel/checkout';
import {
  buildCheckoutCallback,
  buildFulfillmentRequest,
  buildServiceFlowRequest,
  sendCheckoutCallback,
  sendFulfillmentRequest,
  sendJson,
  sendServiceFlowRequest,
  type CheckoutInvoiceLike,
} from 'nestjs-hubtel/testing';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { bullmqJobId } from '../libs/bullmq/src/bullmq.jobs.js';
import {
  ProcessSet,
  eventually,
  redisBinary,
  type AppProcess,
  type RedisDatabase,
  type SandboxProcess,
} from './support/multi-process.js';

const SHUTDOWN_APP = new URL('./support/shutdown-app.ts', import.meta.url).pathname;
/** Letters only: logs mask digit runs that look like phone numbers. */
const ref = (prefix: string) =>
  `${prefix}-${Array.from(randomBytes(8), (b) => String.fromCharCode(97 + (b % 26))).join('')}`;

const SHUTTING_DOWN = {
  statusCode: 503,
  error: 'Service Unavailable',
  code: 'HUBTEL_SHUTTING_DOWN',
};

// One platform for every app here (each test's references are its own).
const platform = new ProcessSet();
let sandbox: SandboxProcess;
beforeAll(async () => {
  sandbox = await platform.sandbox();
}, 120_000);
afterAll(() => platform.stopAll(), 60_000);

describe.each(['express', 'fastify'])('SIGTERM while a slow handler runs (%s)', (adapter) => {
  const system = new ProcessSet();
  let app: AppProcess;

  beforeAll(async () => {
    app = await system.app(`shop-${adapter}`, {
      entry: SHUTDOWN_APP,
      env: {
        SANDBOX: JSON.stringify(sandbox.info),
        ADAPTER: adapter,
        // The slow handler holds until the test sends SIGUSR2 (see below).
        GRACE_MS: '20000',
        NO_COLOR: '1',
      },
    });
  }, 120_000);

  afterAll(() => system.stopAll(), 60_000);

  async function createInvoice(clientReference: string): Promise<void> {
    const created = await sendJson(
      app.url,
      { clientReference, amount: 10 },
      { path: '/shutdown-test/invoices' },
    );
    expect(created.status).toBe(201);
  }

  it('lets the handler finish, answers new work 503, logs what is left pending and exits 0', async () => {
    const slow = ref('slow');
    const failing = ref('fail');
    const late = ref('late');
    await Promise.all([createInvoice(slow), createInvoice(failing), createInvoice(late)]);
    // The late callback is paid at the platform but not delivered yet: sent during the drain.
    await sandbox.post(`invoices/${late}/pay`, { deliver: false });
    const lateCallback = buildCheckoutCallback({
      invoice: await sandbox.get<CheckoutInvoiceLike>(`invoices/${late}`),
    });

    // A handler that fails: its retry (a minute away) still waits when the app stops.
    await sandbox.post(`invoices/${failing}/pay`, {});
    await app.output.waitFor(new RegExp(`STARTED ${failing}`));
    await sandbox.post(`invoices/${slow}/pay`, {});
    await app.output.waitFor(new RegExp(`STARTED ${slow}`));

    const stopped = app.stop();
    // A harmless probe (an empty body: 400 while running) tells when the shutdown has begun.
    const probe = await eventually(
      'the app to refuse work',
      async () => {
        const answer = await sendCheckoutCallback(app.url, {});
        return answer.status === 503 ? answer : undefined;
      },
      { intervalMs: 20 },
    );
    expect(probe.body).toMatchObject(SHUTTING_DOWN);

    const callback = await sendCheckoutCallback(app.url, lateCallback);
    const fulfillment = await sendFulfillmentRequest(
      app.url,
      buildFulfillmentRequest({ sessionId: ref('session'), orderId: ref('order') }),
    );
    const step = await sendServiceFlowRequest(app.url, buildServiceFlowRequest({ sessionId: ref('ussd') }));
    for (const answer of [callback, fulfillment, step]) {
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('5');
      expect(answer.body).toMatchObject(SHUTTING_DOWN);
    }
    expect(callback.body).toEqual({
      ...SHUTTING_DOWN,
      message: 'This instance is shutting down: the checkout callback was not recorded; send it again later',
    });
    // Refused while the slow handler still ran; now it may finish.
    expect(app.output.count(new RegExp(`FINISHED ${slow}`))).toBe(0);
    process.kill(app.process.pid!, 'SIGUSR2');

    await stopped;
    const output = app.output.all;
    // The handler in flight finished, its effect reached the platform.
    expect(output).toMatch(new RegExp(`FINISHED ${slow}`));
    const receipts = (await sandbox.messages()).map((m) => m.content);
    expect(receipts).toContain(`Receipt ${slow}`);
    // The late callback was neither recorded nor handled.
    expect(output).not.toMatch(new RegExp(`STARTED ${late}`));
    expect(receipts).not.toContain(`Receipt ${late}`);
    // What is left is said, with its count, once per module.
    expect(output).toContain(
      "Shutdown of the checkout jobs: 1 job left pending (0 still running after the 20000 ms grace, 1 waiting to run or to retry) is kept in this process's memory store and LOST when it exits (keep it in Redis: HubtelRedisModule)",
    );
    expect(output).toContain('Shutdown of the service-app jobs: every job finished; nothing left pending');
    expect(output).toMatch(/\[shop-\w+: exited, code 0\]/);
  }, 120_000);
});

redisBinary.describe('SIGTERM with the records in Redis (jobs on BullMQ)', () => {
  const system = new ProcessSet();
  let redis: RedisDatabase;
  let app: AppProcess;
  const shopEnv = (holdMs: number) => ({
    SANDBOX: JSON.stringify(sandbox.info),
    REDIS_URL: redis.url,
    HOLD_MS: String(holdMs),
    GRACE_MS: '1000',
    // BullMQ's takeover of the job left running, in seconds rather than the default 15: no other
    // instance runs meanwhile (the next one starts after this one exited), so no live worker's
    // lock is at stake.
    LOCK_MS: '2000',
    STALLED_MS: '500',
    NO_COLOR: '1',
  });

  beforeAll(async () => {
    redis = await system.redis();
    // The slow handler holds far longer than the grace: it is still running when the app exits.
    app = await system.app('shop-redis', { entry: SHUTDOWN_APP, env: shopEnv(600_000) });
  }, 120_000);

  afterAll(() => system.stopAll(), 60_000);

  it('says the job still running past the grace; the next instance takes it over and runs only its unfinished handler; a retry stays in BullMQ', async () => {
    const failing = ref('fail');
    const slow = ref('slow');
    for (const clientReference of [failing, slow]) {
      const created = await sendJson(
        app.url,
        { clientReference, amount: 10 },
        { path: '/shutdown-test/invoices' },
      );
      expect(created.status).toBe(201);
    }
    await sandbox.post(`invoices/${failing}/pay`, {});
    await app.output.waitFor(new RegExp(`STARTED ${failing}`));
    // Its first run failed and was recorded: the retry waits a minute, in BullMQ.
    await app.output.waitFor(/failed \(attempt 1\/5\)/);
    await sandbox.post(`invoices/${slow}/pay`, {});
    await app.output.waitFor(new RegExp(`STARTED ${slow}`));

    await app.stop();
    const first = app.output.all;
    // Only the job still running here is said (the retry waiting in BullMQ is no longer this
    // process's), with who runs it now.
    expect(first).toContain(
      'Shutdown of the checkout jobs: 1 job still running after the 1000 ms grace; BullMQ hands it to another instance or the next start, where only the handlers that did not finish run',
    );
    expect(first).toContain(
      'Shutdown of the service-app jobs: every job running here finished; what waits to run stays in BullMQ',
    );
    expect(first).toMatch(/\[shop-redis: exited, code 0\]/);
    expect(first).not.toMatch(new RegExp(`FINISHED ${slow}`));
    expect(app.output.count(new RegExp(`NOTED ${slow}`))).toBe(1);
    expect((await sandbox.messages()).map((m) => m.content)).not.toContain(`Receipt ${slow}`);

    // The failed job's retry outlived the process: its BullMQ job waits in the delayed set.
    const queue = new Queue('checkout', {
      connection: { url: redis.url },
      prefix: BULLMQ_RUNNER_DEFAULTS.prefix,
    });
    try {
      const retry = await queue.getJob(
        bullmqJobId(`hubtel:checkout:job:${CheckoutEvents.Paid}:${failing}`, 1),
      );
      expect(await retry?.isDelayed()).toBe(true);
    } finally {
      await queue.close();
    }

    // The next start (handlers at full speed) takes the slow job over once BullMQ finds it
    // stalled (lock 2 s + stalled check 0.5 s here): the receipt handler runs there, the handler
    // that had finished does not run again.
    const next = await system.app('shop-redis-next', { entry: SHUTDOWN_APP, env: shopEnv(0) });
    await next.output.waitFor(new RegExp(`FINISHED ${slow}`), { timeoutMs: 60_000 });
    expect(next.output.count(new RegExp(`STARTED ${slow}`))).toBe(1);
    expect(next.output.count(new RegExp(`NOTED ${slow}`))).toBe(0);
    await eventually('the receipt to reach the platform', async () =>
      (await sandbox.messages()).some((m) => m.content === `Receipt ${slow}`) ? true : undefined,
    );
    expect((await sandbox.messages()).filter((m) => m.content === `Receipt ${slow}`)).toHaveLength(1);
  }, 180_000);
});
