import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Cluster, Redis } from 'ioredis';
import { HubtelRedisConfigError, type JobRunRequest } from 'nestjs-hubtel';
import { BullmqJobRunner, HubtelBullmqModule, type BullmqJobRunnerOptions } from 'nestjs-hubtel/bullmq';
import { RedisCluster, redisClusterBinaries } from './support/redis-cluster.js';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';

/**
 * The BullMQ runner on a 3-master Redis Cluster: a hash-tagged prefix by default, a Cluster client
 * used as it is, and the connections it cannot use refused at startup with what to change.
 */

const PAID = 'orders.paid';
const request = (id: string): JobRunRequest => ({
  storeKey: `hubtel:orders:job:${PAID}:${id}`,
  type: PAID,
  run: 1,
});
const quiet = new Logger('test');
quiet.localInstance.log = () => undefined;
quiet.localInstance.warn = () => undefined;
quiet.localInstance.error = () => undefined;

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`Still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

redisClusterBinaries.describe('BullmqJobRunner on a Redis Cluster', () => {
  let cluster: RedisCluster;
  const closing: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 30_000);
  afterAll(() => cluster?.dispose());
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await cluster.flushAll();
  });

  /** A runner working the `orders` pipeline, its executor noting the id of each run it executes. */
  async function instance(runnerOptions: Partial<BullmqJobRunnerOptions>, runs: string[]) {
    const runner = new BullmqJobRunner({ stalledIntervalMs: 1_000, logger: quiet, ...runnerOptions });
    await runner.connect('orders');
    closing.push(() => runner.close());
    await runner.start('orders', async (storeKey) => {
      runs.push(storeKey.slice(storeKey.lastIndexOf(':') + 1));
      return { kind: 'settled' };
    });
    return { runner };
  }

  it('runs jobs of two instances once each, on `cluster: { nodes }` with the default {hubtel} prefix', async () => {
    expect(BULLMQ_RUNNER_DEFAULTS.prefix).toBe('{hubtel}:bull');
    const runs: string[] = [];
    const a = await instance({ cluster: { nodes: cluster.nodes } }, runs);
    const b = await instance({ cluster: { nodes: cluster.nodes } }, runs);
    const ids = Array.from({ length: 30 }, (_, i) => `order-${i}`);
    for (const [i, id] of ids.entries()) {
      await (i % 2 ? a : b).runner.enqueue('orders', request(id));
      await (i % 2 ? b : a).runner.enqueue('orders', request(id));
    }
    await until(async () => runs.length >= ids.length, 'every job run');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs.sort()).toEqual([...ids].sort());
    await expect(a.runner.health()).resolves.toMatchObject({ up: true });
    // Every queue key in the one slot of the {hubtel} hash tag: on one master.
    expect((await cluster.keysPerMaster()).filter((count) => count > 0)).toHaveLength(1);
  });

  it('uses a Cluster client given as `connection` as it is (a copy connected to 127.0.0.1:6379)', async () => {
    const runs: string[] = [];
    const client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: null } });
    closing.push(async () => client.disconnect());
    const a = await instance({ connection: client }, runs);
    await a.runner.enqueue('orders', request('given'));
    await until(() => runs.includes('given'), 'the job on the given Cluster');
    expect(await a.runner.queue('orders').getJobCounts('completed')).toEqual({ completed: 1 });
  });

  it('refuses at startup what it cannot use, saying what to change', async () => {
    const refusal = (options: BullmqJobRunnerOptions) => {
      try {
        new BullmqJobRunner({ logger: quiet, ...options });
        return undefined;
      } catch (error) {
        return error;
      }
    };
    expect(refusal({ cluster: { nodes: cluster.nodes }, prefix: 'hubtel:bull' })).toMatchObject({
      code: 'HUBTEL_REDIS_UNUSABLE',
      reason: 'PREFIX_WITHOUT_HASH_TAG',
      option: 'bullmq.prefix',
      message: expect.stringContaining('{hubtel:bull}'),
    });
    const withRetries = new Cluster(cluster.nodes, { lazyConnect: true });
    expect(refusal({ connection: withRetries })).toMatchObject({
      reason: 'CLIENT_UNUSABLE',
      message: expect.stringContaining('maxRetriesPerRequest: null in redisOptions'),
    });
    // The copy the old runner made of a Cluster: a plain object BullMQ would read as options.
    expect(refusal({ connection: { ...withRetries } })).toMatchObject({
      reason: 'CLIENT_UNUSABLE',
      message: expect.stringContaining('pass the Redis or Cluster client itself'),
    });
    expect(
      refusal({ connection: new Cluster(cluster.nodes, { lazyConnect: true, keyPrefix: 'x:' }) }),
    ).toMatchObject({
      reason: 'CLIENT_UNUSABLE',
    });

    // A url at one node of the cluster: refused once connected, before any job or worker.
    const node = new BullmqJobRunner({ url: `redis://127.0.0.1:${cluster.nodes[0]!.port}`, logger: quiet });
    const refused = await node.connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(HubtelRedisConfigError);
    expect(refused).toMatchObject({ reason: 'CLUSTER_NODE_WITHOUT_CLUSTER_CLIENT', option: 'bullmq.url' });
    await expect(node.health()).resolves.toMatchObject({ up: false, details: { redis: 'closed' } });
  });

  it('an app whose BullMQ prefix has no hash tag on the cluster does not start', async () => {
    const starting = Test.createTestingModule({
      imports: [HubtelBullmqModule.forRoot({ cluster: { nodes: cluster.nodes }, prefix: 'hubtel:bull' })],
    }).compile();
    await expect(starting).rejects.toMatchObject({
      code: 'HUBTEL_REDIS_UNUSABLE',
      reason: 'PREFIX_WITHOUT_HASH_TAG',
    });
  });

  it('says down on /health while jobs cannot be added, and up again once one is', async () => {
    const runs: string[] = [];
    const a = await instance({ cluster: { nodes: cluster.nodes } }, runs);
    await expect(a.runner.health()).resolves.toMatchObject({ up: true });
    const nodes = cluster.servers.map((server) => new Redis(server.url));
    try {
      // Full: with noeviction every write is refused (OOM), as on a managed Redis at its limit.
      await Promise.all(nodes.map((node) => node.config('SET', 'maxmemory', '1')));
      await expect(a.runner.enqueue('orders', request('x'))).rejects.toThrow(/OOM/);
      await expect(a.runner.health()).resolves.toMatchObject({
        up: false,
        details: { add: expect.stringContaining('OOM') },
      });
      await Promise.all(nodes.map((node) => node.config('SET', 'maxmemory', '0')));
      await a.runner.enqueue('orders', request('y'));
      await expect(a.runner.health()).resolves.toMatchObject({ up: true });
    } finally {
      await Promise.all(nodes.map((node) => node.config('SET', 'maxmemory', '0').catch(() => undefined)));
      for (const node of nodes) node.disconnect();
    }
  });
});
