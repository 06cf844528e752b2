/*
 * Durable on Redis, end to end: two instances of a merchant app (test/support/replica-app.ts), each
 * its own process, sharing one redis-server, with the sandbox CLI as the platform in a third
 * process; everything over real HTTP, crashes as kill -9. What a handler did is counted where it
 * shows: the SMS the sandbox received, and the `HANDLED` line each handler run prints.
 */
import http, { type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { type HubtelStore } from 'nestjs-hubtel';
import { type JobRecord } from '#internal';
import { RedisStore } from 'nestjs-hubtel/redis';
import {
  buildCheckoutCallback,
  buildFulfillmentRequest,
  buildServiceFlowRequest,
  sendCheckoutCallback,
  sendFulfillmentRequest,
  sendServiceFlowRequest,
  sendJson,
  type CheckoutInvoiceLike,
} from 'nestjs-hubtel/testing';
import { RedisCluster, redisClusterBinaries } from './support/redis-cluster.js';
import {
  ProcessSet,
  eventually,
  freePort,
  redisBinary,
  type AppProcess,
  type RedisServer,
  type SandboxProcess,
} from './support/multi-process.js';

const REPLICA_APP = new URL('./support/replica-app.ts', import.meta.url).pathname;
/** The example merchant app, as `npm start` runs it. */
const EXAMPLE_APP = new URL('../src/main.ts', import.meta.url).pathname;
/**
 * Short job ownership, so a dead instance's jobs are taken over within seconds (defaults: 30 s /
 * 15 s). Long enough that a live instance cut off from Redis for about a second (the "Redis killed
 * while a handler runs" test: last renewal, the outage, then its write retried with up to 1 s of
 * backoff) renews before another instance may take its job, even on a loaded CI machine.
 */
const LEASE_MS = 6_000;
const SWEEP_MS = 500;
/**
 * The documented worst case from a kill -9 to the job running on another instance, without BullMQ
 * (docs/operations.md, "Takeover after a crash": leaseMs + sweepIntervalMs), plus room for timers
 * and event loops late on a loaded 2-core machine (a bound on a promise, not a benchmark).
 */
const TAKEOVER_BOUND_MS = LEASE_MS + SWEEP_MS + 3_000;

const id = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`;
/** An id without long digit runs (logs mask what looks like a phone number). */
const letters = (prefix: string) =>
  `${prefix}-${Array.from(randomBytes(10), (b) => String.fromCharCode(97 + (b % 26))).join('')}`;

/** Runs `task` on every item, `concurrency` at a time; resolves with the results in item order. */
async function inBatches<T, R>(
  items: T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
) {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index]!, index);
      }
    }),
  );
  return results;
}

/** A stand-in for the platform's fulfillment callback receiver that can be down (not listening). */
class CallbackReceiver {
  readonly received: Array<{ OrderId: string; SessionId: string; ServiceStatus: string; MetaData: unknown }> =
    [];
  private server: Server | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/callback') this.received.push(JSON.parse(body));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ResponseCode":"0000"}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * What the multi-instance tests ask of two replicas, the sandbox and the shared store, whichever
 * Redis they share (one server, or a cluster).
 */
function replicaKit(get: () => { apps: AppProcess[]; sandbox: SandboxProcess; store: HubtelStore }) {
  /** Every `HANDLED <what> <key>` line printed by either instance (across restarts). */
  const runs = (what: string, key: string) =>
    get().apps.reduce(
      (sum, app) => sum + app.output.count(new RegExp(`^HANDLED ${what} ${key} by `, 'm')),
      0,
    );
  const receipts = async (ref: string) =>
    (await get().sandbox.messages()).filter((m) => m.content === `Receipt ${ref}`).length;

  /** Resolves once no job of the pipeline is pending or running (each one done or dead). */
  async function settled(
    pipeline: 'checkout' | 'service-app',
    keyPart?: string,
    on: HubtelStore = get().store,
  ): Promise<JobRecord[]> {
    return eventually(
      `the ${pipeline} jobs to settle`,
      async () => {
        const jobs: JobRecord[] = [];
        for await (const [key, entry] of on.scan<JobRecord>(`hubtel:${pipeline}:job:`)) {
          if (keyPart === undefined || key.includes(keyPart)) jobs.push(entry.value);
        }
        const open = jobs.filter((job) => job.status !== 'done' && job.status !== 'dead');
        if (open.length === 0) return jobs;
        // Thrown, not returned: a time-out then says which jobs were still open, and how.
        throw new Error(
          `still open: ${open
            .slice(0, 5)
            .map(
              (job) =>
                `${job.type} ${job.key} ${job.status} (attempts ${job.attempts}, lease ${job.leaseUntil === undefined ? 'none' : job.leaseUntil - Date.now() + ' ms'}${job.lastError ? `, ${job.lastError}` : ''})`,
            )
            .join('; ')}${open.length > 5 ? ` and ${open.length - 5} more` : ''}`,
        );
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  }

  async function createInvoice(app: AppProcess, ref: string, amount: number) {
    const created = await sendJson<{ checkoutId: string }>(
      app.url,
      { clientReference: ref, amount },
      { path: '/replica/invoices' },
    );
    expect(created.status).toBe(201);
    return created.body;
  }

  /** A paid callback body the sandbox stands behind: the invoice paid there, no callback sent. */
  async function paidCallback(ref: string) {
    await get().sandbox.post(`invoices/${ref}/pay`, { deliver: false });
    const invoice = await get().sandbox.get<CheckoutInvoiceLike>(`invoices/${ref}`);
    return buildCheckoutCallback({ invoice });
  }

  /** Sends one service-flow step and returns the app's answer. */
  async function step(app: AppProcess, request: Record<string, unknown>) {
    const answer = await sendServiceFlowRequest<Record<string, unknown>>(app.url, request);
    expect(answer.status).toBe(200);
    return answer.body;
  }

  /** A whole USSD session, each answer on another instance: ends in the cart (GHS 5). */
  async function buyBundle(sessionId: string, first: AppProcess, second: AppProcess) {
    const prompt = await step(first, buildServiceFlowRequest({ sessionId }));
    const bundles = await step(second, buildServiceFlowRequest({ sessionId, message: '0244000111' }));
    const cart = await step(first, buildServiceFlowRequest({ sessionId, message: '1gb' }));
    return { prompt, bundles, cart };
  }
  return { runs, receipts, settled, createInvoice, paidCallback, step, buyBundle };
}

redisBinary.describe('two app instances in separate processes on one Redis, the sandbox in a third', () => {
  const system = new ProcessSet();
  let redis: RedisServer;
  let sandbox: SandboxProcess;
  let a: AppProcess;
  let b: AppProcess;
  let receiver: CallbackReceiver;
  /** The test's own view of the shared store (public API), to see when jobs have settled. */
  let store: RedisStore;

  beforeAll(async () => {
    // Append-only, synced before each reply: Redis is killed and restarted in the last test, and
    // must come back with what it acknowledged (as a production Redis holding payments does).
    [redis, sandbox] = await Promise.all([system.redis({ appendOnly: true }), system.sandbox()]);
    receiver = new CallbackReceiver(await freePort());
    const env = (instance: string) => ({
      INSTANCE: instance,
      REDIS_URL: redis.url,
      SANDBOX: JSON.stringify(sandbox.info),
      FULFILLMENT_CALLBACK_URL: receiver.url,
      LEASE_MS: String(LEASE_MS),
      SWEEP_MS: String(SWEEP_MS),
      HOLD_MS: '800',
      NO_COLOR: '1',
    });
    [a, b] = await Promise.all([
      system.app('a', { entry: REPLICA_APP, env: env('a'), readyPath: '/replica' }),
      system.app('b', { entry: REPLICA_APP, env: env('b'), readyPath: '/replica' }),
    ]);
    store = new RedisStore({ url: redis.url });
    await store.connect();
  }, 180_000);

  afterAll(async () => {
    await store?.close().catch(() => undefined);
    await receiver?.down();
    await system.stopAll();
  }, 60_000);

  const { runs, receipts, settled, createInvoice, paidCallback, buyBundle } = replicaKit(() => ({
    apps: [a, b],
    sandbox,
    store,
  }));

  it('an invoice created before a kill -9 is paid after the restart: handled once, one receipt', async () => {
    const ref = id('kill');
    await createInvoice(a, ref, 12);
    await a.kill();
    await a.restart();

    // The sandbox pays and posts the callback to the URL the invoice was created with: a's.
    await sandbox.post(`invoices/${ref}/pay`, {});
    await eventually('the receipt', async () => ((await receipts(ref)) > 0 ? true : undefined));
    await settled('checkout', ref);

    expect(runs('paid', ref)).toBe(1);
    expect(await receipts(ref)).toBe(1);
  }, 120_000);

  it('an instance killed inside a paid handler: the other takes the job over within leaseMs + sweepIntervalMs', async () => {
    // `hold-…`: the handler waits HOLD_MS after its SMS, so the kill lands inside it.
    const ref = id('hold');
    await createInvoice(a, ref, 7);
    const body = await paidCallback(ref);
    const [fromA, fromB] = [a.output.mark, b.output.mark];
    expect((await sendCheckoutCallback(a.url, body)).status).toBe(200);
    await a.output.waitFor(new RegExp(`^HANDLED paid ${ref} by a$`, 'm'), { from: fromA });
    const killedAt = Date.now();
    await a.kill();

    await b.output.waitFor(new RegExp(`^HANDLED paid ${ref} by b$`, 'm'), { from: fromB, timeoutMs: 60_000 });
    expect(Date.now() - killedAt).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    await settled('checkout', ref);
    // Run again (a died before it finished, as the README says), and only on b after the kill.
    expect(runs('paid', ref)).toBe(2);
    await a.restart();
  }, 120_000);

  it('1,000 copies of one paid callback over both instances, 100 at a time: the handler runs once, one SMS', async () => {
    const ref = id('copies');
    await createInvoice(b, ref, 25);
    const body = await paidCallback(ref);

    const statuses = await inBatches(Array.from({ length: 1_000 }), 100, async (_, index) => {
      const answer = await sendCheckoutCallback(index % 2 === 0 ? a.url : b.url, body, { timeoutMs: 30_000 });
      return answer.status;
    });

    expect(new Set(statuses)).toEqual(new Set([200]));
    await settled('checkout', ref);
    expect(runs('paid', ref)).toBe(1);
    expect(await receipts(ref)).toBe(1);
  }, 120_000);

  it('a USSD session started on instance 1 continues on instance 2, and ends back on 1', async () => {
    const sessionId = id('ussd');
    const { prompt, bundles, cart } = await buyBundle(sessionId, a, b);

    expect(prompt).toMatchObject({
      SessionId: sessionId,
      Type: 'Response',
      Message: 'Number to buy data for',
    });
    // b answers the second step with what was typed on a: the session lives in Redis.
    expect(bundles).toMatchObject({
      SessionId: sessionId,
      Type: 'Response',
      Message: expect.stringContaining('Bundle for 233244000111 (asked by b)'),
    });
    // Operator mtn is the USSD channel: the cart ends the session as a Release carrying the Item.
    expect(cart).toMatchObject({
      SessionId: sessionId,
      Type: 'Release',
      Item: {
        ItemName: '1GB for GHS 5.00',
        Qty: 1,
        Price: 5,
        ServiceData: { destination: '233244000111', bundle: '1gb' },
      },
    });
  }, 60_000);

  it('a fulfillment whose callback receiver is down, its instance killed, the receiver back: the callback arrives once', async () => {
    const sessionId = id('fulfil');
    const orderId = letters('order');
    await buyBundle(sessionId, b, a);
    await sandbox.post(`sessions/${sessionId}/pay`, { amount: 5, orderId });

    const mark = a.output.mark;
    const accepted = await sendFulfillmentRequest(a.url, buildFulfillmentRequest({ sessionId, orderId }));
    expect(accepted.status).toBe(200);
    // a delivered the order and keeps failing to post its callback (nobody listens there).
    await a.output.waitFor(new RegExp(`^HANDLED fulfillment ${orderId} by a$`, 'm'), { from: mark });
    await a.output.waitFor(/Job callback .* failed \(attempt 2\//, { from: mark });

    await a.kill();
    await receiver.up();

    // b's sweep takes the callback over once a's lease has run out, and gets it accepted.
    const record = await eventually(
      'the callback to be accepted',
      async () => {
        const response = await fetch(`${b.url}/replica/orders/${orderId}`);
        const status = (await response.json()) as { callback?: { status: string } };
        return status.callback?.status === 'done' ? status : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await settled('service-app', orderId);

    expect(record.callback).toMatchObject({ serviceStatus: 'success', status: 'done' });
    expect(receiver.received.filter((c) => c.OrderId === orderId)).toEqual([
      { SessionId: sessionId, OrderId: orderId, ServiceStatus: 'success', MetaData: { deliveredBy: 'a' } },
    ]);
    expect(runs('fulfillment', orderId)).toBe(1);
    await a.restart();
  }, 120_000);

  it('Redis stopped under load: 503s and no 500, nothing handled meanwhile; Redis back: every recorded callback handled once', async () => {
    const refs = Array.from({ length: 100 }, (_, index) => id(`outage${index}`));
    await inBatches(refs, 10, (ref, index) => createInvoice(index % 2 ? a : b, ref, 10 + index));
    const bodies = await inBatches(refs, 10, (ref) => paidCallback(ref));
    const answers = new Map<string, number[]>(refs.map((ref) => [ref, []]));
    const send = async (index: number) => {
      const ref = refs[index]!;
      const target = index % 2 ? a : b;
      const answer = await sendCheckoutCallback(target.url, bodies[index], { timeoutMs: 30_000 });
      answers.get(ref)!.push(answer.status);
      return answer.status;
    };

    // Load: 80 callbacks go out 20 at a time; Redis is killed while they do. The last 20 are
    // first sent once it is down.
    let sent = 0;
    const load = inBatches(refs.slice(0, 80), 20, async (_, index) => {
      sent++;
      return send(index);
    });
    await eventually('some callbacks under way', () => (sent >= 40 ? true : undefined), { intervalMs: 5 });
    await redis.stop();
    await load;
    // While it is down, every callback not recorded yet is sent (again): all refused for now.
    const unrecorded = () => refs.filter((ref) => !answers.get(ref)!.includes(200));
    const whileDown = await Promise.all(unrecorded().map((ref) => send(refs.indexOf(ref))));
    const handledWhileDown = refs.filter((ref) => runs('paid', ref) > 0);
    const smsWhileDown = new Set((await sandbox.messages()).map((m) => m.content));

    const all = [...answers.values()].flat();
    expect(all.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(whileDown.length).toBeGreaterThanOrEqual(20);
    expect(new Set(whileDown)).toEqual(new Set([503]));
    // Nothing refused was handled: no handler ran, no SMS went out, for a callback never answered 200.
    for (const ref of unrecorded()) {
      expect(handledWhileDown).not.toContain(ref);
      expect(smsWhileDown.has(`Receipt ${ref}`)).toBe(false);
    }

    // Redis back: the platform keeps re-sending what was not acknowledged, until it is.
    await redis.restart();
    await eventually(
      'every callback acknowledged',
      async () => {
        const pending = unrecorded();
        await Promise.all(pending.map((ref) => send(refs.indexOf(ref))));
        return unrecorded().length === 0 ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await settled('checkout');
    await eventually(
      'every receipt',
      async () => ((await Promise.all(refs.map(receipts))).every((n) => n > 0) ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 200 },
    );

    expect([...answers.values()].flat().filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(refs.map((ref) => [ref, runs('paid', ref)])).toEqual(refs.map((ref) => [ref, 1]));
    expect(await Promise.all(refs.map(receipts))).toEqual(refs.map(() => 1));
  }, 180_000);

  it('Redis killed while a handler runs, back within the lease: the run is recorded once Redis answers, never repeated', async () => {
    const ref = id('hold');
    await createInvoice(a, ref, 15);
    const mark = a.output.mark;
    await sandbox.post(`invoices/${ref}/pay`, {});
    // The handler sent its SMS and holds (HOLD_MS) before returning: Redis dies meanwhile.
    await eventually('the receipt', async () => ((await receipts(ref)) > 0 ? true : undefined), {
      intervalMs: 20,
    });
    await redis.stop();
    await a.output.waitFor(new RegExp(`^RELEASED ${ref}$`, 'm'), { from: mark });
    await redis.restart();
    await settled('checkout', ref);

    expect(runs('paid', ref)).toBe(1);
    expect(await receipts(ref)).toBe(1);
  }, 120_000);

  /*
   * The example merchant app itself (src/main.ts, configured by environment variables only, as
   * `npm start` is) in real-platform mode against the sandbox process: its shop keeps orders in
   * Redis with REDIS_URL. Database 1 of the same server: another app, its own keys.
   */
  describe('the example shop as two processes (src/main.ts, REDIS_URL)', () => {
    let shop1: AppProcess;
    let shop2: AppProcess;
    let shopStore: RedisStore;

    beforeAll(async () => {
      const env = {
        HUBTEL_CLIENT_ID: sandbox.info.credentials.api.clientId,
        HUBTEL_CLIENT_SECRET: sandbox.info.credentials.api.clientSecret,
        HUBTEL_SMS_CLIENT_ID: sandbox.info.credentials.sms.clientId,
        HUBTEL_SMS_CLIENT_SECRET: sandbox.info.credentials.sms.clientSecret,
        HUBTEL_SMS_SENDER_ID: 'Shop',
        HUBTEL_SMS_URL: sandbox.info.baseUrls.sms,
        HUBTEL_CHECKOUT_URL: sandbox.info.baseUrls.checkout,
        HUBTEL_STATUS_URL: sandbox.info.baseUrls.status,
        HUBTEL_CALLBACK_URL: sandbox.info.baseUrls.fulfillmentCallback,
        HUBTEL_POS_SALES_ID: sandbox.info.posSalesId,
        REDIS_URL: `${redis.url}/1`,
        NO_COLOR: '1',
      };
      [shop1, shop2] = await Promise.all([
        system.app('shop1', { entry: EXAMPLE_APP, env }),
        system.app('shop2', { entry: EXAMPLE_APP, env }),
      ]);
      shopStore = new RedisStore({ url: `${redis.url}/1` });
      await shopStore.connect();
    }, 180_000);

    afterAll(async () => {
      await shopStore?.close().catch(() => undefined);
    });

    it('an order placed on instance 1 before its kill -9 is paid after the restart: one receipt, and instance 2 sees it paid', async () => {
      const placed = await fetch(`${shop1.url}/orders`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ product: 'kente-mug', phone: '0244123456', name: 'Ama' }).toString(),
        redirect: 'manual',
      });
      expect(placed.status).toBe(303);
      // The order id is the invoice's reference: the newest invoice at the sandbox.
      const [invoice] = await sandbox.get<Array<{ clientReference: string }>>('invoices?limit=1');
      const orderId = invoice!.clientReference;

      await shop1.kill();
      await shop1.restart();
      await sandbox.post(`invoices/${orderId}/pay`, {});

      const order = await eventually(
        'the order paid and receipted, as instance 2 sees it',
        async () => {
          const response = await fetch(`${shop2.url}/api/orders/${orderId}`);
          const body = (await response.json()) as { status: string; receipt: { status: string } };
          return body.status === 'paid' && body.receipt.status === 'sent' ? body : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      await settled('checkout', orderId, shopStore);

      expect(order).toMatchObject({ status: 'paid', receipt: { status: 'sent' } });
      const receiptsOfOrder = (await sandbox.messages()).filter((m) => m.content.includes(orderId));
      expect(receiptsOfOrder).toHaveLength(1);
    }, 120_000);
  });
});

/**
 * The same replicas on a 3-master Redis Cluster (the pipelines' own leases and sweep, no BullMQ;
 * the BullMQ replicas run on a cluster in bullmq-replicas.e2e-spec.ts): records spread over the
 * masters, every one of them found.
 */
redisClusterBinaries.describe('two app instances in separate processes on a 3-master Redis Cluster', () => {
  const system = new ProcessSet();
  let cluster: RedisCluster;
  let sandbox: SandboxProcess;
  let a: AppProcess;
  let b: AppProcess;
  let store: RedisStore;
  const { runs, receipts, settled, createInvoice, paidCallback, buyBundle } = replicaKit(() => ({
    apps: [a, b],
    sandbox,
    store,
  }));

  beforeAll(async () => {
    [cluster, sandbox] = await Promise.all([RedisCluster.start(), system.sandbox()]);
    const env = (instance: string) => ({
      INSTANCE: instance,
      REDIS_CLUSTER_NODES: cluster.nodesEnv,
      SANDBOX: JSON.stringify(sandbox.info),
      LEASE_MS: String(LEASE_MS),
      SWEEP_MS: String(SWEEP_MS),
      HOLD_MS: '800',
      NO_COLOR: '1',
    });
    [a, b] = await Promise.all([
      system.app('a', { entry: REPLICA_APP, env: env('a'), readyPath: '/replica' }),
      system.app('b', { entry: REPLICA_APP, env: env('b'), readyPath: '/replica' }),
    ]);
    store = new RedisStore({ cluster: { nodes: cluster.nodes } });
    await store.connect();
  }, 180_000);

  afterAll(async () => {
    await store?.close().catch(() => undefined);
    await system.stopAll();
    await cluster?.dispose();
  }, 60_000);

  it('an invoice created before a kill -9 is paid after the restart: handled once, one receipt', async () => {
    const ref = id('kill');
    await createInvoice(a, ref, 12);
    await a.kill();
    await a.restart();
    await sandbox.post(`invoices/${ref}/pay`, {});
    await eventually('the receipt', async () => ((await receipts(ref)) > 0 ? true : undefined));
    await settled('checkout', ref);
    expect(runs('paid', ref)).toBe(1);
    expect(await receipts(ref)).toBe(1);
  }, 120_000);

  it('2 × 60 copies of one paid callback over both instances at once: the handler runs once, one SMS', async () => {
    const ref = id('copies');
    await createInvoice(b, ref, 25);
    const body = await paidCallback(ref);
    const statuses = await Promise.all(
      Array.from({ length: 120 }, (_, index) =>
        sendCheckoutCallback(index % 2 === 0 ? a.url : b.url, body, { timeoutMs: 30_000 }).then(
          (r) => r.status,
        ),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    await settled('checkout', ref);
    expect(runs('paid', ref)).toBe(1);
    expect(await receipts(ref)).toBe(1);
  }, 120_000);

  it('a USSD session started on instance 1 continues on instance 2, and ends back on 1', async () => {
    const sessionId = id('ussd');
    const { bundles, cart } = await buyBundle(sessionId, a, b);
    expect(bundles).toMatchObject({
      Message: expect.stringContaining('Bundle for 233244000111 (asked by b)'),
    });
    expect(cart).toMatchObject({ Type: 'Release', Item: { ItemName: '1GB for GHS 5.00', Price: 5 } });
    // The records of those jobs and sessions lie on more than one master.
    expect((await cluster.keysPerMaster()).filter((count) => count > 0).length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
