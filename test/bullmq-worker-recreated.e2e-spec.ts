/**
 * A BullMQ worker that stopped taking jobs for good after a Redis Cluster CLUSTERDOWN its process saw
 * late: the master of the queues killed while the process was stalled (a busy event loop), the
 * master marked failed by the others (CLUSTERDOWN), then back. Once the process ran again, the
 * worker's next-job fetch never settled: the worker "ran" and took nothing, jobs waited until
 * someone restarted the replica (seen 5 times in 9 under load; here 4 outages in 5 on the old code,
 * the stall covering the moment the fetch's own time limit ran out). The runner now closes such a
 * worker (jobs waiting, none started here, room for more) and starts it again on a new connection.
 */
import { Logger } from '@nestjs/common';
import type { JobRunRequest } from 'nestjs-hubtel';
import { BullmqJobRunner } from 'nestjs-hubtel/bullmq';
import { RedisCluster, redisClusterBinaries } from './support/redis-cluster.js';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';

const PIPELINE = 'orders';
const TASK = 'reconcile';
const request = (id: string): JobRunRequest => ({
  storeKey: `hubtel:${PIPELINE}:job:orders.paid:${id}`,
  type: 'orders.paid',
  run: 1,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The event loop blocked, as by a handler that computes or a long garbage collection. */
const stall = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

async function until(check: () => Promise<boolean> | boolean, what: string, withinMs: number): Promise<void> {
  const giveUp = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`Still waiting for ${what} after ${withinMs} ms`);
    await sleep(50);
  }
}

redisClusterBinaries.describe('BullmqJobRunner after a CLUSTERDOWN seen by a stalled process', () => {
  let cluster: RedisCluster;
  let runner: BullmqJobRunner | undefined;
  // A master away longer than this is marked failed: the cluster answers CLUSTERDOWN until it is back.
  beforeAll(
    async () => (cluster = await RedisCluster.start(3, { nodeTimeoutMs: 1_000, appendOnly: true })),
    30_000,
  );
  afterAll(async () => {
    await runner?.close();
    await cluster?.dispose();
  }, 30_000);

  /** The queues' master away, the process stalled through it, then the cluster whole again. */
  async function stalledOutage(n: number): Promise<void> {
    const master = await cluster.serverOf(BULLMQ_RUNNER_DEFAULTS.prefix);
    // The worker now waits for its next job on the master of the queues.
    await sleep(250 + 250 * n);
    await master.stop();
    // Stalled through the outage, past the 5 s of a fetch's wait: the process sees the master
    // gone only after that wait's own time limit ran out.
    stall(7_000);
    await master.restart();
    await cluster.untilOk(30_000);
  }

  /** A runner whose restart warnings are kept. */
  async function watchedRunner(): Promise<{ runner: BullmqJobRunner; restarted: () => string[] }> {
    await runner?.close();
    const warnings: string[] = [];
    const logger = new Logger('test');
    logger.warn = (message: unknown) => void warnings.push(String(message));
    logger.error = () => undefined;
    logger.log = () => undefined;
    // A takeover bound (lock + stalled interval) of 3 s: the worker is started again a few seconds
    // after a job has been due that long (15 s with the defaults).
    runner = new BullmqJobRunner({
      cluster: { nodes: cluster.nodes },
      lockDurationMs: 2_000,
      stalledIntervalMs: 1_000,
      logger,
    });
    return { runner, restarted: () => warnings.filter((line) => line.includes('started again')) };
  }

  it('starts its worker again, which takes every job once; the warning logged once, health says so', async () => {
    const { runner, restarted } = await watchedRunner();
    const runs: string[] = [];
    await runner.connect(PIPELINE);
    await runner.start(PIPELINE, async (storeKey) => {
      runs.push(storeKey.slice(storeKey.lastIndexOf(':') + 1));
      return { kind: 'settled' };
    });
    await runner.enqueue(PIPELINE, request('before'));
    await until(() => runs.includes('before'), 'the first run', 10_000);
    const added: string[] = [];
    // Most outages leave the worker stuck (4 in 5 on the old code): up to four, until one did.
    for (let outage = 1; outage <= 4 && restarted().length === 0; outage++) {
      await stalledOutage(outage);
      const ids = [1, 2, 3].map((n) => `after-${outage}-${n}`);
      for (const id of ids)
        await until(
          () =>
            runner.enqueue(PIPELINE, request(id)).then(
              () => true,
              () => false,
            ),
          `${id} added`,
          10_000,
        );
      added.push(...ids);
      // On the old code none was taken (still none 80 s later: the replica had to be restarted).
      await until(
        () => ids.every((id) => runs.includes(id)),
        `the jobs added after outage ${outage}`,
        20_000,
      );
    }
    // Still taking jobs (the old worker's close left the connections the new one uses).
    await sleep(1_000);
    await runner.enqueue(PIPELINE, request('later'));
    await until(() => runs.includes('later'), 'a job added later', 10_000);
    await sleep(1_500);

    // Each job once.
    expect([...runs].sort()).toEqual([...added, 'before', 'later'].sort());
    expect(restarted()).toEqual([
      expect.stringMatching(
        /^Worker orders took no job for \d+ s while one was due and it had room: closed, and started again on a new connection$/,
      ),
    ]);
    expect(await runner.health()).toEqual({
      up: true,
      details: {
        redis: 'ready',
        workers: { [PIPELINE]: true },
        restarted: { [PIPELINE]: expect.stringMatching(/^1 time, last at \d{4}-\d\d-\d\dT/) },
      },
    });
  }, 120_000);

  // A repeated task's worker has nothing waiting between runs: its next run is a delayed job that
  // the worker itself promotes when due. Stuck, it never runs the task again (the checkout
  // reconciliation, which confirms a payment whose callback was lost).
  it("starts a repeated task's worker again when its next run stays due (only a delayed job in its queue)", async () => {
    const { runner, restarted } = await watchedRunner();
    let passes = 0;
    await runner.connect(TASK);
    await runner.repeat(TASK, 2_000, async () => void passes++);
    await until(() => passes > 0, 'the first pass', 10_000);
    for (let outage = 1; outage <= 4 && restarted().length === 0; outage++) {
      await stalledOutage(outage);
      const before = passes;
      // On the old code no pass ran again (its next run stayed in the delayed set, due).
      await until(() => passes >= before + 2, `two passes after outage ${outage}`, 20_000);
    }
    expect(restarted()).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Worker ${TASK} took no job for \\d+ s while one was due and it had room: closed, and started again on a new connection$`,
        ),
      ),
    ]);
    // Still running (the new worker promotes its own next runs).
    const later = passes;
    await until(() => passes >= later + 2, 'two passes later', 10_000);
  }, 150_000);
});
