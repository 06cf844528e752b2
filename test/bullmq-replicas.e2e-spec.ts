/**
 * The BullMQ schedules across replica processes: the replicas of test/multi-instance.e2e-spec.ts
 * (test/support/replica-app.ts, one engine on Redis: the records in the store, every run a BullMQ
 * job), started per test with the settings it needs, on one Redis and on a 3-master Redis Cluster.
 * What is proven here: retries are BullMQ's, then one dead letter; a deferred re-check is a
 * delayed BullMQ job that outlives its replica; reconciliation is one pass per interval across
 * replicas. (Takeover after a kill -9, duplicates, sessions and outages:
 * test/multi-instance.e2e-spec.ts; a cluster connection the runner cannot use, refused at start-up:
 * test/bullmq.cluster.e2e-spec.ts, test/redis.cluster.e2e-spec.ts, test/example-app-redis.e2e-spec.ts.)
 */
import { eventually, type AppProcess } from './support/multi-process.js';
import { callbackBody } from './support/checkout-harness.js';
import { ReplicaSystem, TOPOLOGIES, fileSandbox, fileSpaces, id, pause } from './support/replica-system.js';

const sandbox = fileSandbox();
afterAll(() => sandbox.stop(), 60_000);
// Each topology's Redis, the cluster's started while the first system runs.
const spaces = fileSpaces();
afterAll(() => spaces.dispose(), 60_000);

for (const topology of TOPOLOGIES)
  topology.binary.describe(`BullMQ schedules across replica processes, on ${topology.name}`, () => {
    const system = new ReplicaSystem(topology, { sandbox: sandbox.get, space: spaces.get });
    /** This test's replicas (killed after it). */
    let replicas: AppProcess[] = [];

    beforeAll(() => system.start(), 120_000);
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

    it('a handler that always throws is retried with backoff across replicas and dead-lettered once; the handler that succeeded is never run again', async () => {
      const [a] = await Promise.all([replica('a'), replica('b')]);
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
