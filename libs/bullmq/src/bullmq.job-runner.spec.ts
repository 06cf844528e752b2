import { EventEmitter } from 'node:events';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { DeadLetterEvent } from 'nestjs-hubtel';
import { InboundPipeline, type JobRecord } from '#internal';
import { RedisStore } from 'nestjs-hubtel/redis';
import { RedisServer, redisBinary } from '../../../test/support/redis-server.js';
import { BullmqJobRunner, bullmqJobId, type BullmqJobRunnerOptions } from './bullmq.job-runner.js';

/**
 * Two instances (each its own store client, BullMQ runner, emitter and pipeline) sharing one
 * redis-server: the jobs one records run once across both, retries are delayed BullMQ jobs with
 * the pipeline's backoff, and a job that always fails is dead-lettered once.
 */

const PAID = 'orders.paid';
const DEAD = 'orders.dead-letter';
const quiet = new Logger('test');
quiet.localInstance.log = () => undefined;
quiet.localInstance.warn = () => undefined;
quiet.localInstance.error = () => undefined;

interface Instance {
  name: string;
  store: RedisStore;
  runner: BullmqJobRunner;
  pipeline: InboundPipeline;
  emitter: EventEmitter2;
}

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`Still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

redisBinary.describe('BullmqJobRunner (two instances, one Redis)', () => {
  let server: RedisServer;
  let admin: Redis;
  let instances: Instance[] = [];

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.dispose();
  });
  afterEach(async () => {
    for (const instance of instances) {
      await instance.pipeline.beforeApplicationShutdown();
      await instance.runner.close();
      await instance.store.close();
    }
    instances = [];
    await admin.flushdb();
  });

  async function start(
    name: string,
    handler: (payload: { id: string }) => Promise<void>,
    options: Partial<BullmqJobRunnerOptions> = {},
  ) {
    const store = new RedisStore({ url: server.url });
    await store.connect();
    const runner = new BullmqJobRunner({
      url: server.url,
      stalledIntervalMs: 1_000,
      logger: quiet,
      ...options,
    });
    const emitter = new EventEmitter2();
    emitter.on(PAID, handler, { async: false, promisify: true });
    const pipeline = new InboundPipeline({
      name: 'orders',
      store,
      emitter,
      runner,
      deadLetterEvent: DEAD,
      retry: { maxAttempts: 3, baseDelayMs: 150, maxDelayMs: 1_000 },
      // The largest delay of full jitter: each backoff is then known.
      random: () => 0.999_999,
      logger: quiet,
    }).define(PAID);
    await pipeline.onApplicationBootstrap();
    const instance = { name, store, runner, pipeline, emitter };
    instances.push(instance);
    await until(() => runnerStarted(runner), `${name}'s worker`);
    return instance;
  }

  function runnerStarted(runner: BullmqJobRunner): boolean {
    return (runner as unknown as { workers: Map<string, unknown> }).workers.has('orders');
  }

  it('logs a repeated queue or worker error once per interval, not at the rate BullMQ repeats it', async () => {
    const lines: string[] = [];
    const logger = new Logger('test');
    logger.localInstance.error = (message: unknown) => void lines.push(String(message));
    const runner = new BullmqJobRunner({ url: server.url, logger });
    try {
      await runner.start('orders', async () => undefined);
      const worker = (runner as unknown as { workers: Map<string, EventEmitter> }).workers.get('orders')!;
      // A CROSSSLOT prefix made a worker emit this about 20,000 times a second.
      for (let i = 0; i < 20_000; i++) worker.emit('error', new Error('CROSSSLOT Keys in request'));
      worker.emit('error', new Error('Connection is closed.'));
      expect(lines).toEqual([
        'Worker orders: CROSSSLOT Keys in request',
        'Worker orders: Connection is closed.',
      ]);
    } finally {
      await runner.close();
    }
  });

  it('is healthy while its Redis answers and its workers run, not once closed', async () => {
    const { runner } = await start('a', async () => undefined);
    await expect(runner.health()).resolves.toEqual({
      up: true,
      details: { redis: 'ready', workers: { orders: true } },
    });
    await runner.close();
    await expect(runner.health()).resolves.toMatchObject({ up: false });
  });

  it('by default, runs each job recorded by either instance once, on either instance, every run a BullMQ job', async () => {
    const runs: string[] = [];
    const where = new Set<string>();
    const a = await start('a', async ({ id }) => {
      runs.push(id);
      where.add('a');
    });
    const b = await start('b', async ({ id }) => {
      runs.push(id);
      where.add('b');
    });
    expect(a.runner.firstRunHere).toBe(false);
    const ids = Array.from({ length: 40 }, (_, index) => `order-${index}`);
    for (const [index, id] of ids.entries()) {
      const submitted = await (index % 2 ? b : a).pipeline.submit(PAID, id, { id });
      expect(submitted.duplicate).toBe(false);
      // The same callback reaching the other instance is a duplicate: nothing more runs.
      expect((await (index % 2 ? a : b).pipeline.submit(PAID, id, { id })).duplicate).toBe(true);
    }
    await until(async () => {
      const records = await Promise.all(ids.map((id) => a.pipeline.get<{ id: string }>(PAID, id)));
      return records.every((record) => record?.status === 'done');
    }, 'every job done');
    expect(runs.sort()).toEqual([...ids].sort());
    // Each run, every first run included, is one BullMQ job named after the record (visible in
    // BullMQ dashboards).
    const completed = await a.runner.queue('orders').getJobs(['completed']);
    expect(completed.map((job) => job.id).sort()).toEqual(
      ids.map((id) => bullmqJobId(`hubtel:orders:job:${PAID}:${id}`, 1)).sort(),
    );
    expect(completed.every((job) => job.name === PAID)).toBe(true);
  });

  it('with firstRunHere, first runs start where recorded, without a BullMQ job; the run of an instance that died becomes one (by the sweep), run by another', async () => {
    const runs: string[] = [];
    const short = { lockDurationMs: 1_000, stalledIntervalMs: 500, firstRunHere: true };
    const a = await start(
      'a',
      async ({ id }) => {
        runs.push(`a:${id}`);
        // "kill" stands for a crash inside the handler: it never returns.
        if (id === 'kill') await new Promise(() => undefined);
      },
      short,
    );
    const b = await start('b', async ({ id }) => void runs.push(`b:${id}`), short);
    await a.pipeline.submit(PAID, 'here', { id: 'here' });
    await until(async () => (await a.pipeline.get(PAID, 'here'))?.status === 'done', 'the first job');
    expect(runs).toEqual(['a:here']);
    const queue = a.runner.queue('orders');
    expect(await queue.getJob(bullmqJobId(`hubtel:orders:job:${PAID}:here`, 1))).toBeUndefined();

    await a.pipeline.submit(PAID, 'kill', { id: 'kill' });
    await until(() => runs.includes('a:kill'), 'the run on a');
    // a dies: its connections drop, its heartbeat stops; the record's lease runs out.
    instances.splice(instances.indexOf(a), 1);
    await a.pipeline.beforeApplicationShutdown().catch(() => undefined);
    await Promise.all([a.runner.close(), a.store.close()]);
    await until(async () => (await b.pipeline.get(PAID, 'kill'))?.status === 'done', 'the job done by b');
    expect(runs).toEqual(['a:here', 'a:kill', 'b:kill']);
    // Handed to BullMQ by b's sweep (the open mark written with the record), run as a BullMQ job.
    const job = await b.runner.queue('orders').getJob(bullmqJobId(`hubtel:orders:job:${PAID}:kill`, 1));
    expect(job?.name).toBe(PAID);
  });

  it('a deferred job is a delayed BullMQ job; a duplicate on the other instance runs it now, and the delayed run is then a no-op', async () => {
    const CHECK = 'orders.check';
    const runs: string[] = [];
    let paid = false;
    const a = await start('a', async () => undefined);
    const b = await start('b', async () => undefined);
    for (const instance of [a, b])
      instance.pipeline.define<{ id: string; from: string }>(CHECK, {
        wakeOnDuplicate: true,
        run: async (order, context) => {
          runs.push(`${instance.name}:${order.from}`);
          if (paid) return;
          // The first run checks again in 1.5 s, a later one in a minute.
          return context.defer(Date.now() + (runs.length === 1 ? 1_500 : 60_000));
        },
      });
    await a.pipeline.submit(CHECK, 'c1', { id: 'c1', from: 'first' });
    await until(async () => (await a.pipeline.get(CHECK, 'c1'))?.deferred === true, 'the deferral');
    const id = bullmqJobId(`hubtel:orders:job:${CHECK}:c1`, 1, 1);
    const queue = a.runner.queue('orders');
    // The deferral is written to the record, then its run is added to the queue.
    await until(async () => (await queue.getJob(id)) !== undefined, 'the deferred run');
    expect(await (await queue.getJob(id))?.isDelayed()).toBe(true);

    expect((await b.pipeline.submit(CHECK, 'c1', { id: 'c1', from: 'second' })).woken).toBe(true);
    await until(() => runs.length === 2, 'the woken run');
    await until(
      async () => (await a.pipeline.get(CHECK, 'c1'))?.deferrals === 3,
      'the woken run deferring again',
    );
    // The first delayed run comes at its time, finds the record moved on, and runs nothing.
    await until(async () => (await (await queue.getJob(id))?.isCompleted()) === true, 'the delayed run');
    expect(runs).toEqual(['a:first', expect.stringMatching(/^[ab]:second$/)]);
    expect(await a.pipeline.get(CHECK, 'c1')).toMatchObject({
      status: 'pending',
      deferred: true,
      attempts: 0,
    });

    paid = true;
    expect((await a.pipeline.submit(CHECK, 'c1', { id: 'c1', from: 'third' })).woken).toBe(true);
    await until(async () => (await a.pipeline.get(CHECK, 'c1'))?.status === 'done', 'the job done');
    expect(runs).toHaveLength(3);
  });

  it("retries a failing handler with the policy's backoff across instances and dead-letters it once", async () => {
    const calls: number[] = [];
    const dead: DeadLetterEvent[] = [];
    const fail = async () => {
      calls.push(Date.now());
      throw new Error('always fails');
    };
    const a = await start('a', fail);
    const b = await start('b', fail);
    for (const instance of [a, b]) instance.emitter.on(DEAD, (event: DeadLetterEvent) => dead.push(event));

    await a.pipeline.submit(PAID, 'order-x', { id: 'order-x' });
    await until(async () => (await a.pipeline.get(PAID, 'order-x'))?.status === 'dead', 'the job to die');
    // Both instances have had time to act on it twice over before we count.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const record = (await b.pipeline.get<{ id: string }>(PAID, 'order-x')) as JobRecord<{ id: string }>;
    expect(record).toMatchObject({ status: 'dead', attempts: 3, lastError: 'always fails' });
    expect(calls).toHaveLength(3);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ key: 'order-x', attempts: 3, error: 'always fails' });
    // Each retry waited for its backoff (150 ms, then 300 ms): runs were delayed BullMQ jobs.
    expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(150);
    expect(calls[2]! - calls[1]!).toBeGreaterThanOrEqual(300);
    const retry = await a.runner.queue('orders').getJob(bullmqJobId(`hubtel:orders:job:${PAID}:order-x`, 3));
    expect(retry?.opts.delay).toBe(300);
  });
});
