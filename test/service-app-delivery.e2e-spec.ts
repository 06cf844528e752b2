/*
 * A session's goods go out at most once, and never after "failed" was reported (issue 21, items
 * 1, 2, 3 and the service-app half of 5): two replicas of the test merchant app on one Redis,
 * the sandbox as the platform (status check, client-app driver, callback receiver), everything
 * over real HTTP; replays made from outside the app with `hubtel-trigger dead-letters`.
 */
import { PassThrough } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import type { ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import { HubtelBullmqModule, type BullmqJobRunner } from 'nestjs-hubtel/bullmq';
import { RedisStore } from 'nestjs-hubtel/redis';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { runTriggerCli } from 'nestjs-hubtel/testing';
import { type InboundPipeline } from '#internal';
import { SERVICE_APP_KEYS, SERVICE_APP_PIPELINE } from '../libs/service-app/src/service-app.constants.js';
import { jobsSettled } from './support/job-settle.js';
import { eventually } from './support/multi-process.js';
import {
  postJson as post,
  startMerchant,
  type Merchant,
  onAppChannel,
} from './support/service-app.harness.js';
import { storeFixture } from './support/test-stores.js';

function streams() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  return { io: { stdin: new PassThrough(), stdout, stderr, env: {} }, out: () => out, err: () => err };
}

const stores = storeFixture('redis');

stores.describe('one delivery per session, on Redis with two replicas', () => {
  let sandbox: HubtelSandbox;
  let redis: RedisStore;
  let a: Merchant;
  let b: Merchant;
  let redisUrl: string;
  /** The re-check window: short, so a whole window passes within a test. */
  const RECHECK_MS = 400;

  const options = (store: RedisStore): ServiceAppModuleOptions => ({
    store,
    callbackUrl: sandbox.baseUrls().fulfillmentCallback,
    callbackTimeoutMs: 2_500,
    callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 6_000 },
    fulfillmentRetry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    statusCheck: {
      ...sandbox.credentials.api,
      posSalesId: sandbox.posSalesId,
      url: sandbox.baseUrls().status,
      timeoutMs: 1_000,
    },
    verification: { recheckForMs: RECHECK_MS, recheckDelay: { baseDelayMs: 10, maxDelayMs: 20 } },
  });

  beforeAll(async () => {
    sandbox = onAppChannel(await HubtelSandbox.start());
    const first = (await stores.create()) as RedisStore;
    const second = (await stores.create()) as RedisStore;
    redis = first;
    redisUrl = stores.redisUrl!;
    // Both replicas' jobs run on BullMQ, on the same Redis.
    a = await startMerchant('express', options(first), {}, { imports: stores.jobRunnerImports() });
    b = await startMerchant(
      'fastify',
      options(second),
      {},
      { logger: a.logger, imports: stores.jobRunnerImports() },
    );
  });

  afterEach(async () => {
    await settled();
    for (const m of [a, b]) await m.fulfillment.drainRejections();
    sandbox.faults.clear();
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await stores.dispose();
    await sandbox?.stop();
  });

  /**
   * Nothing left to run on either replica: BullMQ's queue (which both share) holds no job waiting,
   * running or delayed, and neither replica runs one.
   */
  async function settled() {
    await jobsSettled(a.app.get<InboundPipeline>(SERVICE_APP_PIPELINE), 'service-app');
    await b.app.get<InboundPipeline>(SERVICE_APP_PIPELINE).drain();
  }

  /** Handler runs for an order, on both replicas. */
  const runs = (orderId: string) =>
    (a.fulfiller.calls.get(orderId) ?? 0) + (b.fulfiller.calls.get(orderId) ?? 0);
  const callbacksOf = (orderId: string) =>
    sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId);
  /** Status checks the sandbox answered after its request number `from`. */
  const statusChecksSince = (from: number) =>
    sandbox.requests().filter((r) => r.id > from && r.api === 'status').length;

  /** The contract's three service-flow calls, on replica A: a cart of 1GB for GHS 5.00. */
  async function toCart() {
    const session = sandbox.serviceApp(a.url);
    await session.start();
    await session.reply('0241234567');
    await session.choose('1gb');
    return session;
  }

  async function rejected(orderId: string) {
    await eventually(`order ${orderId} refused`, () =>
      [...a.fulfiller.rejected, ...b.fulfiller.rejected].find((e) => e.orderId === orderId),
    );
    return [...a.fulfiller.rejected, ...b.fulfiller.rejected].find((e) => e.orderId === orderId)!;
  }

  async function cliReplay(id: string) {
    const replay = streams();
    const code = await runTriggerCli(
      [
        'dead-letters',
        'replay',
        id,
        '--redis-url',
        redisUrl,
        '--module',
        'service-app',
        '--wait',
        '--timeout',
        '10000',
      ],
      replay.io,
    );
    return { code, out: replay.out(), err: replay.err() };
  }

  it('item 1: a command-line replay of an order reported "failed" delivers nothing (it stays dead)', async () => {
    const session = await toCart();
    const orderId = `broken-${randomUUID()}`;
    a.fulfiller.modes.set(orderId, 'throw');
    b.fulfiller.modes.set(orderId, 'throw');
    await session.pay({ orderId });
    await eventually('"failed" reported', () => callbacksOf(orderId)[0]);
    expect(callbacksOf(orderId)).toEqual([expect.objectContaining({ serviceStatus: 'failed' })]);
    const before = runs(orderId);

    // The vendor API is back: an operator replays the dead letter from the command line.
    a.fulfiller.modes.delete(orderId);
    b.fulfiller.modes.delete(orderId);
    const replay = await cliReplay(`fulfillment:${orderId}`);
    expect(replay.out).toContain('Dead again');
    expect(replay.out).toContain('already reported "failed"');
    expect(replay.code).toBe(1);
    expect(runs(orderId)).toBe(before);
    expect(callbacksOf(orderId)).toEqual([expect.objectContaining({ serviceStatus: 'failed' })]);
    // The service method asks the same gate, and says so at once.
    await expect(a.fulfillment.replayDeadLetter(`fulfillment:${orderId}`)).rejects.toMatchObject({
      code: 'HUBTEL_STORE_CONFLICT',
    });
    expect(runs(orderId)).toBe(before);
  });

  it('item 2: one payment, one delivery, through a failing status check, a refusal, a second OrderId and a replay', async () => {
    const session = await toCart();
    const first = `first-${randomUUID()}`;
    // The status check fails for the whole re-check window of the first order.
    const outage = sandbox.faults.add({ match: { api: 'status' }, status: 503 });
    await session.pay({ orderId: first });
    expect((await rejected(first)).reason).toBe('NOT_CONFIRMED');
    expect((await a.fulfillment.listDeadLetters()).map((l) => l.id)).toContain(`payment:${first}`);
    outage.remove();

    // A second OrderId for the same session, on the other replica: the session is paid.
    const second = `second-${randomUUID()}`;
    const answer = await post(`${b.url}/api/fulfillment`, {
      OrderId: second,
      SessionId: session.sessionId,
      ExtraData: {},
      OrderInfo: null,
    });
    expect(answer.status).toBe(200);
    await eventually('the second order delivered', () => callbacksOf(second)[0]);
    expect(runs(second)).toBe(1);

    // The documented replay of the first payment check: confirmed, but the goods went out already.
    const replay = await cliReplay(`payment:${first}`);
    expect(replay.code).toBe(0);
    await eventually('the first order told its outcome', () => callbacksOf(first)[0]);
    await settled();
    expect(runs(first) + runs(second)).toBe(1);
    expect(callbacksOf(first)).toEqual([expect.objectContaining({ serviceStatus: 'success' })]);
    expect(callbacksOf(second)).toEqual([expect.objectContaining({ serviceStatus: 'success' })]);
  });

  it('item 3: a made-up OrderId sent first does not lock out the platform\'s own one: one delivery, both told "success"', async () => {
    const session = await toCart();
    // The session is paid, the platform's fulfillment request is still on its way.
    const { order } = await session.pay({ fault: { drop: true } });
    const madeUp = `made-up-${randomUUID()}`;
    const forged = await post(`${a.url}/api/fulfillment`, {
      OrderId: madeUp,
      SessionId: session.sessionId,
      ExtraData: {},
      OrderInfo: null,
    });
    expect(forged.status).toBe(200);
    await eventually('the made-up order delivered', () => callbacksOf(madeUp)[0]);

    // The platform's own request arrives, at the other replica.
    const genuine = await post(`${b.url}/api/fulfillment`, {
      OrderId: order.orderId,
      SessionId: session.sessionId,
      ExtraData: {},
      OrderInfo: null,
    });
    expect(genuine.status).toBe(200);
    await eventually("the platform's order told its outcome", () => callbacksOf(order.orderId)[0]);
    await settled();
    expect(runs(madeUp) + runs(order.orderId)).toBe(1);
    expect(callbacksOf(order.orderId)).toEqual([expect.objectContaining({ serviceStatus: 'success' })]);
  });

  it('item 3: OrderIds of one paid session sent at once to both replicas: one delivery, every one told "success"', async () => {
    const session = await toCart();
    const { order } = await session.pay({ fault: { drop: true } });
    const ids = [order.orderId, ...Array.from({ length: 5 }, () => `copy-${randomUUID()}`)];
    const answers = await Promise.all(
      ids.map((orderId, index) =>
        post(`${(index % 2 ? b : a).url}/api/fulfillment`, {
          OrderId: orderId,
          SessionId: session.sessionId,
          ExtraData: {},
          OrderInfo: null,
        }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(ids.map(() => 200));
    await eventually('every OrderId told', () => ids.every((id) => callbacksOf(id).length > 0) || undefined);
    await settled();
    expect(ids.reduce((sum, id) => sum + runs(id), 0)).toBe(1);
    for (const id of ids)
      expect(callbacksOf(id)).toEqual([expect.objectContaining({ serviceStatus: 'success' })]);
  });

  /**
   * An order recorded by a replica that runs no job, reported by the app (`complete(…, 'failed')`)
   * before a worker (started then, with its own queues) starts its run; `before` runs before that
   * worker starts, `then` once the run was refused.
   */
  async function reportedBeforeFirstStart(
    before: (sessionId: string, early: string) => Promise<void>,
    then: (context: {
      worker: Merchant;
      early: string;
      genuine: string;
      request: (orderId: string) => Record<string, unknown>;
    }) => Promise<void>,
  ) {
    const { statusCheck: _check, verification: _verification, ...trusting } = options(redis);
    const queues = { url: redisUrl, prefix: '{early}:bull' };
    const recorder = await startMerchant(
      'express',
      trusting,
      {},
      { logger: a.logger, imports: [HubtelBullmqModule.forRoot({ ...queues, work: false })] },
    );
    let worker: Merchant | undefined;
    let workerStore: RedisStore | undefined;
    try {
      const session = await toCart();
      const { order } = await session.pay({ fault: { drop: true } });
      const early = `early-${randomUUID()}`;
      const request = (orderId: string) => ({
        OrderId: orderId,
        SessionId: session.sessionId,
        ExtraData: {},
        OrderInfo: null,
      });
      expect((await post(`${recorder.url}/api/fulfillment`, request(early))).status).toBe(200);
      // Reported by the app before any worker started its run.
      await recorder.fulfillment.complete(early, 'failed');
      await before(session.sessionId, early);
      // Its own store client on the same Redis (stores.create() would empty it).
      workerStore = new RedisStore({ url: redisUrl });
      await workerStore.connect();
      worker = await startMerchant(
        'express',
        { ...trusting, store: workerStore },
        {},
        { logger: a.logger, imports: [HubtelBullmqModule.forRoot(queues)] },
      );
      const pipeline = worker.app.get<InboundPipeline>(SERVICE_APP_PIPELINE);
      await eventually(
        'its run refused',
        async () => (await pipeline.get('fulfillment', early))?.status === 'dead' || undefined,
      );
      await eventually('"failed" reported', () => callbacksOf(early)[0]);
      expect(worker.fulfiller.calls.get(early)).toBeUndefined();
      await then({ worker, early, genuine: order.orderId, request });
      expect(callbacksOf(early)).toEqual([expect.objectContaining({ serviceStatus: 'failed' })]);
      await pipeline.drain();
    } finally {
      await worker?.close();
      await recorder.close();
      await workerStore?.close();
    }
  }

  it("an order reported before its first start gives back the session delivery that start claimed: the platform's own OrderId still delivers", async () => {
    // A first start claims the session's delivery with its read of the outcome (one round trip).
    await reportedBeforeFirstStart(
      async () => undefined,
      async ({ worker, genuine, request }) => {
        // The platform's request for the same paid session: the session was not left claimed.
        expect((await post(`${worker.url}/api/fulfillment`, request(genuine))).status).toBe(200);
        await eventually("the platform's order delivered", () => callbacksOf(genuine)[0]);
        expect(worker.fulfiller.calls.get(genuine)).toBe(1);
        expect(callbacksOf(genuine)).toEqual([expect.objectContaining({ serviceStatus: 'success' })]);
      },
    );
  });

  it('an order reported while an earlier run of it held the session (stopped before settling it) tells the OrderIds that joined meanwhile its outcome', async () => {
    const joined = `joined-${randomUUID()}`;
    await reportedBeforeFirstStart(
      // What an earlier run left: the session claimed by the order, another OrderId joined to it
      // (told nothing yet: it waits for the delivering order's outcome), no outcome settled.
      async (sessionId, early) => {
        await redis.set(`${SERVICE_APP_KEYS.delivery}${sessionId}`, { orderId: early, others: [joined] });
      },
      async ({ worker }) => {
        await eventually('the joined OrderId told', () => callbacksOf(joined)[0]);
        expect(callbacksOf(joined)).toEqual([expect.objectContaining({ serviceStatus: 'failed' })]);
        expect(worker.fulfiller.calls.get(joined)).toBeUndefined();
      },
    );
  });

  it('item 5: a forged unpaid fulfillment request costs at most 6 status checks, and what it leaves expires in hours', async () => {
    const session = await toCart();
    const forgedId = `forged-${randomUUID()}`;
    const before = new Set(await redis.client.keys('*'));
    const mark = Math.max(0, ...sandbox.requests().map((r) => r.id));
    const forged = await post(`${b.url}/api/fulfillment`, {
      OrderId: forgedId,
      SessionId: session.sessionId,
      ExtraData: {},
      OrderInfo: { Status: 'Paid' },
    });
    expect(forged.status).toBe(200);
    expect((await rejected(forgedId)).reason).toBe('NOT_PAID');
    await settled();
    expect(statusChecksSince(mark)).toBeGreaterThanOrEqual(2);
    expect(statusChecksSince(mark)).toBeLessThanOrEqual(6);
    expect(runs(forgedId)).toBe(0);
    expect(callbacksOf(forgedId)).toEqual([]);

    // Every key the forgery left expires within hours (7 days before).
    // Every key the forgery left expires within hours (7 days before): the store's by their TTL,
    // BullMQ's (its finished runs' jobs) by BullMQ, which removes a completed job after its
    // removeOnComplete age.
    const queue = (a.app.get<InboundPipeline>(SERVICE_APP_PIPELINE).runner as BullmqJobRunner).queue(
      'service-app',
    );
    const jobs = `${BULLMQ_RUNNER_DEFAULTS.prefix}:service-app:`;
    const left = (await redis.client.keys('*')).filter((key) => !before.has(key));
    expect(left.length).toBeGreaterThan(0);
    for (const key of left) {
      const ttl = await redis.client.pttl(key);
      if (ttl === -1 && key.startsWith(jobs)) {
        const job = await queue.getJob(key.slice(jobs.length));
        expect({ key, state: await job?.getState() }).toEqual({ key, state: 'completed' });
        const keptS = (job!.opts.removeOnComplete as { age?: number } | undefined)?.age;
        expect({ key, expires: keptS !== undefined && keptS * 1000 <= 6 * 3600_000 }).toEqual({
          key,
          expires: true,
        });
      } else {
        expect({ key, expires: ttl > 0 && ttl <= 6 * 3600_000 }).toEqual({ key, expires: true });
      }
    }
  });
});
