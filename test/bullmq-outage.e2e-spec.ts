/**
 * Workers that come back (issue 30): the replicas of test/support/replica-app.ts after the Redis
 * they run their jobs on was away or came back empty.
 * - On a 3-master Redis Cluster, the master holding the BullMQ queues is killed for 15 s while paid
 *   callbacks arrive: once it is back, every callback the replicas acknowledged is handled once,
 *   within the takeover bound, by the workers that were running all along (no restart).
 * - On either topology, Redis emptied under running replicas (a flush: as a restart without
 *   persistence or a failover to an empty replica leaves it): reconciliation goes on, and finds a
 *   payment the platform never reported.
 */
import { sendCheckoutCallback } from 'nestjs-hubtel/testing';
import { eventually, type AppProcess } from './support/multi-process.js';
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

const OUTAGE_MS = 15_000;

const clusterTopology = TOPOLOGIES.find((topology) => topology.binary === redisClusterBinaries)!;

clusterTopology.binary.describe('BullMQ workers after a Cluster master outage', () => {
  const system = new ReplicaSystem(clusterTopology);
  let a: AppProcess;
  let b: AppProcess;

  beforeAll(async () => {
    await system.start();
    [a, b] = await Promise.all([system.replica('a'), system.replica('b')]);
  }, 180_000);
  afterAll(() => system.dispose(), 60_000);

  it(`the master of the queues killed for ${OUTAGE_MS / 1000} s under load: every acknowledged callback is handled once within the takeover bound after it returns`, async () => {
    const cluster = system.space.cluster!;
    // Every BullMQ key of the default prefix is in the slot of its {hash tag}: one master holds them.
    const queues = await cluster.serverOf(BULLMQ_RUNNER_DEFAULTS.prefix);
    const master =
      process.env.MASTER === 'other' ? cluster.servers.find((server) => server !== queues)! : queues;
    const refs = Array.from({ length: 60 }, (_, index) => id(`master${index}`));
    await inBatches(refs, 10, (ref, index) => system.createInvoice(index % 2 ? a : b, ref, 10 + index));
    const bodies = await inBatches(refs, 10, (ref) => system.paidCallback(ref));
    /** When each callback was first answered 200 (acknowledged: the platform stops re-sending it). */
    const acknowledged = new Map<string, number>();
    const statuses: number[] = [];
    const send = async (ref: string) => {
      if (acknowledged.has(ref)) return;
      const index = refs.indexOf(ref);
      const target = index % 2 ? a : b;
      const answer = await sendCheckoutCallback(target.url, bodies[index], { timeoutMs: 30_000 });
      statuses.push(answer.status);
      if (answer.status === 200 && !acknowledged.has(ref)) acknowledged.set(ref, Date.now());
    };
    const unacknowledged = () => refs.filter((ref) => !acknowledged.has(ref));

    // Load: the callbacks go out 5 at a time, the platform re-sending what was refused every
    // 500 ms, until all are acknowledged; the master is killed once a third went out.
    let stopLoad = false;
    const load = (async () => {
      for (let round = 0; !stopLoad && unacknowledged().length > 0 && round < 1_000; round++) {
        await inBatches(unacknowledged(), 5, send);
        await pause(500);
      }
    })();
    await eventually('a third of the callbacks acknowledged', () =>
      acknowledged.size >= refs.length / 3 ? true : undefined,
    );
    await master.stop();
    await pause(OUTAGE_MS);
    await master.restart();
    await cluster.untilOk();
    const back = Date.now();
    try {
      await eventually('every callback acknowledged', () => (unacknowledged().length === 0 ? true : undefined), {
        timeoutMs: 60_000,
      });
    } finally {
      stopLoad = true;
      await load;
    }

    // Each acknowledged callback's handler ran by the takeover bound after the master came back,
    // or after its acknowledgement when that was later.
    const deadline = Math.max(back, ...acknowledged.values()) + TAKEOVER_BOUND_MS;
    const handled = await eventually(
      'every acknowledged callback handled',
      () => {
        const missing = refs.filter((ref) => system.runs('receipt', ref) === 0);
        if (missing.length === 0) return true;
        if (Date.now() > deadline)
          throw new Error(`not handled ${TAKEOVER_BOUND_MS} ms after the master came back: ${missing.join(' ')}`);
        return undefined;
      },
      { timeoutMs: deadline - Date.now() + 1_000, intervalMs: 200 },
    ).catch((error: Error) => error);
    if (handled instanceof Error) {
      // What the replicas' workers did meanwhile, for the failure message.
      const jobs = await system.bullmqJobs('checkout', 'hubtel.checkout.paid', 'master');
      throw new Error(
        `${handled.message}\nBullMQ jobs: ${JSON.stringify(jobs.map((job) => [job.id, job.state, job.attemptsMade]))}`,
      );
    }
    await system.settled('checkout');
    await pause(1_000);

    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(refs.map((ref) => [ref, system.runs('receipt', ref)])).toEqual(refs.map((ref) => [ref, 1]));
    expect(await Promise.all(refs.map((ref) => system.receipts(ref)))).toEqual(refs.map(() => 1));
  }, 240_000);
});
