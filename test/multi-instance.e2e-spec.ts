/*
 * Durable on Redis, end to end: two replicas of a merchant app (test/support/replica-app.ts), each
 * its own process, sharing Redis (the records, and the BullMQ queues its jobs run on) with the
 * sandbox CLI as the platform in a third process; everything over real HTTP, crashes as kill -9.
 * Every test runs on one Redis and on a 3-master Redis Cluster (test/support/replica-system.ts).
 * What a handler did is counted where it shows: the SMS the sandbox received, the callbacks the
 * receiver got, and the `HANDLED` / `DONE` line each handler run prints.
 *
 * Then the BullMQ schedules: retries to a dead letter (on the same two replicas), a deferred
 * re-check and reconciliation (on replicas started per test with the settings it needs): on the
 * file's sandbox and Redis, one start of each for all. Then a request recorded while its job
 * could not be queued, and named accounts (below). The example app (src/main.ts) as two processes on one Redis, its
 * invoice outliving the kill -9 of the replica that made it: test/docs-commands.e2e-spec.ts
 * (docs/quick-start.md's two replicas).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CheckoutEvents } from 'nestjs-hubtel/checkout';
import {
  buildCheckoutCallback,
  buildFulfillmentRequest,
  buildServiceFlowRequest,
  sendCheckoutCallback,
  sendFulfillmentRequest,
  sendJson,
  type CheckoutInvoiceLike,
} from 'nestjs-hubtel/testing';
import { Redis } from 'ioredis';
import { type JobRecord } from '#internal';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { SERVICE_APP_JOBS, SERVICE_APP_KEYS } from '../libs/service-app/src/service-app.constants.js';
import { callbackBody } from './support/checkout-harness.js';
import { eventually, type AppProcess, type SandboxProcess } from './support/multi-process.js';
import { RedisServer } from './support/redis-server.js';
import {
  LOCK_MS,
  ReplicaSystem,
  STALLED_MS,
  TAKEOVER_BOUND_MS,
  TOPOLOGIES,
  fileSandbox,
  fileSpaces,
  id,
  inBatches,
  letters,
  pause,
  type RedisSpace,
} from './support/replica-system.js';

// The sandbox CLI serving north too (its own keys and POS Sales ID), for the accounts' tests (the
// others use the default account, which it serves as ever).
const sandbox = fileSandbox({ args: ['--accounts', 'north'] });
afterAll(() => sandbox.stop(), 60_000);
// Each topology's Redis, the cluster's started while the first system runs.
const spaces = fileSpaces();
afterAll(() => spaces.dispose(), 60_000);

for (const topology of TOPOLOGIES)
  topology.binary.describe(
    `two replicas in separate processes on ${topology.name}, the sandbox in a third`,
    () => {
      const system = new ReplicaSystem(topology, { sandbox: sandbox.get, space: spaces.get });
      let a: AppProcess;
      let b: AppProcess;
      const other = (app: AppProcess) => (app === a ? b : a);

      beforeAll(async () => {
        await system.start();
        [a, b] = await Promise.all([system.replica('a'), system.replica('b')]);
      }, 180_000);

      afterAll(() => system.dispose(), 60_000);
      // A test that failed after a kill (or with Redis down) leaves the next one what it expects.
      afterEach(async () => {
        const restarted = await system.space.ensureUp();
        await system.receiver.up();
        for (const app of [a, b]) if (app && !app.process.running) await app.restart();
        if (restarted) await Promise.all([a, b].map((app) => system.usable(app)));
      }, 120_000);

      it(`a replica killed inside a paid handler: the other takes the job over within lockDurationMs + stalledIntervalMs (${LOCK_MS} + ${STALLED_MS} ms), runs only the unfinished handler, once`, async () => {
        // `hang-…`: the first run of the `fulfil` handler never returns; the receipt handler before
        // it succeeds (its SMS sent).
        const ref = id('hang');
        await system.createInvoice(a, ref, 7);
        const body = await system.paidCallback(ref);
        const from = [a.output.mark, b.output.mark];
        expect((await sendCheckoutCallback(a.url, body)).status).toBe(200);
        const hung = await system.whichOf([a, b], 'HANGING', 'fulfil', ref, { from });
        const taker = other(hung);
        const takerFrom = taker.output.mark;
        const killedAt = Date.now();
        await hung.kill();

        await system.waitFor(taker, 'HANDLED', 'fulfil', ref, { from: takerFrom, timeoutMs: 60_000 });
        expect(Date.now() - killedAt).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
        // Taken over: the killed replica starts again meanwhile (a run there would count below).
        const restarted = hung.restart();
        await system.waitFor(taker, 'DONE', 'fulfil', ref, { from: takerFrom });
        await system.settled('checkout', ref);
        // Time for another run, had there been one.
        await Promise.all([restarted, pause(1_000)]);

        // Run again where it died (at least once, as the README says), only there: once per replica.
        expect(system.runsOn('fulfil', ref)).toEqual({ [hung.name]: 1, [taker.name]: 1 });
        expect(system.runs('fulfil', ref, 'DONE')).toBe(1);
        // The receipt handler had succeeded before the kill: never run again.
        expect(system.runs('receipt', ref)).toBe(1);
        expect(await system.receipts(ref)).toBe(1);
        // Taken over as the same BullMQ job (stalled once, on the killed replica), not a new one.
        expect(await system.bullmqJobs('checkout', 'hubtel.checkout.paid', ref)).toEqual([
          expect.objectContaining({ state: 'completed', stalledCounter: 1 }),
        ]);
      }, 120_000);

      it(`a replica killed inside a fulfillment handler: the other delivers the order within lockDurationMs + stalledIntervalMs (${LOCK_MS} + ${STALLED_MS} ms), its callback is sent once`, async () => {
        const orderId = letters('hang');
        const from = [a.output.mark, b.output.mark];
        await system.order(orderId, a, b);
        const hung = await system.whichOf([a, b], 'HANGING', 'deliver', orderId, { from });
        const taker = other(hung);
        const takerFrom = taker.output.mark;
        const killedAt = Date.now();
        await hung.kill();

        await system.waitFor(taker, 'HANDLED', 'deliver', orderId, { from: takerFrom, timeoutMs: 60_000 });
        expect(Date.now() - killedAt).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
        // Taken over: the killed replica starts again meanwhile (a run there would count below).
        const restarted = hung.restart();
        await eventually('the callback', () => (system.receiver.of(orderId).length > 0 ? true : undefined));
        await system.settled('service-app', orderId);
        // Time for a second callback, had one been sent (the first was accepted at once).
        await Promise.all([restarted, pause(1_000)]);

        expect(system.receiver.of(orderId)).toEqual([
          expect.objectContaining({
            OrderId: orderId,
            ServiceStatus: 'success',
            MetaData: { deliveredBy: taker.name },
          }),
        ]);
        expect(system.runsOn('deliver', orderId)).toEqual({ [hung.name]: 1, [taker.name]: 1 });
        // Taken over as the same BullMQ job (stalled on the killed replica, run by the other).
        expect(await system.bullmqJobs('service-app', 'fulfillment', orderId)).toEqual([
          expect.objectContaining({ state: 'completed', stalledCounter: 1 }),
        ]);
      }, 120_000);

      it('2 × 60 copies of one paid callback over both replicas at once, then 100 more once it was handled: each handler runs once, one SMS', async () => {
        const ref = id('copies');
        await system.createInvoice(b, ref, 25);
        const body = await system.paidCallback(ref);
        const copies = (count: number, concurrency: number) =>
          inBatches(Array.from({ length: count }), concurrency, async (_, index) => {
            const answer = await sendCheckoutCallback(index % 2 === 0 ? a.url : b.url, body, {
              timeoutMs: 30_000,
            });
            return answer.status;
          });

        // All at once: the copies race each other for the record.
        expect(await copies(120, 120)).toEqual(Array(120).fill(200));
        await system.settled('checkout', ref);
        // Copies that come after the handlers ran find them done.
        expect(await copies(100, 25)).toEqual(Array(100).fill(200));
        await system.settled('checkout', ref);
        await pause(1_000);
        expect(system.runs('receipt', ref)).toBe(1);
        expect(system.runs('fulfil', ref)).toBe(1);
        expect(await system.receipts(ref)).toBe(1);
      }, 120_000);

      it('a USSD session started on replica 1 continues on replica 2, and ends back on 1', async () => {
        const sessionId = id('ussd');
        const { prompt, bundles, cart } = await system.buyBundle(sessionId, a, b);

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
        // On a cluster, the records of those jobs and sessions lie on more than one master.
        if (system.space.keysPerMaster)
          expect(
            (await system.space.keysPerMaster()).filter((count) => count > 0).length,
          ).toBeGreaterThanOrEqual(2);
      }, 60_000);

      it('a fulfillment whose callback receiver is down, the replica retrying it killed, the receiver back: the callback arrives once', async () => {
        await system.receiver.down();
        const orderId = letters('order');
        const from = [a.output.mark, b.output.mark];
        try {
          await system.order(orderId, a, b);
          // The order is delivered, and its callback keeps failing (nobody listens there).
          const deliveredBy = await system.whichOf([a, b], 'DONE', 'deliver', orderId, { from });
          const failing = new RegExp(`Job callback \\S*${orderId}\\S* failed \\(attempt 2/`);
          const retrying = await Promise.race(
            [a, b].map((app, index) => app.output.waitFor(failing, { from: from[index] }).then(() => app)),
          );
          await retrying.kill();
          await system.receiver.up();

          // The replica left takes the callback's BullMQ job (delayed for its retry, or stalled on
          // the killed replica) and gets it accepted.
          const record = await eventually(
            'the callback to be accepted',
            async () => {
              const response = await fetch(`${other(retrying).url}/replica/orders/${orderId}`);
              const status = (await response.json()) as { callback?: { status: string } };
              return status.callback?.status === 'done' ? status : undefined;
            },
            { timeoutMs: 60_000, intervalMs: 200 },
          );
          // Accepted: the killed replica starts again meanwhile (a second callback would count below).
          const restarted = retrying.restart();
          await system.settled('service-app', orderId);
          await Promise.all([restarted, pause(1_000)]);

          expect(record.callback).toMatchObject({ serviceStatus: 'success', status: 'done' });
          expect(system.receiver.of(orderId)).toEqual([
            expect.objectContaining({
              OrderId: orderId,
              ServiceStatus: 'success',
              MetaData: { deliveredBy: deliveredBy.name },
            }),
          ]);
          expect(system.runs('deliver', orderId)).toBe(1);
        } finally {
          await system.receiver.up();
        }
      }, 120_000);

      it('Redis stopped under load: 503s and no 500, nothing handled meanwhile; Redis back: every recorded callback handled, once unless its job may have run in the outage', async () => {
        const refs = Array.from({ length: 100 }, (_, index) => id(`outage${index}`));
        await inBatches(refs, 10, (ref, index) => system.createInvoice(index % 2 ? a : b, ref, 10 + index));
        const bodies = await inBatches(refs, 10, (ref) => system.paidCallback(ref));
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
        await eventually('some callbacks under way', () => (sent >= 40 ? true : undefined), {
          intervalMs: 5,
        });
        await system.space.stop();
        await load;
        // While it is down, every callback not recorded yet is sent (again): all refused for now.
        const unrecorded = () => refs.filter((ref) => !answers.get(ref)!.includes(200));
        const whileDown = await Promise.all(unrecorded().map((ref) => send(refs.indexOf(ref))));
        const handledWhileDown = refs.filter((ref) => system.runs('receipt', ref) > 0);
        const smsWhileDown = new Set((await system.sandbox.messages()).map((m) => m.content));

        const all = [...answers.values()].flat();
        expect(all.filter((status) => status !== 200 && status !== 503)).toEqual([]);
        expect(whileDown.length).toBeGreaterThanOrEqual(20);
        expect(new Set(whileDown)).toEqual(new Set([503]));
        // Nothing refused was handled: no handler ran, no SMS went out, for a callback never answered 200.
        for (const ref of unrecorded()) {
          expect(handledWhileDown).not.toContain(ref);
          expect(smsWhileDown.has(`Receipt ${ref}`)).toBe(false);
        }

        // The jobs recorded before the outage may have run in it; the others are recorded after it.
        const recordedBefore = new Set(refs.filter((ref) => answers.get(ref)!.includes(200)));
        // Redis back: the platform keeps re-sending what was not acknowledged, until it is.
        await system.space.restart();
        await eventually(
          'every callback acknowledged',
          async () => {
            const pending = unrecorded();
            await Promise.all(pending.map((ref) => send(refs.indexOf(ref))));
            return unrecorded().length === 0 ? true : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 200 },
        );
        await system.settled('checkout');
        await eventually(
          'every receipt',
          async () => ((await system.receiptsOf(refs)).every((n) => n > 0) ? true : undefined),
          { timeoutMs: 60_000, intervalMs: 200 },
        );
        await pause(1_000);

        expect([...answers.values()].flat().filter((status) => status !== 200 && status !== 503)).toEqual([]);
        // Once each, but for what docs/redis.md allows: a job running while Redis was away past its lock
        // (LOCK_MS) is taken over, and its handlers may run again. The outage lasts as long as the load
        // takes to be refused (on a loaded machine, past the lock), so a second run is allowed to the
        // jobs recorded before it only; those recorded once Redis was back (20 at least) run once.
        const receipts = await system.receiptsOf(refs);
        const handled = refs.map((ref, index) => ({
          ref,
          runs: system.runs('receipt', ref),
          receipts: receipts[index]!,
          recordedBefore: recordedBefore.has(ref),
        }));
        const after = handled.filter((h) => !h.recordedBefore);
        expect(after.length).toBeGreaterThanOrEqual(20);
        expect(after).toEqual(after.map((h) => ({ ...h, runs: 1, receipts: 1 })));
        expect(handled.filter((h) => h.runs < 1 || h.receipts < 1)).toEqual([]);
      }, 180_000);

      it(`Redis killed while a handler runs, back within lockDurationMs (${LOCK_MS} ms): the run is recorded once Redis answers, never repeated`, async () => {
        // `hold-…`: the receipt handler sent its SMS and holds (HOLD_MS) before returning: Redis dies meanwhile.
        const ref = id('hold');
        await system.createInvoice(a, ref, 15);
        const from = [a.output.mark, b.output.mark];
        await system.sandbox.post(`invoices/${ref}/pay`, {});
        await eventually('the receipt', async () => ((await system.receipts(ref)) > 0 ? true : undefined), {
          intervalMs: 20,
        });
        await system.space.stop();
        await Promise.race(
          [a, b].map((app, index) =>
            app.output.waitFor(new RegExp(`^RELEASED ${ref}$`, 'm'), { from: from[index] }),
          ),
        );
        await system.space.restart();
        await system.settled('checkout', ref);
        await pause(1_000);

        expect(system.runs('receipt', ref)).toBe(1);
        expect(system.runs('fulfil', ref)).toBe(1);
        expect(await system.receipts(ref)).toBe(1);
      }, 120_000);

      it('a handler that always throws is retried with backoff across replicas and dead-lettered once; the handler that succeeded is never run again', async () => {
        // `fail-…`: the `fulfil` handler always throws (3 attempts); the receipt before it succeeds.
        const ref = id('fail');
        await system.createInvoice(a, ref);
        await system.sandbox.post(`invoices/${ref}/pay`, {});
        await eventually('the dead letter', () => (system.deadLetters(ref).length > 0 ? true : undefined));
        await system.settled('checkout', ref);
        // Long enough for any second dead letter or extra run (a retry is 200-400 ms away) to show.
        await pause(1_500);

        expect(system.runs('fulfil', ref, 'FAILED')).toBe(3);
        expect(system.runs('fulfil', ref, 'DONE')).toBe(0);
        expect(system.deadLetters(ref)).toEqual([{ key: expect.stringContaining(ref), attempts: 3 }]);
        expect(system.runs('receipt', ref)).toBe(1);
        expect(await system.receipts(ref)).toBe(1);
        // One BullMQ job for the run (visible to BullMQ tools), retried inside BullMQ, then failed
        // for good with the dead letter's reason.
        const jobs = await system.bullmqJobs('checkout', 'hubtel.checkout.paid', ref);
        expect(jobs).toEqual([
          expect.objectContaining({
            id: expect.stringMatching(/@1$/),
            state: 'failed',
            attemptsMade: 3,
            failedReason: expect.stringContaining('always fails'),
          }),
        ]);
      }, 90_000);
    },
  );

for (const topology of TOPOLOGIES)
  topology.binary.describe(`BullMQ schedules across replicas started per test, on ${topology.name}`, () => {
    const system = new ReplicaSystem(topology, { sandbox: sandbox.get, space: spaces.get });
    /** This test's replicas (killed after it). */
    let replicas: AppProcess[] = [];

    beforeAll(async () => {
      await system.start();
      // The tests above leave records and invoices (pending ones a reconciler would check).
      await system.space.flush();
      await system.sandbox.post('reset');
    }, 120_000);
    afterAll(() => system.dispose(), 60_000);
    afterEach(async () => {
      await Promise.all(replicas.map((replica) => replica.kill()));
      replicas = [];
      // Each test starts from an empty Redis and a sandbox that has seen nothing.
      await system.space.flush();
      await system.sandbox.post('reset');
    }, 60_000);

    async function replica(name: string, env: Record<string, string> = {}): Promise<AppProcess> {
      const started = await system.replica(name, env);
      replicas.push(started);
      return started;
    }

    it('a paid callback the status check does not show yet waits as a delayed BullMQ job: its replica killed, a replica started later checks once per due time and confirms it', async () => {
      // Checked at the callback, then re-checked twice (2 s, then 4 s later).
      const env = { RECHECK_MS: '2000' };
      const a = await replica('a', env);
      const ref = id('late');
      const created = await system.createInvoice(a, ref);
      // A "Success" callback for the invoice reaches a before the status check shows any payment.
      const answer = await fetch(`${a.url}/hubtel/checkout/callback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(callbackBody({ ref, checkoutId: created.checkoutId, amount: 10 })),
      });
      expect(answer.status).toBe(200);

      // Checked once (not paid yet), then deferred: a delayed job in Redis, not a wait in a.
      const confirmations = await eventually('a delayed confirmation job', async () => {
        const jobs = await system.bullmqJobs('checkout', 'hubtel.checkout.confirm', ref);
        return jobs.some((job) => job.state === 'delayed') ? jobs : undefined;
      });
      expect(confirmations).toEqual([expect.objectContaining({ state: 'delayed' })]);
      expect(await system.statusChecks()).toBe(1);
      await a.kill();

      // A replica that did not exist when the job was deferred: it checks at the due time (still
      // not paid) and defers again.
      const b = await replica('b', env);
      await eventually('the second status check', async () =>
        (await system.statusChecks()) >= 2 ? true : undefined,
      );
      expect(await system.receipts(ref)).toBe(0);
      // The payment shows in the status check now (no callback for it).
      await system.sandbox.post(`invoices/${ref}/pay`, { deliver: false });
      await system.waitFor(b, 'DONE', 'receipt', ref);
      await system.settled('checkout', ref);
      // Time for a second receipt or check, had the job run twice.
      await pause(1_000);

      expect(await system.receipts(ref)).toBe(1);
      expect(system.runsOn('receipt', ref)).toEqual({ b: 1 });
      // One status check per due time (the callback's and two re-checks), not one per replica.
      expect(await system.statusChecks()).toBe(3);
    }, 90_000);

    it('two replicas reconciling: each pending invoice is status-checked once per due time, by one scheduled pass at a time', async () => {
      const env = { RECONCILE_MS: '300' };
      const [a, b] = await Promise.all([replica('a', env), replica('b', env)]);
      const refs = [id('rec'), id('rec'), id('rec')];
      for (const ref of refs) await system.createInvoice(a, ref);
      const checksOf = async (ref: string) =>
        (await system.store.get<{ checks: number }>(`hubtel:checkout:watch:${ref}`))?.value.checks ?? 0;
      // Several due times pass for every invoice.
      await eventually(
        'every invoice checked 4 times',
        async () =>
          (await Promise.all(refs.map(checksOf))).every((checks) => checks >= 4) ? true : undefined,
        { intervalMs: 100 },
      );
      // Stopped gracefully: a pass under way finishes, so every claimed check was asked.
      await Promise.all([a.stop(), b.stop()]);
      const claimed = (await Promise.all(refs.map(checksOf))).reduce((sum, checks) => sum + checks, 0);

      // One status check per due time of each invoice (a claim each), whichever replica made it.
      expect(await system.statusChecks()).toBe(claimed);
      // The passes were one BullMQ job scheduler shared by both replicas, not a timer in each.
      const { queue, close } = system.space.queue('checkout-reconcile');
      try {
        expect(await queue.getJobSchedulers()).toEqual([
          expect.objectContaining({ key: 'checkout-reconcile', every: 300 }),
        ]);
      } finally {
        await close();
      }
    }, 90_000);
  });

/*
 * A request recorded while its job could not be queued (issue 30, item 1): the record is written,
 * the BullMQ add fails (BullMQ's Redis is down while the records' Redis answers), the app answers
 * 503, and the platform's retry of the same request gets the job run, once. For a fulfillment
 * request (its payment check first) and checkout callbacks (paid, and failed), on replica processes
 * (test/support/replica-app.ts) with the sandbox CLI as the platform:
 * - on one Redis: BullMQ on a Redis of its own, killed (append-only: it comes back with its jobs);
 * - on a 3-master Redis Cluster: the master of the queues' slot killed for a few seconds (less than
 *   the cluster's node time-out), the records' keys on the other two.
 * The retry goes to a replica started after the queues are back: a replica that lived through the
 * outage may run the job too (exactly once either way), but need not.
 */

/** BullMQ's Redis taken away while the records' Redis answers. */
interface QueueOutage {
  /** The replicas' environment for it. */
  env: Record<string, string>;
  /** True when every key is served by a server that stays up. */
  staysUp(keys: string[]): Promise<boolean>;
  down(): Promise<void>;
  up(): Promise<void>;
  dispose(): Promise<void>;
}

/** One Redis: BullMQ on a second, append-only server, killed and restarted. */
async function ownQueueRedis(): Promise<QueueOutage> {
  const queues = await RedisServer.start({ appendOnly: true });
  return {
    env: { BULLMQ_REDIS_URL: queues.url },
    staysUp: async () => true,
    down: () => queues.stop(),
    up: () => queues.restart(),
    dispose: () => queues.dispose(),
  };
}

/** A cluster: the master that holds the queues' slot, killed and restarted (append-only). */
async function queueMaster(space: RedisSpace): Promise<QueueOutage> {
  const ask = async <T>(call: (node: Redis) => Promise<T>): Promise<T> => {
    const node = new Redis(space.servers.find((server) => server.running)!.url, { maxRetriesPerRequest: 1 });
    try {
      return await call(node);
    } finally {
      node.disconnect();
    }
  };
  const owners = await ask((node) => node.cluster('SLOTS'));
  const ownerOf = async (key: string) => {
    const slot = Number(await ask((node) => node.cluster('KEYSLOT', key)));
    const port = owners.find(([from, to]) => slot >= from && slot <= to)![2]![1];
    return space.servers.find((server) => server.port === port)!;
  };
  const master = await ownerOf(`${BULLMQ_RUNNER_DEFAULTS.prefix}:service-app:id`);
  return {
    env: {},
    staysUp: async (keys) => (await Promise.all(keys.map(ownerOf))).every((owner) => owner !== master),
    down: () => master.stop(),
    async up() {
      await master.restart();
      await eventually('the cluster to be ok', async () => {
        const states = await Promise.all(
          space.servers.map((server) => {
            const node = new Redis(server.url, { maxRetriesPerRequest: 1 });
            return node.cluster('INFO').finally(() => node.disconnect());
          }),
        );
        return states.every((info) => /cluster_state:ok/.test(String(info))) ? true : undefined;
      });
    },
    dispose: async () => undefined,
  };
}

for (const topology of TOPOLOGIES)
  topology.binary.describe(
    `a request recorded but not queued runs on the platform's retry, on ${topology.name}`,
    () => {
      const system = new ReplicaSystem(topology, { sandbox: sandbox.get, space: spaces.get });
      let outage: QueueOutage;
      /** Where the first request goes, through every test's outage. */
      let a: AppProcess;
      /** The replicas a test started after its outage (killed after it). */
      let replicas: AppProcess[] = [];

      beforeAll(async () => {
        await system.start();
        outage = topology.name === 'one Redis' ? await ownQueueRedis() : await queueMaster(system.space);
        // Checkout callbacks count without the status check (the second test's failed one changes
        // the invoice before its record); the fulfillment's payment check is the service app's.
        a = await system.replica('a', { ...outage.env, CONFIRM_CALLBACKS: '0' });
      }, 120_000);
      afterAll(async () => {
        await system.dispose();
        await outage?.dispose();
      }, 60_000);
      afterEach(async () => {
        await Promise.all(replicas.map((replica) => replica.kill()));
        replicas = [];
        await outage.up().catch(() => undefined);
      }, 60_000);

      async function replica(name: string, env: Record<string, string> = {}): Promise<AppProcess> {
        const started = await system.replica(name, { ...outage.env, ...env });
        replicas.push(started);
        return started;
      }

      /** A fresh id (letters: logs mask digit runs) whose keys all stay up during the outage. */
      async function idUp(prefix: string, keysOf: (id: string) => string[]): Promise<string> {
        for (let tries = 0; tries < 100; tries++) {
          const candidate = letters(prefix);
          if (await outage.staysUp(keysOf(candidate))) return candidate;
        }
        throw new Error(`no ${prefix} id with its keys off the queues' master`);
      }

      const job = (pipeline: string, type: string, key: string) => `hubtel:${pipeline}:job:${type}:${key}`;
      const record = async (key: string) => (await system.store.get<JobRecord>(key))?.value;

      // One outage for both modules: each request recorded and answered 503, each retry run once.
      it('a fulfillment request and checkout callbacks (paid, and failed) answered 503 after their records: each retry is a duplicate that gets its job run once', async () => {
        const orderId = await idUp('order', (order) => [
          job('service-app', SERVICE_APP_JOBS.fulfillment, order),
          job('service-app', SERVICE_APP_JOBS.payment, order),
        ]);
        const sessionId = await idUp('session', (session) => [`${SERVICE_APP_KEYS.cart}${session}`]);
        await system.buyBundle(sessionId, a, a);
        await system.sandbox.post(`sessions/${sessionId}/pay`, { amount: 5, orderId });
        const request = buildFulfillmentRequest({ sessionId, orderId });
        const keysOf = (ref: string) => [
          `hubtel:checkout:invoice:${ref}`,
          job('checkout', CheckoutEvents.Paid, ref),
          job('checkout', CheckoutEvents.Failed, ref),
        ];
        const [paid, failed] = [await idUp('paid', keysOf), await idUp('failed', keysOf)];
        await system.createInvoice(a, paid);
        await system.createInvoice(a, failed);
        const paidCallback = await system.paidCallback(paid);
        const failedCallback = buildCheckoutCallback({
          invoice: await system.sandbox.get<CheckoutInvoiceLike>(`invoices/${failed}`),
          outcome: 'failed',
        });

        await outage.down();
        expect((await sendFulfillmentRequest(a.url, request)).status).toBe(503);
        expect((await sendCheckoutCallback(a.url, paidCallback)).status).toBe(503);
        expect((await sendCheckoutCallback(a.url, failedCallback)).status).toBe(503);
        // Recorded, never run: nothing but the platform's retry is left to ask (the fulfillment's
        // record is its payment check).
        expect(await record(job('service-app', SERVICE_APP_JOBS.payment, orderId))).toMatchObject({
          status: 'pending',
          attempts: 0,
        });
        expect(await record(job('checkout', CheckoutEvents.Paid, paid))).toMatchObject({ attempts: 0 });
        expect(await record(job('checkout', CheckoutEvents.Failed, failed))).toMatchObject({ attempts: 0 });
        await outage.up();

        const b = await replica('b', { CONFIRM_CALLBACKS: '0' });
        const retried = await sendFulfillmentRequest<{ Status: string }>(b.url, request);
        expect(retried.status).toBe(200);
        expect(retried.body.Status).toBe('duplicate');
        expect((await sendCheckoutCallback(b.url, paidCallback)).status).toBe(200);
        expect((await sendCheckoutCallback(b.url, failedCallback)).status).toBe(200);
        await eventually(
          'the order delivered and both callbacks handled',
          () =>
            system.receiver.of(orderId).length > 0 &&
            system.runs('fulfil', paid, 'DONE') > 0 &&
            system.runs('failed', failed, 'DONE') > 0
              ? true
              : undefined,
          { timeoutMs: 30_000 },
        );
        await system.settled('service-app', orderId);
        await system.settled('checkout');
        // Room for a second run or callback, had a job been queued twice.
        await pause(1_500);

        expect(system.runs('deliver', orderId, 'DONE')).toBe(1);
        expect(system.receiver.of(orderId)).toEqual([
          expect.objectContaining({ OrderId: orderId, ServiceStatus: 'success' }),
        ]);
        expect(system.runs('receipt', paid, 'DONE')).toBe(1);
        expect(system.runs('fulfil', paid, 'DONE')).toBe(1);
        expect(await system.receipts(paid)).toBe(1);
        expect(system.runs('failed', failed, 'DONE')).toBe(1);
      }, 120_000);
    },
  );

/*
 * Named accounts on two replicas in separate processes, on one real Redis and on a 3-master Redis
 * Cluster (records, and the BullMQ queues the jobs run on), the sandbox CLI serving the default
 * account and `north` in a third process (test/support/replica-app.ts with ACCOUNTS=north for
 * checkout and SERVICE_APP_ACCOUNT=north for the service app): a checkout invoice is confirmed with
 * its own account whichever replica its callback reaches and runs its jobs; a service-app order of
 * north's is verified with north's keys and called back with north's credentials whichever
 * replica runs it, a kill -9 included. One system per topology for both modules' accounts (the
 * single-process cases: test/checkout-accounts.e2e-spec.ts, test/service-app-accounts.e2e-spec.ts).
 */

/** Records each fulfillment callback with the Basic auth it came with. */
async function callbackReceiver() {
  const received: Array<{ authorization: string | undefined; body: Record<string, unknown> }> = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/callback')
        received.push({ authorization: req.headers.authorization, body: JSON.parse(raw) });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ResponseCode":"0000"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

interface CliAccount {
  name: string;
  credentials: { api: { clientId: string; clientSecret: string } };
  posSalesId: string;
}

for (const topology of TOPOLOGIES)
  topology.binary.describe(
    `named checkout and service-app accounts on two replicas, ${topology.name}, the sandbox in a third process`,
    () => {
      const system = new ReplicaSystem(topology, { sandbox: sandbox.get, space: spaces.get });
      const northCallback = { clientId: 'north-callback', clientSecret: 'north-callback-secret' };
      let platform: SandboxProcess;
      let receiver: Awaited<ReturnType<typeof callbackReceiver>>;
      let north: CliAccount;
      let a: AppProcess;
      let b: AppProcess;

      beforeAll(async () => {
        await system.start();
        // The tests above leave records and invoices; these start from an empty Redis.
        await system.space.flush();
        platform = system.sandbox;
        north = (platform.info as unknown as { accounts: CliAccount[] }).accounts.find(
          (x) => x.name === 'north',
        )!;
        receiver = await callbackReceiver();
        const env = {
          ACCOUNTS: 'north',
          SERVICE_APP_ACCOUNT: 'north',
          SERVICE_APP_ACCOUNT_OPTIONS: JSON.stringify({
            statusCheck: {
              ...north.credentials.api,
              posSalesId: north.posSalesId,
              url: platform.info.baseUrls.status,
            },
            callbackCredentials: northCallback,
            callbackUrl: receiver.url,
          }),
        };
        [a, b] = await Promise.all([system.replica('a', env), system.replica('b', env)]);
      }, 180_000);
      // Each test counts the status checks it caused.
      beforeEach(() => system.sandbox.post('reset'));

      afterAll(async () => {
        await receiver?.close();
        await system.dispose();
      }, 60_000);

      const info = () => system.sandbox.info;
      const northPos = () => info().accounts!.find((account) => account.name === 'north')!.posSalesId;
      const paidLines = (ref: string) =>
        system.replicas.flatMap((app) =>
          [...app.output.all.matchAll(new RegExp(`^PAID ${ref} (\\S+) by (\\S+)$`, 'gm'))].map((m) => m[1]),
        );
      const statusChecks = async () =>
        (await system.sandbox.get<Array<{ path: string; statusCode: number }>>('requests'))
          .filter((r) => /^\/transactions\/[^/]+\/status$/.test(r.path))
          .map((r) => `${r.path.split('/')[2]} ${r.statusCode}`);

      it("pays and confirms both accounts' invoices with their own keys, whichever replica gets the callback", async () => {
        const main = id('acct-main');
        const north = id('acct-north');
        await system.createInvoice(a, main, 10);
        const created = await sendJson<{ checkoutId: string }>(
          b.url,
          { clientReference: north, amount: 20 },
          { path: '/replica/accounts/north/invoices' },
        );
        expect(created.status).toBe(201);
        const invoices =
          await system.sandbox.get<Array<{ clientReference: string; account: string; callbackUrl: string }>>(
            'invoices',
          );
        expect(invoices.find((i) => i.clientReference === north)).toMatchObject({
          account: 'north',
          callbackUrl: `${b.url}/hubtel/checkout/callback/north`,
        });
        expect(invoices.find((i) => i.clientReference === main)!.account).toBe('default');

        // Each callback to the replica that did not create the invoice, on its account's path.
        const mainBody = await system.paidCallback(main);
        const northBody = await system.paidCallback(north);
        expect((await sendCheckoutCallback(b.url, mainBody)).status).toBe(200);
        expect(
          (await sendCheckoutCallback(a.url, northBody, { path: 'hubtel/checkout/callback/north' })).status,
        ).toBe(200);
        await eventually('both paid', async () =>
          paidLines(main).length && paidLines(north).length ? true : undefined,
        );
        await system.settled('checkout', north);
        await system.settled('checkout', main);
        expect(paidLines(main)).toEqual(['default']);
        expect(paidLines(north)).toEqual(['north']);
        expect((await statusChecks()).sort()).toEqual(
          [`${info().posSalesId} 200`, `${northPos()} 200`].sort(),
        );
        const record = await system.store.get<{ account: string; status: string }>(
          `hubtel:checkout:invoice:${north}`,
        );
        expect(record?.value).toMatchObject({ account: 'north', status: 'paid' });
        // Each receipt went out from its invoice's own SMS account (the sandbox knows whose keys).
        const receipts = await system.sandbox.get<Array<{ content: string; account: string }>>('messages');
        const receiptOf = (ref: string) => receipts.filter((m) => m.content === `Receipt ${ref}`);
        expect(receiptOf(main).map((m) => m.account)).toEqual(['default']);
        expect(receiptOf(north).map((m) => m.account)).toEqual(['north']);
      }, 120_000);

      it("a north invoice's callback on the default path is refused on either replica: nothing emitted", async () => {
        const north = id('acct-wrong');
        await sendJson(
          a.url,
          { clientReference: north, amount: 5 },
          { path: '/replica/accounts/north/invoices' },
        );
        const body = await system.paidCallback(north);
        for (const app of [a, b]) {
          const answer = await sendCheckoutCallback(app.url, body);
          expect([answer.status, answer.body]).toEqual([200, { received: true }]);
        }
        await system.settled('checkout', north);
        expect(paidLines(north)).toEqual([]);
        const record = await system.store.get<{ account: string; status: string }>(
          `hubtel:checkout:invoice:${north}`,
        );
        expect(record?.value).toMatchObject({ account: 'north', status: 'pending' });
      }, 60_000);

      // Last: it kills a replica.
      const step = async (app: AppProcess, path: string, body: unknown) => {
        const answer = await sendJson<Record<string, unknown>>(app.url, body, { path });
        return answer;
      };

      it("verifies north's order with north's keys and calls back with north's credentials, whichever replica runs it (a kill -9 included)", async () => {
        const sessionId = id('north-session');
        const orderId = id('hang-north');
        // The session moves between the replicas at every answer, on north's path.
        const flow = '/api/service-flow/north';
        expect((await step(a, flow, buildServiceFlowRequest({ sessionId }))).status).toBe(200);
        const bundles = await step(b, flow, buildServiceFlowRequest({ sessionId, message: '0244000111' }));
        expect(bundles.body).toMatchObject({ Message: expect.stringContaining('Bundle for 233244000111') });
        expect(
          (await step(a, flow, buildServiceFlowRequest({ sessionId, message: '1gb' }))).body,
        ).toMatchObject({
          Item: { Price: 5 },
        });
        await platform.post(`sessions/${sessionId}/pay`, { amount: 5, orderId, account: 'north' });

        // The cart is north's: on the default path it is refused, nothing recorded.
        const crossed = await step(b, '/api/fulfillment', buildFulfillmentRequest({ sessionId, orderId }));
        expect([crossed.status, (crossed.body as { code?: string }).code]).toEqual([
          409,
          'HUBTEL_WRONG_ACCOUNT',
        ]);

        // `hang-…`: the first run of the fulfillment handler never returns; its replica is killed.
        const from = [a.output.mark, b.output.mark];
        const accepted = await step(
          a,
          '/api/fulfillment/north',
          buildFulfillmentRequest({ sessionId, orderId }),
        );
        expect(accepted.body).toMatchObject({ OrderId: orderId, Status: 'received' });
        const hung = await system.whichOf([a, b], 'HANGING', 'deliver', orderId, { from });
        const taker = hung === a ? b : a;
        const takerFrom = taker.output.mark;
        await hung.kill();
        await system.waitFor(taker, 'DONE', 'deliver', orderId, {
          from: takerFrom,
          timeoutMs: TAKEOVER_BOUND_MS + 10_000,
        });
        const callback = await eventually('north callback', () =>
          receiver.received.find((c) => c.body.OrderId === orderId),
        );
        await system.settled('service-app', orderId);

        // Sent once, with north's callback credentials, the taker's outcome.
        expect(receiver.received.filter((c) => c.body.OrderId === orderId)).toHaveLength(1);
        expect(callback.authorization).toBe(
          `Basic ${Buffer.from(`${northCallback.clientId}:${northCallback.clientSecret}`).toString('base64')}`,
        );
        expect(callback.body).toMatchObject({
          SessionId: sessionId,
          ServiceStatus: 'success',
          MetaData: { deliveredBy: taker.name },
        });
        // None went to the default account's receiver.
        expect(system.receiver.of(orderId)).toEqual([]);
        // The payment was confirmed by the sandbox's status check on north's POS Sales ID (north's keys only there).
        const checks = (await platform.get<Array<{ path: string; statusCode: number }>>('requests')).filter(
          (r) => /^\/transactions\/[^/]+\/status/.test(r.path),
        );
        expect(checks.map((r) => [r.path.split('?')[0], r.statusCode])).toEqual([
          [`/transactions/${north.posSalesId}/status`, 200],
        ]);
        // The account-filtered handler ran for north's order, once (on whichever replica ran it).
        const accountLine = new RegExp(`^ACCOUNT north ${orderId} by `, 'gm');
        expect([a, b].reduce((n, app) => n + [...app.output.all.matchAll(accountLine)].length, 0)).toBe(1);
      }, 180_000);
    },
  );
