import { Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InboundPipeline, type JobRecord } from '#internal';

type InboundPipelineOptions = ConstructorParameters<typeof InboundPipeline>[0];
import { RedisCluster, redisClusterBinaries } from '../../../test/support/redis-cluster.js';
import { RedisStore } from './redis.store.js';

/**
 * The pipelines' open-job sweep on a 3-master Redis Cluster: a dead instance's jobs, recorded on
 * every master, are all found and taken over by a survivor (a SCAN of one node found a third).
 */

const PAID = 'orders.paid';
const LEASE_MS = 1_000;
const quiet = new Logger('test');
quiet.localInstance.log = () => undefined;
quiet.localInstance.warn = () => undefined;
quiet.localInstance.error = () => undefined;

/** A shared clock: a lease runs out when the test says so. */
let clock = 0;

async function until(what: string, condition: () => Promise<boolean> | boolean): Promise<void> {
  const giveUp = Date.now() + 15_000;
  while (!(await condition())) {
    if (Date.now() > giveUp) throw new Error(`Timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

redisClusterBinaries.describe('the open-job sweep on a Redis Cluster', () => {
  let cluster: RedisCluster;
  const stores: RedisStore[] = [];
  const pipelines: InboundPipeline[] = [];
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 30_000);
  afterAll(async () => {
    for (const pipeline of pipelines) await pipeline.beforeApplicationShutdown();
    for (const store of stores) await store.close();
    await cluster?.dispose();
  });

  async function instance(handler: (id: string) => Promise<void>, options: Partial<InboundPipelineOptions>) {
    const store = new RedisStore({ cluster: { nodes: cluster.nodes } });
    await store.connect();
    stores.push(store);
    const emitter = new EventEmitter2();
    emitter.on(PAID, ({ id }: { id: string }) => handler(id), { async: false, promisify: true });
    const pipeline = new InboundPipeline({
      name: 'orders',
      store,
      emitter,
      deadLetterEvent: 'orders.dead-letter',
      logger: quiet,
      now: () => clock,
      leaseMs: LEASE_MS,
      recoverOnBootstrap: false,
      sweepIntervalMs: 0,
      shutdownGraceMs: 10,
      ...options,
    }).define(PAID);
    await pipeline.onApplicationBootstrap();
    pipelines.push(pipeline);
    return { store, pipeline };
  }

  it('takes over every job of an instance that died, on all three masters', async () => {
    clock = Date.now();
    const started: string[] = [];
    // Its handler never returns: the instance "dies" inside it.
    const dying = await instance(async (id) => {
      started.push(id);
      await new Promise(() => undefined);
    }, {});
    const ids = Array.from({ length: 30 }, (_, i) => `o${i}`);
    for (const id of ids) await dying.pipeline.submit(PAID, id, { id });
    await until('every job running on the dying instance', () => started.length === ids.length);
    // Spread: the records and their open marks are on every master.
    for (const count of await cluster.keysPerMaster()) expect(count).toBeGreaterThan(0);
    await dying.pipeline.beforeApplicationShutdown(); // stops its heartbeat: leases never renewed
    clock += LEASE_MS + 1;

    const ran: string[] = [];
    const survivor = await instance(async (id) => void ran.push(id), { sweepIntervalMs: 20 });
    await until('the survivor finished every job', async () => {
      const records = await Promise.all(
        ids.map((id) => survivor.store.get<JobRecord>(`hubtel:orders:job:${PAID}:${id}`)),
      );
      return records.every((record) => record?.value.status === 'done');
    });
    expect(ran.sort()).toEqual([...ids].sort());
  }, 30_000);
});
