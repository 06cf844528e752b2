/**
 * Workers that come back (issue 30): the replicas of test/support/replica-app.ts after the Redis
 * they run their jobs on was away or came back empty.
 * - On a 3-master Redis Cluster, one master is killed while paid callbacks arrive (the one holding
 *   the BullMQ queues, or one holding only records), for as long as the cluster's node timeout
 *   (the 15 s against Redis's default 15 s; here 5 s against a node timeout set to 5 s):
 *   once the cluster is whole again, every callback the replicas acknowledged is handled once,
 *   within the takeover bound, by the replicas that ran all along (no restart). Before the fix, a
 *   run whose store reads failed while a master was away was charged attempts and dead-lettered
 *   within seconds.
 * - On the same cluster, Redis emptied under running replicas (a flush: as a restart without
 *   persistence or a failover to an empty replica leaves it): reconciliation goes on, and finds a
 *   payment the platform never reported. (On one Redis: the job scheduler created again after a
 *   flush, test/bullmq.job-runner.e2e-spec.ts; two replicas after a flush, test/store-loss.e2e-spec.ts.)
 */
import { sendCheckoutCallback } from 'nestjs-hubtel/testing';
import { eventually, type AppProcess, type RedisServer } from './support/multi-process.js';
import { redisClusterBinaries } from './support/redis-cluster.js';
import {
  TAKEOVER_BOUND_MS,
  TOPOLOGIES,
  ReplicaSystem,
  id,
  inBatches,
  pause,
} from './support/replica-system.js';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { bullmqJobId } from '../libs/bullmq/src/bullmq.jobs.js';
import type { JobRecord } from '#internal';

/** The cluster's cluster-node-timeout: a master away longer is marked failed. */
const NODE_TIMEOUT_MS = 5_000;
/** As long as the node timeout, as the 15 s were at Redis's default. */
const OUTAGE_MS = NODE_TIMEOUT_MS;
/** Paid callbacks acknowledged before the outage, and released once the cluster is whole again. */
const BEFORE = 24;
const AFTER = 20;

const clusterTopology = TOPOLOGIES.find((topology) => topology.binary === redisClusterBinaries)!;

clusterTopology.binary.describe('BullMQ workers on a 3-master Redis Cluster', () => {
  /** One system for the file: the outage's replicas are killed before the wipe's start. */
  const system = new ReplicaSystem(clusterTopology, { nodeTimeoutMs: NODE_TIMEOUT_MS });
  beforeAll(() => system.start(), 120_000);
  afterAll(() => system.dispose(), 60_000);

  describe('after a master outage', () => {
    let a: AppProcess;
    let b: AppProcess;

    beforeAll(async () => {
      // Reconciling too, as the example app does: a third worker on each replica.
      const env = { RECONCILE_MS: '5000' };
      [a, b] = await Promise.all([system.replica('a', env), system.replica('b', env)]);
    }, 180_000);
    // Not running on into the next describe, on the same system.
    afterAll(() => Promise.all([a, b].map((replica) => replica?.kill())), 60_000);

    const masters = [
      // Every BullMQ key of the default prefix is in the slot of its {hash tag}: one master holds them.
      { which: 'the master of the queues', pick: (queues: RedisServer) => queues },
      // Records on it fail for a while, while the queues work on.
      {
        which: 'another master',
        pick: (queues: RedisServer) => system.space.cluster!.servers.find((server) => server !== queues)!,
      },
    ];

    for (const { which, pick } of masters)
      it(`${which} killed for ${OUTAGE_MS / 1000} s under load: every acknowledged callback is handled once within the takeover bound after it returns`, async () => {
        const cluster = system.space.cluster!;
        const master = pick(await cluster.serverOf(BULLMQ_RUNNER_DEFAULTS.prefix));
        // Invoices for as many callbacks as the load may release (it stops AFTER callbacks after the
        // outage), all created before it: a replica may refuse to create one while a master is away.
        const prepared = Array.from({ length: 120 }, (_, index) => id(`${which.split(' ')[1]}${index}`));
        await inBatches(prepared, 10, (ref, index) =>
          system.createInvoice(index % 2 ? a : b, ref, 10 + index),
        );
        const bodies = new Map<string, Awaited<ReturnType<typeof system.paidCallback>>>();
        /** When each callback was first answered 200 (acknowledged: the platform stops re-sending it). */
        const acknowledged = new Map<string, number>();
        const statuses: number[] = [];
        const send = async (ref: string) => {
          if (acknowledged.has(ref)) return;
          const index = prepared.indexOf(ref);
          const answer = await sendCheckoutCallback((index % 2 ? a : b).url, bodies.get(ref), {
            timeoutMs: 30_000,
          }).catch(() => undefined); // no answer: sent again, as the platform does
          if (!answer) return;
          statuses.push(answer.status);
          if (answer.status === 200 && !acknowledged.has(ref)) acknowledged.set(ref, Date.now());
        };
        /** The callbacks released so far (paid at the platform): the ones every check below is about. */
        let released = 0;
        const sent = () => prepared.slice(0, released);
        const unacknowledged = () => sent().filter((ref) => !acknowledged.has(ref));

        /** How many were released when the cluster was whole again (none is, until it is). */
        let releasedWhenBack = Infinity;
        let releasing = true;
        let stopLoad = false;
        // Load: a new paid callback every 250 ms, before, during and after the outage (until AFTER of
        // them were released once the cluster is whole again); the platform re-sends every refused
        // one each 500 ms, until it is acknowledged.
        const load = Promise.all([
          (async () => {
            for (; released < prepared.length && !stopLoad; released++) {
              if (released >= releasedWhenBack + AFTER) break;
              const ref = prepared[released]!;
              const next = pause(250); // paying it at the platform is part of the 250 ms, not added
              bodies.set(ref, await system.paidCallback(ref));
              void send(ref);
              await next;
            }
            releasing = false;
          })(),
          (async () => {
            for (let round = 0; !stopLoad && round < 1_000; round++) {
              await inBatches(unacknowledged(), 5, send);
              if (!releasing && unacknowledged().length === 0) return;
              await pause(500);
            }
          })(),
        ]);
        await eventually('callbacks acknowledged before the outage', () =>
          acknowledged.size >= BEFORE ? true : undefined,
        );
        await master.stop();
        await pause(OUTAGE_MS);
        await master.restart();
        // A master away as long as the node timeout may have been marked failed: the cluster then
        // answers CLUSTERDOWN until the other masters clear that (twice the node timeout later).
        await cluster.untilOk(90_000);
        const whole = Date.now();
        releasedWhenBack = released;
        try {
          await eventually(
            'every callback acknowledged',
            () => (!releasing && unacknowledged().length === 0 ? true : undefined),
            { timeoutMs: 60_000 },
          );
        } finally {
          stopLoad = true;
          await load;
        }
        const refs = sent();

        // Each acknowledged callback's job ran to its end by the takeover bound after the cluster was
        // whole again, or after its acknowledgement when that was later: its record settled (a
        // receipt alone could come from reconciliation).
        const deadline = Math.max(whole, ...acknowledged.values()) + TAKEOVER_BOUND_MS;
        const open = async () => {
          const found: JobRecord[] = [];
          for await (const [key, entry] of system.store.scan<JobRecord>('hubtel:checkout:job:'))
            if (refs.some((ref) => key.includes(ref)) && entry.value.status !== 'done')
              found.push(entry.value);
          return found;
        };
        let left = await open();
        while (left.length > 0 && Date.now() < deadline) {
          await pause(200);
          left = await open();
        }
        // Where BullMQ has each job left, for the failure message.
        const { queue, close } = system.space.queue('checkout');
        const states = await Promise.all(
          left.map(async (job) => {
            const found = await queue.getJob(
              bullmqJobId(`hubtel:checkout:job:${job.type}:${job.key}`, job.run ?? 1),
            );
            const where = found
              ? `${await found.getState()}, attempts ${found.attemptsMade}, stalled ${found.stalledCounter}`
              : 'no BullMQ job';
            return `${job.type} ${job.key}: ${job.status}, attempts ${job.attempts} ${job.lastError ?? ''} (${where})`;
          }),
        ).finally(close);
        // A record with no BullMQ job was never queued (its add failed, and the re-sent callback found
        // the invoice paid meanwhile): not a worker that stalls, and its payment is counted below.
        expect(states.filter((state) => !state.endsWith('(no BullMQ job)'))).toEqual([]);
        await pause(1_000);

        expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
        // A job whose lock ran out in the outage was taken over (BullMQ counts it stalled): the
        // handler it was running, its success not yet written, may run again (docs/operations.md,
        // "the one running may be"). Every other job's handlers ran exactly once.
        const takenOver = new Set<string>();
        const checkout = system.space.queue('checkout');
        try {
          for await (const [key, entry] of system.store.scan<JobRecord>('hubtel:checkout:job:')) {
            const ref = refs.find((r) => key.includes(r));
            const { type, key: jobKey, run } = entry.value;
            const job = ref
              ? await checkout.queue.getJob(bullmqJobId(`hubtel:checkout:job:${type}:${jobKey}`, run ?? 1))
              : undefined;
            if (ref && (job?.stalledCounter ?? 0) > 0) takenOver.add(ref);
          }
        } finally {
          await checkout.close();
        }
        // Those paid once the cluster was whole had no job in the outage: never taken over.
        expect(refs.slice(releasedWhenBack).filter((ref) => takenOver.has(ref))).toEqual([]);
        const receipts = await system.receiptsOf(refs);
        const wrong = refs
          .map((ref, i) => [ref, system.runs('receipt', ref), receipts[i]!, takenOver.has(ref)] as const)
          .filter(([, runs, sms, again]) => (again ? runs < 1 || sms < 1 : runs !== 1 || sms !== 1));
        expect(wrong).toEqual([]);
      }, 300_000);
  });

  describe('Reconciliation after Redis came back empty', () => {
    let replicas: AppProcess[] = [];

    // The outage's invoices never released (never paid) are no business of this test's reconciliation.
    beforeAll(() => system.space.flush(), 60_000);

    afterAll(() => Promise.all(replicas.map((replica) => replica.kill())), 60_000);

    it('a payment the platform never reported is found by reconciliation after the store was wiped under running replicas', async () => {
      const env = { RECONCILE_MS: '500' };
      replicas = await Promise.all([system.replica('a', env), system.replica('b', env)]);
      const [a] = replicas as [AppProcess, AppProcess];
      // Reconciling before the wipe: an unreported payment is found.
      const before = id('before');
      await system.createInvoice(a, before);
      await system.sandbox.post(`invoices/${before}/pay`, { deliver: false });
      await eventually('the payment before the wipe found', async () =>
        (await system.receipts(before)) > 0 ? true : undefined,
      );

      // Everything gone (the job scheduler too), the replicas running on.
      await system.space.flush();
      const after = id('after');
      await system.createInvoice(a, after);
      await system.sandbox.post(`invoices/${after}/pay`, { deliver: false });

      // Found by a pass soon after (the scheduler is looked for every interval, at least each second).
      await eventually(
        'the payment after the wipe found',
        async () => ((await system.receipts(after)) > 0 ? true : undefined),
        { timeoutMs: 30_000 },
      );
      await pause(1_000);
      expect(await system.receipts(after)).toBe(1);
      expect(replicas.map((replica) => replica.output.all).join('\n')).toMatch(
        /Job scheduler checkout-reconcile was missing from Redis/,
      );
    }, 120_000);
  });
});
