import { Inject, Injectable, Logger, Module, type INestApplication, type Type } from '@nestjs/common';
import { EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { Queue, type Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { HUBTEL_JOB_RUNNER } from 'nestjs-hubtel';
import { RedisStore } from 'nestjs-hubtel/redis';
import {
  createHandlerDecorator,
  inboundKit,
  type InboundPipeline,
  type JobRecord,
  type JobRetryPolicy,
  type JobRunContext,
} from '#internal';
import { redisBinary, redisDatabase, type RedisDatabase } from './support/redis-server.js';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { BullmqJobRunner } from '../libs/bullmq/src/bullmq.job-runner.js';
import { bullmqJobId } from '../libs/bullmq/src/bullmq.jobs.js';

/**
 * Several instances of one app (real Nest apps), each with its own RedisStore client and its own
 * BullmqJobRunner, on one redis-server, as replicas or a restart share Redis: which instance runs
 * a job, and which handlers of it run, after a deploy, a crash, a stall or a takeover. Where and
 * when is BullMQ's (its locks, stalled-job check, delayed jobs, in real time); which handlers is
 * the record's.
 */

const NAME = 'orders';
const PAID = 'orders.paid';
const CHECK = 'orders.check';
const DEAD = 'orders.dead-letter';
const OnPaid = createHandlerDecorator(PAID);
const OPTIONS = Symbol('options');
const STORE = Symbol('store');
const ACCESS = Symbol('access');
const PIPELINE = Symbol('pipeline');
/** Short BullMQ timings: a dead instance's job is found stalled within about 2 s. */
const LOCK_MS = 1_000;
const STALLED_INTERVAL_MS = 500;
/** Retries at once unless a test says otherwise. */
const FAST_RETRY: Partial<JobRetryPolicy> = { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 2 };

/** What one instance's handlers did, and how they are told to behave. */
class Journal {
  calls: string[] = [];
  /** Handlers (by class name) that fail on their next call. */
  failing = new Set<string>();
  /** Handlers (by class name) that wait for this before they end (a long or stuck handler). */
  gates = new Map<string, Promise<void>>();
  /** Handlers (by class name) that block the event loop this long (ms) on their next call. */
  blocking = new Map<string, number>();

  count(name: string): number {
    return this.calls.filter((call) => call === name).length;
  }
}

async function handle(journal: Journal, name: string): Promise<void> {
  journal.calls.push(name);
  const block = journal.blocking.get(name);
  if (block !== undefined) {
    journal.blocking.delete(name);
    // Synchronous: no timer, no lock renewal, no reply read until it ends (a stalled process).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, block);
  }
  const gate = journal.gates.get(name);
  if (gate) await gate;
  if (journal.failing.delete(name)) throw new Error(`${name} failed`);
}

@Injectable()
class Stock {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnPaid()
  reserve(): Promise<void> {
    return handle(this.journal, 'Stock');
  }
}

@Injectable()
class Mail {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnPaid()
  send(): Promise<void> {
    return handle(this.journal, 'Mail');
  }
}

@Injectable()
class Ledger {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnPaid()
  post(): Promise<void> {
    return handle(this.journal, 'Ledger');
  }
}

@Injectable()
class Audit {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnPaid()
  note(): Promise<void> {
    return handle(this.journal, 'Audit');
  }
}

/** A plain @OnEvent: an observer, told of the event once the handlers succeeded. */
@Injectable()
class Plain {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnEvent(PAID, { suppressErrors: false })
  plain(): Promise<void> {
    return handle(this.journal, 'Plain');
  }
}

interface Order {
  id: string;
  from: string;
}

/** One run of the deferring job (CHECK): on which instance, with what, and when. */
interface CheckRun {
  by: string;
  from: string;
  woken: boolean;
  state: unknown;
  at: number;
}

/**
 * The deferring job of every instance: it defers itself by `deferMs` until `paid`, and notes
 * each run and each time it asked for.
 */
const checker = { runs: [] as CheckRun[], untils: [] as number[], paid: false, deferMs: 60_000 };

function checkJob(by: string) {
  return {
    wakeOnDuplicate: true,
    retry: { maxAttempts: 1 },
    run: async (order: Order, context: JobRunContext<Order>) => {
      const state = context.record.state;
      checker.runs.push({ by, from: order.from, woken: context.woken, state, at: Date.now() });
      if (checker.paid) return;
      const until = Date.now() + checker.deferMs;
      checker.untils.push(until);
      return context.defer(until, { checks: ((state as { checks?: number } | undefined)?.checks ?? 0) + 1 });
    },
  };
}

const quiet = new Logger('test');
quiet.warn = () => undefined;
quiet.error = () => undefined;
quiet.log = () => undefined;

interface Instance {
  app: INestApplication;
  pipeline: InboundPipeline;
  journal: Journal;
  runner: BullmqJobRunner;
  store: RedisStore;
}

interface InstanceOptions {
  retry?: Partial<JobRetryPolicy>;
  random?: () => number;
  /** Jobs this instance's worker runs at once (default the runner's). */
  concurrency?: number;
}

/**
 * One instance of the app: its handler classes (in this order), its own store client and job
 * runner on the shared redis-server, the pipeline wired as the suite's modules wire it.
 */
async function instance(url: string, by: string, handlers: Type[], options: InstanceOptions = {}) {
  const journal = new Journal();
  // One process stands for several here: a handler blocking the event loop (the stall test)
  // must not time out another instance's store commands, which would not share it in production.
  const store = new RedisStore({ url, commandTimeoutMs: 10_000 });
  await store.connect();
  const runner = new BullmqJobRunner({
    url,
    lockDurationMs: LOCK_MS,
    stalledIntervalMs: STALLED_INTERVAL_MS,
    logger: quiet,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  });
  const kit = inboundKit<{ store: RedisStore; access: object }>({
    module: 'OrdersModule',
    emits: 'dispatches its jobs as events',
    optionPrefix: 'orders',
    options: OPTIONS,
    store: STORE,
    access: ACCESS,
    pipeline: {
      provide: PIPELINE,
      settings: () => ({
        name: NAME,
        deadLetterEvent: DEAD,
        logger: quiet,
        shutdownGraceMs: 100,
        retry: options.retry ?? FAST_RETRY,
        ...(options.random ? { random: options.random } : {}),
        jobs: { [PAID]: {}, [CHECK]: checkJob(by) },
      }),
    },
  });
  @Module({
    imports: [EventEmitterModule.forRoot(), ...kit.imports],
    providers: [
      { provide: Journal, useValue: journal },
      ...handlers,
      { provide: OPTIONS, useValue: { store, access: {} } },
      // The runner the pipeline is given: its onApplicationBootstrap starts this instance's worker.
      { provide: HUBTEL_JOB_RUNNER, useValue: runner },
      ...kit.providers,
    ],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = await moduleRef.createNestApplication({ logger: false }).init();
  return { app, pipeline: app.get<InboundPipeline>(PIPELINE), journal, runner, store };
}

/** A graceful stop (a deploy): the app's shutdown, then its runner's and store's connections. */
async function stop(one: Instance): Promise<void> {
  await one.app.close().catch(() => undefined);
  await one.runner.close();
  await one.store.close();
}

/**
 * Kills an instance: its workers stop at once (no graceful close, no lock renewal), its queue and
 * store connections drop. A handler running there never returns (nothing is left to return to).
 */
async function kill(victim: Instance): Promise<void> {
  const internals = victim.runner as unknown as { workers: Map<string, Worker>; queues: Map<string, Queue> };
  for (const worker of internals.workers.values()) await worker.close(true);
  for (const queue of internals.queues.values()) await queue.disconnect();
  victim.store.client.disconnect();
}

/** Waits for a condition (polling), failing after 20 s (a takeover takes about 2 s here). */
async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const giveUp = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > giveUp) throw new Error(`Timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const never = new Promise<void>(() => undefined);
const storeKey = (type: string, key: string) => `hubtel:${NAME}:job:${type}:${key}`;

redisBinary.describe('InboundPipeline across instances on BullMQ (one Redis)', () => {
  let server: RedisDatabase;
  /** Reads what every instance shares: the records, and BullMQ's jobs. */
  let admin: RedisStore;
  let queue: Queue;
  let flush: Redis;
  const instances: Instance[] = [];

  async function start(by: string, handlers: Type[], options?: InstanceOptions): Promise<Instance> {
    const started = await instance(server.url, by, handlers, options);
    instances.push(started);
    return started;
  }
  const record = async (key: string, type = PAID) =>
    (await admin.get<JobRecord<Order>>(storeKey(type, key)))?.value;
  const bullJob = (key: string, type = PAID) => queue.getJob(bullmqJobId(storeKey(type, key), 1));

  beforeAll(async () => {
    server = await redisDatabase();
    admin = new RedisStore({ url: server.url, commandTimeoutMs: 10_000 });
    await admin.connect();
    queue = new Queue(NAME, { connection: { url: server.url }, prefix: BULLMQ_RUNNER_DEFAULTS.prefix });
    flush = new Redis(server.url);
  });
  afterAll(async () => {
    await queue?.close();
    await admin?.close();
    flush?.disconnect();
    await server?.dispose();
  });
  beforeEach(() => {
    Object.assign(checker, { runs: [], untils: [], paid: false, deferMs: 60_000 });
  });
  afterEach(async () => {
    for (const one of instances.splice(0)) await stop(one);
    await flush.flushdb();
  });

  it('after a restart with handlers reordered and one added, a job waiting for its retry runs the failed and the new handler only', async () => {
    // A retry long enough for the deploy's stop to finish before it is due (BullMQ's real time;
    // the stop takes a fraction of a second, and a retry due before the new instance starts waits
    // for it all the same).
    const before = await start('before', [Stock, Mail, Ledger], {
      retry: { maxAttempts: 5, baseDelayMs: 2_000, maxDelayMs: 2_000 },
      random: () => 1,
    });
    before.journal.failing.add('Mail');
    await before.pipeline.submit(PAID, 'o1', { id: 'o1', from: 'first' });
    await until('the retry waits in BullMQ', async () => (await (await bullJob('o1'))?.isDelayed()) === true);
    expect(before.journal.calls).toEqual(['Stock', 'Mail', 'Ledger']);
    expect(await record('o1')).toMatchObject({ status: 'pending', attempts: 1 });
    await stop(before); // the deploy: this instance stops with the job waiting for its retry
    expect(await (await bullJob('o1'))!.isDelayed()).toBe(true);

    const after = await start('after', [Mail, Ledger, Audit, Stock]);
    await until('the retry ran', async () => (await record('o1'))?.status === 'done');
    expect(after.journal.calls.sort()).toEqual(['Audit', 'Mail']);
    expect(before.journal.calls).toEqual(['Stock', 'Mail', 'Ledger']);
    expect(await record('o1')).toMatchObject({ status: 'done', attempts: 2 });
    // Remembered by identity: never by position.
    expect([...(await record('o1'))!.doneHandlers].sort()).toEqual(
      [`Audit.note@${PAID}`, `Ledger.post@${PAID}`, `Mail.send@${PAID}`, `Stock.reserve@${PAID}`].sort(),
    );
  });

  it('a plain @OnEvent is an observer: told once the handler succeeded; its failure neither fails nor repeats the job', async () => {
    const one = await start('one', [Stock, Plain]);
    one.journal.failing.add('Plain');
    await one.pipeline.submit(PAID, 'o2', { id: 'o2', from: 'first' });
    await until('the job is done', async () => (await record('o2'))?.status === 'done');
    await until('the observer was told', () => one.journal.count('Plain') === 1);
    expect(one.journal.calls).toEqual(['Stock', 'Plain']);
    expect(await record('o2')).toMatchObject({
      status: 'done',
      attempts: 1,
      doneHandlers: [`Stock.reserve@${PAID}`],
    });
  });

  it('another instance takes over the job of an instance killed inside a handler: the handlers done before do not run again', async () => {
    const dying = await start('dying', [Stock, Mail, Ledger]);
    dying.journal.gates.set('Mail', never); // it dies inside Mail
    await dying.pipeline.submit(PAID, 'o3', { id: 'o3', from: 'first' });
    await until('Mail runs on the dying instance', () => dying.journal.calls.includes('Mail'));
    // Started once the job is taken, so it can only get it by a takeover.
    const survivor = await start('survivor', [Stock, Mail, Ledger]);
    await kill(dying);

    await until('the survivor finished the job', async () => (await record('o3'))?.status === 'done');
    expect(dying.journal.calls).toEqual(['Stock', 'Mail']);
    // Stock succeeded before the kill: not again. Mail, killed mid-run, runs once more.
    expect(survivor.journal.calls).toEqual(['Mail', 'Ledger']);
    expect(await record('o3')).toMatchObject({ status: 'done', attempts: 1 });
    expect([...(await record('o3'))!.doneHandlers].sort()).toEqual(
      [`Ledger.post@${PAID}`, `Mail.send@${PAID}`, `Stock.reserve@${PAID}`].sort(),
    );
  });

  it('a long job on a live instance keeps its BullMQ lock (renewed): another instance does not take it', async () => {
    let release!: () => void;
    const live = await start('live', [Stock]);
    live.journal.gates.set('Stock', new Promise<void>((resolve) => (release = resolve)));
    await live.pipeline.submit(PAID, 'o4', { id: 'o4', from: 'first' });
    await until('the job runs', () => live.journal.calls.length === 1);
    const other = await start('other', [Stock]);
    // Three lock durations: without renewal, the other instance's stalled check would take it.
    await sleep(3 * LOCK_MS);
    expect(other.journal.calls).toEqual([]);

    release();
    await until('the job is done', async () => (await record('o4'))?.status === 'done');
    expect(live.journal.calls).toEqual(['Stock']);
    expect(other.journal.calls).toEqual([]);
    expect(await record('o4')).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('an instance that stalled past its lock, then finishes, does not undo the outcome of the instance that took over', async () => {
    let release!: () => void;
    // One job at a time there: the job stalled out of it goes to the other instance.
    const stalled = await start('stalled', [Stock, Mail], { concurrency: 1 });
    stalled.journal.blocking.set('Mail', LOCK_MS + STALLED_INTERVAL_MS + 500);
    stalled.journal.gates.set('Mail', new Promise<void>((resolve) => (release = resolve)));
    stalled.journal.failing.add('Mail');
    await stalled.pipeline.submit(PAID, 'o7', { id: 'o7', from: 'first' });
    // Seen only once the block ended: by then its lock expired, unrenewed.
    await until('Mail ran on the stalled instance', () => stalled.journal.calls.includes('Mail'));

    const other = await start('other', [Stock, Mail]);
    await until('the other instance took the job over', async () => (await record('o7'))?.status === 'done');
    expect(other.journal.calls).toEqual(['Mail']);

    release(); // the stalled instance finishes: Stock succeeded there, Mail fails there
    await stalled.pipeline.drain();
    // Time for whatever its late outcome could start (a retry is due in 2 ms, a stall in 2 s).
    await sleep(LOCK_MS + 2 * STALLED_INTERVAL_MS);
    expect(stalled.journal.calls).toEqual(['Stock', 'Mail']);
    expect(other.journal.calls).toEqual(['Mail']);
    expect(await record('o7')).toMatchObject({ status: 'done', attempts: 1 });
    expect([...(await record('o7'))!.doneHandlers].sort()).toEqual([
      `Mail.send@${PAID}`,
      `Stock.reserve@${PAID}`,
    ]);
  });

  it('a job recorded by an instance that died before running it is run exactly once by the survivor', async () => {
    const dying = await start('dying', [Stock, Mail]);
    const survivor = await start('survivor', [Stock, Mail]);
    // A handler that takes a while: a second run of the job would overlap it, not find it done.
    survivor.journal.gates.set(
      'Stock',
      sleep(500).then(() => undefined),
    );
    await until('the dying instance works', () => dying.runner.health().then(({ up }) => up));
    // Its workers go first: the record is written and the BullMQ job added, nothing fetches it there.
    const internals = dying.runner as unknown as { workers: Map<string, Worker> };
    for (const worker of internals.workers.values()) await worker.close(true);
    await dying.pipeline.submit(PAID, 'o5', { id: 'o5', from: 'first' });
    await kill(dying);
    // The sender, unsure, delivers it again to the survivor: the same run, not a second one.
    expect(await survivor.pipeline.submit(PAID, 'o5', { id: 'o5', from: 'again' })).toMatchObject({
      duplicate: true,
    });

    await until('the survivor ran the job', async () => (await record('o5'))?.status === 'done');
    await sleep(LOCK_MS + 2 * STALLED_INTERVAL_MS); // time for a second run, were there one
    expect(dying.journal.calls).toEqual([]);
    expect(survivor.journal.calls).toEqual(['Stock', 'Mail']);
    expect(await record('o5')).toMatchObject({ status: 'done', attempts: 1, payload: { from: 'first' } });
  });

  it('a duplicate on the other instance wakes a deferred job: it runs at once with its payload; the deferral time runs nothing more', async () => {
    // Long enough for b to start and send the duplicate before it (an app start, on a loaded machine).
    checker.deferMs = 2_500;
    const a = await start('a', []);
    await a.pipeline.submit(CHECK, 'd1', { id: 'd1', from: 'forged' });
    await until(
      'the deferral waits in BullMQ',
      async () => (await (await bullJob('d1', CHECK))?.isDelayed()) === true,
    );
    const b = await start('b', []);
    checker.paid = true;
    expect(await b.pipeline.submit(CHECK, 'd1', { id: 'd1', from: 'genuine' })).toMatchObject({
      duplicate: true,
      woken: true,
    });

    await until('the woken run', async () => (await record('d1', CHECK))?.status === 'done');
    const [deferredUntil] = checker.untils;
    expect(checker.runs).toEqual([
      expect.objectContaining({ by: 'a', from: 'forged', woken: false }),
      expect.objectContaining({ from: 'genuine', woken: true, state: { checks: 1 } }),
    ]);
    expect(checker.runs[1]!.at).toBeLessThan(deferredUntil!); // before the time it deferred to
    // The deferral's own time comes and goes: nothing more runs.
    await sleep(Math.max(0, deferredUntil! - Date.now()) + LOCK_MS);
    expect(checker.runs).toHaveLength(2);
    expect(await record('d1', CHECK)).toMatchObject({
      status: 'done',
      attempts: 1,
      payload: { from: 'genuine' },
    });
  });

  it('a deferred job whose instance died is run by the other instance at its time', async () => {
    checker.deferMs = 1_500;
    const a = await start('a', []);
    await a.pipeline.submit(CHECK, 'd2', { id: 'd2', from: 'first' });
    await until(
      'the deferral waits in BullMQ',
      async () => (await (await bullJob('d2', CHECK))?.isDelayed()) === true,
    );
    await kill(a); // nothing of a is left to run it
    checker.paid = true;
    await start('b', []);

    await until('the job done by b', async () => (await record('d2', CHECK))?.status === 'done');
    expect(checker.runs).toEqual([
      expect.objectContaining({ by: 'a', woken: false, state: undefined }),
      // b's run read what a's run left for it.
      expect.objectContaining({ by: 'b', woken: false, state: { checks: 1 } }),
    ]);
    expect(checker.runs[1]!.at).toBeGreaterThanOrEqual(checker.untils[0]!);
    expect(await record('d2', CHECK)).toMatchObject({ status: 'done', attempts: 1 });
  });
});
