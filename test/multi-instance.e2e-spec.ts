/*
 * Durable on Redis, end to end: two replicas of a merchant app (test/support/replica-app.ts), each
 * its own process, sharing Redis (the records, and the BullMQ queues its jobs run on) with the
 * sandbox CLI as the platform in a third process; everything over real HTTP, crashes as kill -9.
 * Every test runs on one Redis and on a 3-master Redis Cluster (test/support/replica-system.ts).
 * What a handler did is counted where it shows: the SMS the sandbox received, the callbacks the
 * receiver got, and the `HANDLED` / `DONE` line each handler run prints.
 *
 * The BullMQ schedules (retries to a dead letter, deferred re-checks, reconciliation) are
 * test/bullmq-replicas.e2e-spec.ts, on the same replicas.
 */
import { sendCheckoutCallback } from 'nestjs-hubtel/testing';
import { eventually, type AppProcess } from './support/multi-process.js';
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
} from './support/replica-system.js';

/** The example merchant app, as `npm start` runs it. */
const EXAMPLE_APP = new URL('../src/main.ts', import.meta.url).pathname;

const sandbox = fileSandbox();
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
    },
  );

/*
 * The example merchant app itself (src/main.ts, configured by environment variables only, as
 * `npm start` is) in real-platform mode against the sandbox process: its shop keeps orders in
 * Redis (REDIS_URL) and runs its jobs on BullMQ there. Its kill -9 between the order and the
 * payment is this file's proof that an invoice outlives the instance that made it. On one Redis
 * only: on a cluster it would repeat what the replica tests above prove there (records outlive a
 * kill -9) and test/example-app-redis.e2e-spec.ts does (the example sells on a cluster).
 */
TOPOLOGIES[0]!.binary.describe('the example shop as two processes (src/main.ts), on one Redis', () => {
  const system = new ReplicaSystem(TOPOLOGIES[0]!, { sandbox: sandbox.get });
  let shop1: AppProcess;
  let shop2: AppProcess;

  beforeAll(async () => {
    await system.start();
    const { info } = system.sandbox;
    const env = {
      HUBTEL_CLIENT_ID: info.credentials.api.clientId,
      HUBTEL_CLIENT_SECRET: info.credentials.api.clientSecret,
      HUBTEL_SMS_CLIENT_ID: info.credentials.sms.clientId,
      HUBTEL_SMS_CLIENT_SECRET: info.credentials.sms.clientSecret,
      HUBTEL_SMS_SENDER_ID: 'Shop',
      HUBTEL_SMS_URL: info.baseUrls.sms,
      HUBTEL_CHECKOUT_URL: info.baseUrls.checkout,
      HUBTEL_STATUS_URL: info.baseUrls.status,
      HUBTEL_CALLBACK_URL: info.baseUrls.fulfillmentCallback,
      HUBTEL_POS_SALES_ID: info.posSalesId,
      ...system.space.env,
      NO_COLOR: '1',
    };
    [shop1, shop2] = await Promise.all([
      system.processes.app('shop1', { entry: EXAMPLE_APP, env }),
      system.processes.app('shop2', { entry: EXAMPLE_APP, env }),
    ]);
  }, 180_000);

  afterAll(() => system.dispose(), 60_000);

  it('an order placed on instance 1 before its kill -9 is paid after the restart: one receipt, and instance 2 sees it paid', async () => {
    const placed = await fetch(`${shop1.url}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ product: 'kente-mug', phone: '0244123456', name: 'Ama' }).toString(),
      redirect: 'manual',
    });
    expect(placed.status).toBe(303);
    // The order id is the invoice's reference: the newest invoice at the sandbox.
    const [invoice] = await system.sandbox.get<Array<{ clientReference: string }>>('invoices?limit=1');
    const orderId = invoice!.clientReference;

    await shop1.kill();
    await shop1.restart();
    await system.sandbox.post(`invoices/${orderId}/pay`, {});

    const order = await eventually(
      'the order paid and receipted, as instance 2 sees it',
      async () => {
        const response = await fetch(`${shop2.url}/api/orders/${orderId}`);
        const body = (await response.json()) as { status: string; receipt: { status: string } };
        return body.status === 'paid' && body.receipt.status === 'sent' ? body : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await system.settled('checkout', orderId);

    expect(order).toMatchObject({ status: 'paid', receipt: { status: 'sent' } });
    const receiptsOfOrder = (await system.sandbox.messages()).filter((m) => m.content.includes(orderId));
    expect(receiptsOfOrder).toHaveLength(1);
  }, 120_000);
});
