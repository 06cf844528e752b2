import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import type { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { JobExecutor, JobRunRequest } from 'nestjs-hubtel';
import { RedisServer, redisBinary, redisDatabase, type RedisDatabase } from './support/redis-server.js';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { BullmqJobRunner, type BullmqJobRunnerOptions } from '../libs/bullmq/src/bullmq.job-runner.js';
import { bullmqJobId } from '../libs/bullmq/src/bullmq.jobs.js';
import { within } from '../libs/core/src/retry/backoff.js';

/**
 * The runner alone (no pipeline): two instances sharing one redis-server, each given an executor
 * written here that counts its calls. What a pipeline relies on: one execution per run number,
 * retries and deferrals held by BullMQ with the delays the executor named, a wake, the takeover of
 * a dead instance's run, a run BullMQ gives up handed back to the executor, one repeated task per
 * interval across instances.
 */

const PIPELINE = 'orders';
const TYPE = 'orders.paid';
const quiet = new Logger('test');
quiet.localInstance.log = () => undefined;
quiet.localInstance.warn = () => undefined;
quiet.localInstance.error = () => undefined;

/** One call of an executor: which instance, when, and the give-up reason if any. */
interface Call {
  on: string;
  storeKey: string;
  at: number;
  giveUp?: string;
  /** The record as written, when the runner gave it (a run's first start). */
  written?: unknown;
}

function request(key: string, run = 1): JobRunRequest {
  return { storeKey: `hubtel:${PIPELINE}:job:${TYPE}:${key}`, type: TYPE, run };
}

async function until(
  check: () => Promise<boolean> | boolean,
  what: string,
  withinMs = 20_000,
): Promise<void> {
  const giveUp = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`Still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

redisBinary.describe('BullmqJobRunner (two instances, one Redis)', () => {
  let server: RedisDatabase;
  let admin: Redis;
  let runners: BullmqJobRunner[] = [];
  let calls: Call[] = [];

  beforeAll(async () => {
    server = await redisDatabase();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.dispose();
  });
  afterEach(async () => {
    await Promise.all(runners.map((runner) => runner.close()));
    runners = [];
    calls = [];
    await admin.flushdb();
  });

  function runner(options: Partial<BullmqJobRunnerOptions> = {}): BullmqJobRunner {
    const created = new BullmqJobRunner({
      url: server.url,
      stalledIntervalMs: 500,
      logger: quiet,
      ...options,
    });
    runners.push(created);
    return created;
  }

  /**
   * A runner working the pipeline with an executor that records each call, then answers what
   * `answer` says (by default: settled).
   */
  async function instance(
    on: string,
    answer: (call: Call, calls: Call[]) => ReturnType<JobExecutor> = async () => ({ kind: 'settled' }),
    options: Partial<BullmqJobRunnerOptions> = {},
  ): Promise<BullmqJobRunner> {
    const created = runner(options);
    await created.start(PIPELINE, async (storeKey, giveUp, written) => {
      const call: Call = {
        on,
        storeKey,
        at: Date.now(),
        ...(giveUp === undefined ? {} : { giveUp }),
        ...(written === undefined ? {} : { written }),
      };
      calls.push(call);
      return answer(
        call,
        calls.filter((c) => c.storeKey === storeKey),
      );
    });
    return created;
  }

  function callsOf(key: string): Call[] {
    return calls.filter((call) => call.storeKey === request(key).storeKey);
  }

  function queueOf(of: BullmqJobRunner): Queue {
    return of.queue(PIPELINE);
  }

  /** Kills an instance: its workers stop at once (no graceful close, no lock renewal), its queues drop. */
  async function kill(victim: BullmqJobRunner): Promise<void> {
    const internals = victim as unknown as { workers: Map<string, Worker>; queues: Map<string, Queue> };
    for (const worker of internals.workers.values()) await worker.close(true);
    for (const queue of internals.queues.values()) await queue.disconnect();
  }

  it('logs a repeated queue or worker error once per interval, not at the rate BullMQ repeats it', async () => {
    const lines: string[] = [];
    const logger = new Logger('test');
    logger.localInstance.error = (message: unknown) => void lines.push(String(message));
    const own = runner({ logger });
    await own.start(PIPELINE, async () => ({ kind: 'settled' }));
    const worker = (own as unknown as { workers: Map<string, EventEmitter> }).workers.get(PIPELINE)!;
    // A CROSSSLOT prefix made a worker emit this about 20,000 times a second.
    for (let i = 0; i < 20_000; i++) worker.emit('error', new Error('CROSSSLOT Keys in request'));
    worker.emit('error', new Error('Connection is closed.'));
    expect(lines).toEqual([
      `Worker ${PIPELINE}: CROSSSLOT Keys in request`,
      `Worker ${PIPELINE}: Connection is closed.`,
    ]);
  });

  it('is healthy while its Redis answers and its workers run, not once closed', async () => {
    const a = await instance('a');
    await expect(a.health()).resolves.toEqual({
      up: true,
      details: { redis: 'ready', workers: { [PIPELINE]: true } },
    });
    await a.close();
    await expect(a.health()).resolves.toMatchObject({ up: false });
  });

  it('executes a run enqueued by both instances once, on either; another run number executes again', async () => {
    const a = await instance('a');
    const b = await instance('b');
    const keys = Array.from({ length: 30 }, (_, i) => `order-${i}`);
    for (const [i, key] of keys.entries()) {
      // The same run asked by both instances (a sender's retry reaching the other one).
      await (i % 2 ? a : b).enqueue(PIPELINE, request(key));
      await (i % 2 ? b : a).enqueue(PIPELINE, request(key));
    }
    await until(() => calls.length >= keys.length, 'every run executed');
    // Time for a second execution of any run, were there one.
    await sleep(500);
    expect(calls.map((call) => call.storeKey).sort()).toEqual(
      keys.map((key) => request(key).storeKey).sort(),
    );
    expect(calls.every((call) => call.giveUp === undefined)).toBe(true);
    // Each run is one BullMQ job: named after the job type, its id from the store key and run.
    const completed = await queueOf(a).getJobs(['completed']);
    expect(completed.map((job) => job.id).sort()).toEqual(
      keys.map((key) => bullmqJobId(request(key).storeKey, 1)).sort(),
    );
    expect(completed.every((job) => job.name === TYPE)).toBe(true);
    expect(completed[0]!.data).toEqual({
      storeKey: expect.stringMatching(/^hubtel:orders:job:orders\.paid:order-/),
    });

    // Asked again once it completed: still the same job, nothing runs.
    await b.enqueue(PIPELINE, request('order-0'));
    // A replay is a new run number: it runs again.
    await a.enqueue(PIPELINE, request('order-0', 2));
    await until(() => callsOf('order-0').length === 2, 'the second run');
    await sleep(300);
    expect(callsOf('order-0')).toHaveLength(2);
  });

  it('keeps the ids readable and free of ":" (which BullMQ refuses in custom ids)', () => {
    expect(bullmqJobId('hubtel:orders:job:orders.paid:a%b', 3)).toBe(
      'hubtel%3Aorders%3Ajob%3Aorders.paid%3Aa%25b@3',
    );
  });

  it('retries a run after the delay the executor named, as the same BullMQ job, until it is settled', async () => {
    const delays = [300, 600];
    const answer = async (_call: Call, mine: Call[]) =>
      mine.length <= delays.length
        ? {
            kind: 'retry' as const,
            delayMs: delays[mine.length - 1]!,
            error: `handler failed (${mine.length})`,
          }
        : { kind: 'settled' as const };
    const a = await instance('a', answer);
    await instance('b', answer);
    await a.enqueue(PIPELINE, request('r1'));
    await until(() => callsOf('r1').length === 3, 'the third execution');
    const [first, second, third] = callsOf('r1');
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(300);
    expect(third!.at - second!.at).toBeGreaterThanOrEqual(600);
    // A retry is never a give-up.
    expect(callsOf('r1').every((call) => call.giveUp === undefined)).toBe(true);

    const id = bullmqJobId(request('r1').storeKey, 1);
    await until(
      async () => (await (await queueOf(a).getJob(id))?.isCompleted()) === true,
      'the job completed',
    );
    const done = (await queueOf(a).getJob(id))!;
    // The attempts BullMQ will never run out of were accepted as they are.
    expect(done.opts.attempts).toBe(BULLMQ_RUNNER_DEFAULTS.attempts);
    expect(done.attemptsMade).toBe(3);
    expect(done.failedReason).toBe('handler failed (2)');
    await sleep(300);
    expect(callsOf('r1')).toHaveLength(3);
  });

  it("gives the record as written to a run's first start only: not to its retry, nor to its deferral's next start", async () => {
    const written = { value: { status: 'pending', attempts: 0 }, version: 1 } as never;
    const a = await instance('a', async (call, mine) => {
      if (mine.length > 1) return { kind: 'settled' };
      return call.storeKey === request('g1').storeKey
        ? { kind: 'retry', delayMs: 100, error: 'handler failed' }
        : { kind: 'defer', until: Date.now() + 300, woken: async () => false };
    });
    await a.enqueue(PIPELINE, { ...request('g1'), written });
    await a.enqueue(PIPELINE, { ...request('g2'), written });
    // Asked again without it (a duplicate's request): the same job, the record it was added with.
    await a.enqueue(PIPELINE, request('g2'));
    await until(() => callsOf('g1').length === 2 && callsOf('g2').length === 2, 'the second starts');
    for (const key of ['g1', 'g2'])
      expect(callsOf(key).map((call) => call.written)).toEqual([
        { value: { status: 'pending', attempts: 0 }, version: 1 },
        undefined,
      ]);
  });

  it('retries a run whose executor threw (the store unreachable) after retryDelayMs', async () => {
    const a = await instance('a', async (_call, mine) => {
      if (mine.length === 1) throw new Error('store down');
      return { kind: 'settled' };
    });
    await a.enqueue(PIPELINE, request('s1'));
    await until(() => callsOf('s1').length === 2, 'the retry', 10_000);
    const [first, second] = callsOf('s1');
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(BULLMQ_RUNNER_DEFAULTS.retryDelayMs);
    expect(second!.giveUp).toBeUndefined();
  });

  it('runs a deferred run again at its time, without counting an attempt', async () => {
    let until1 = 0;
    const a = await instance('a', async (_call, mine) => {
      if (mine.length > 1) return { kind: 'settled' };
      until1 = Date.now() + 800;
      return { kind: 'defer', until: until1, woken: async () => false };
    });
    await a.enqueue(PIPELINE, request('d1'));
    const id = bullmqJobId(request('d1').storeKey, 1);
    await until(async () => (await (await queueOf(a).getJob(id))?.isDelayed()) === true, 'the deferral');
    await until(() => callsOf('d1').length === 2, 'the deferred run');
    expect(callsOf('d1')[1]!.at).toBeGreaterThanOrEqual(until1);
    await until(
      async () => (await (await queueOf(a).getJob(id))?.isCompleted()) === true,
      'the job completed',
    );
    // One attempt: the completion (a deferral is no failure).
    expect((await queueOf(a).getJob(id))!.attemptsMade).toBe(1);
  });

  it('a wake from the other instance starts a deferred run at once; a wake of a run not waiting does nothing', async () => {
    const answer = async (_call: Call, mine: Call[]) =>
      mine.length === 1
        ? { kind: 'defer' as const, until: Date.now() + 60_000, woken: async () => false }
        : { kind: 'settled' as const };
    const a = await instance('a', answer);
    const b = await instance('b', answer);
    // Nothing to wake: neither an unknown run nor a running or finished one.
    await b.wake(PIPELINE, request('w1'));
    await a.enqueue(PIPELINE, request('w1'));
    const id = bullmqJobId(request('w1').storeKey, 1);
    await until(async () => (await (await queueOf(a).getJob(id))?.isDelayed()) === true, 'the deferral');
    const woke = Date.now();
    await b.wake(PIPELINE, request('w1'));
    await until(() => callsOf('w1').length === 2, 'the woken run', 5_000);
    expect(callsOf('w1')[1]!.at - woke).toBeLessThan(5_000);
    await until(
      async () => (await (await queueOf(a).getJob(id))?.isCompleted()) === true,
      'the job completed',
    );
    await b.wake(PIPELINE, request('w1'));
    await sleep(300);
    expect(callsOf('w1')).toHaveLength(2);
  });

  it('a deferred run woken before it was set to wait (a duplicate came meanwhile) runs again at once', async () => {
    const a = await instance('a', async (_call, mine) =>
      mine.length === 1
        ? { kind: 'defer', until: Date.now() + 60_000, woken: async () => true }
        : { kind: 'settled' },
    );
    await a.enqueue(PIPELINE, request('w2'));
    await until(() => callsOf('w2').length === 2, 'the run again', 5_000);
    const [first, second] = callsOf('w2');
    expect(second!.at - first!.at).toBeLessThan(5_000);
    const id = bullmqJobId(request('w2').storeKey, 1);
    await until(
      async () => (await (await queueOf(a).getJob(id))?.isCompleted()) === true,
      'the job completed',
    );
  });

  it('the run of an instance killed mid-execution is executed by the other instance', async () => {
    const short = { lockDurationMs: 1_000, stalledIntervalMs: 300 };
    // a never returns: it stands for a process that dies inside the run.
    const a = await instance('a', () => new Promise(() => undefined), short);
    await a.enqueue(PIPELINE, { ...request('k1'), written: { value: { attempts: 0 }, version: 1 } as never });
    await until(() => callsOf('k1').length === 1, 'the run on a');
    const b = await instance('b', async () => ({ kind: 'settled' }), short);
    await kill(a);
    await until(() => callsOf('k1').length === 2, 'the run taken over by b');
    // The record as written only to the first start: the takeover reads what a may have written.
    expect(callsOf('k1').map(({ on, giveUp, written }) => ({ on, giveUp, written }))).toEqual([
      { on: 'a', giveUp: undefined, written: { value: { attempts: 0 }, version: 1 } },
      { on: 'b', giveUp: undefined, written: undefined },
    ]);
    const id = bullmqJobId(request('k1').storeKey, 1);
    await until(
      async () => (await (await queueOf(b).getJob(id))?.isCompleted()) === true,
      'the job completed',
    );
  });

  it('a run BullMQ fails for good (stalled more than maxStalledCount) is handed to the executor to give up, once', async () => {
    const short = { lockDurationMs: 1_000, stalledIntervalMs: 300, maxStalledCount: 0 };
    const a = await instance('a', () => new Promise(() => undefined), short);
    await a.enqueue(PIPELINE, request('g1'));
    await until(() => callsOf('g1').length === 1, 'the run on a');
    const b = await instance('b', async () => ({ kind: 'settled' }), short);
    await kill(a);
    await until(() => callsOf('g1').length === 2, 'the give-up on b');
    await sleep(500);
    expect(callsOf('g1')).toEqual([
      expect.objectContaining({ on: 'a' }),
      expect.objectContaining({ on: 'b', giveUp: expect.stringMatching(/\S/) }),
    ]);
    // Kept in the failed set for dashboards (the dead letter itself is the store record).
    const job = (await queueOf(b).getJob(bullmqJobId(request('g1').storeKey, 1)))!;
    expect(await job.isFailed()).toBe(true);
  });

  it('a run the executor settled dead ends in the failed set, with its reason, and is not given up again', async () => {
    const a = await instance('a', async () => ({ kind: 'settled', dead: 'handler kept failing' }));
    await a.enqueue(PIPELINE, request('d1'));
    const id = bullmqJobId(request('d1').storeKey, 1);
    await until(async () => (await queueOf(a).getJob(id))?.failedReason !== undefined, 'the failed job');
    const job = (await queueOf(a).getJob(id))!;
    expect(await job.isFailed()).toBe(true);
    expect(job.failedReason).toBe('handler kept failing');
    await sleep(300);
    // The pipeline wrote the dead letter already: its executor is not asked to give up.
    expect(callsOf('d1')).toEqual([expect.not.objectContaining({ giveUp: expect.anything() })]);
  });
  it('drain resolves once no run of the pipeline executes here', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const a = await instance('a', async () => {
      await gate;
      return { kind: 'settled' };
    });
    await a.drain(PIPELINE);
    await a.enqueue(PIPELINE, request('n1'));
    await until(() => callsOf('n1').length === 1, 'the run');
    let drained = false;
    const draining = a.drain(PIPELINE).then(() => (drained = true));
    await sleep(200);
    expect(drained).toBe(false);
    release();
    await draining;
    expect(drained).toBe(true);
  });

  it("creates a repeated task's job scheduler again when Redis lost it (a flush), and the task runs on", async () => {
    const ticks: number[] = [];
    const a = runner();
    await a.repeat('orders-sweep', 300, async () => void ticks.push(Date.now()));
    await until(() => ticks.length > 0, 'a first run');
    await admin.flushdb();
    const wiped = Date.now();
    // The scheduler is looked for every interval (at least a second): back within a few.
    await until(() => ticks.some((at) => at > wiped + 100), 'a run after the flush', 10_000);
    expect(await a.queue('orders-sweep').getJobScheduler('orders-sweep')).toMatchObject({ every: 300 });
  });

  it('is down while a job waits longer than a takeover and its worker here starts none', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // One job at a time, the first holding it: the second waits, its worker takes nothing.
    const a = await instance(
      'a',
      async (_call, [first]) => {
        if (first?.storeKey === request('held').storeKey) await held;
        return { kind: 'settled' };
      },
      { concurrency: 1, lockDurationMs: 1_000 },
    );
    await a.enqueue(PIPELINE, request('held'));
    await until(() => callsOf('held').length === 1, 'the held run');
    await a.enqueue(PIPELINE, request('waiting'));
    // Past lockDurationMs + stalledIntervalMs (1.5 s): down, saying which worker and why.
    await until(async () => !(await a.health()).up, 'health down', 5_000);
    const down = {
      up: false,
      details: {
        redis: 'ready',
        workers: { [PIPELINE]: false },
        notTakingJobs: {
          [PIPELINE]: expect.stringMatching(/^none started here for \d+ s while a job is due$/),
        },
      },
    };
    expect(await a.health()).toEqual(down);
    // Busy at its concurrency, the worker is not taken for stuck: not started again (no `restarted`)
    // after four checks (one per stalled interval).
    await sleep(2_000);
    expect(await a.health()).toEqual(down);
    release();
    await until(() => callsOf('waiting').length === 1, 'the waiting run');
    await expect(a.health()).resolves.toMatchObject({ up: true });
  });

  it('takes no idle worker for stuck while its only job is deferred past a takeover, not yet due', async () => {
    // A first run of 3 s that defers 4 s: the job was added 7 s before it is due (its delay alone
    // counts from the deferral), the worker idle meanwhile, far past a takeover (1.5 s).
    const a = await instance(
      'a',
      async (_call, mine) => {
        if (mine.length > 1) return { kind: 'settled' };
        await sleep(3_000);
        return { kind: 'defer', until: Date.now() + 4_000, woken: async () => false };
      },
      { lockDurationMs: 1_000 },
    );
    await a.enqueue(PIPELINE, request('late'));
    await until(() => callsOf('late').length === 1, 'the first run');
    const checks: Array<Awaited<ReturnType<BullmqJobRunner['health']>>> = [];
    while (callsOf('late').length < 2) {
      checks.push(await a.health());
      await sleep(250);
    }
    expect(checks.length).toBeGreaterThan(20);
    expect(checks.filter((check) => !check.up || 'restarted' in (check.details ?? {}))).toEqual([]);
    await sleep(1_000);
    expect(await a.health()).toEqual({
      up: true,
      details: { redis: 'ready', workers: { [PIPELINE]: true } },
    });
  });

  it('takes no worker for stuck while its queue holds jobs back: rate-limited, or at its global concurrency', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const a = await instance(
      'a',
      async (call) => {
        if (call.storeKey === request('held').storeKey) await held;
        return { kind: 'settled' };
      },
      { lockDurationMs: 1_000 },
    );
    const queue = queueOf(a);
    // One job per 5 s: the second waits past a takeover (1.5 s) with the worker idle.
    await queue.setGlobalRateLimit(1, 5_000);
    await a.enqueue(PIPELINE, request('first'));
    await a.enqueue(PIPELINE, request('limited'));
    await until(() => callsOf('first').length === 1, 'the first run');
    const checks: Array<Awaited<ReturnType<BullmqJobRunner['health']>>> = [];
    while (callsOf('limited').length === 0) {
      checks.push(await a.health());
      await sleep(250);
    }
    expect(checks.length).toBeGreaterThan(10);
    expect(checks.filter((check) => !check.up || 'restarted' in (check.details ?? {}))).toEqual([]);
    await queue.removeGlobalRateLimit();
    // One job at a time across the instances, held: the next waits while this worker has room.
    await queue.setGlobalConcurrency(1);
    await a.enqueue(PIPELINE, request('held'));
    await until(() => callsOf('held').length === 1, 'the held run');
    await a.enqueue(PIPELINE, request('queued'));
    await sleep(4_000);
    expect(callsOf('queued')).toEqual([]);
    expect(await a.health()).toEqual({
      up: true,
      details: { redis: 'ready', workers: { [PIPELINE]: true } },
    });
    release();
    await until(() => callsOf('queued').length === 1, 'the queued run');
    await queue.removeGlobalConcurrency();
  });

  it('runs a repeated task once per interval across two instances', async () => {
    const ticks: Array<{ on: string; at: number }> = [];
    const EVERY_MS = 250;
    const a = runner();
    const b = runner();
    const started = Date.now();
    await a.repeat('orders-sweep', EVERY_MS, async () => void ticks.push({ on: 'a', at: Date.now() }));
    await b.repeat('orders-sweep', EVERY_MS, async () => void ticks.push({ on: 'b', at: Date.now() }));
    // Six runs, however late a loaded machine runs them (a late run may come just before the
    // next one: no gap between runs is a sign of anything).
    await until(() => ticks.length >= 6, 'six runs');
    // One run per interval, not one per instance: one scheduler, and no more runs than intervals
    // gone by (one per instance would be twice as many).
    expect(await a.queue('orders-sweep').getJobSchedulers()).toHaveLength(1);
    expect(ticks.length).toBeLessThanOrEqual(Math.floor((ticks.at(-1)!.at - started) / EVERY_MS) + 1);
  });
});

redisBinary.describe('BullmqJobRunner while its Redis is away', () => {
  it('an add fails at once (the inbound request gets its 503), and works again once Redis is back', async () => {
    const server = await RedisServer.start();
    const runner = new BullmqJobRunner({ url: server.url, logger: quiet });
    try {
      await runner.connect(PIPELINE);
      await runner.enqueue(PIPELINE, request('before'));
      await server.stop();
      const outcome = await within(
        runner.enqueue(PIPELINE, request('during')).then(
          () => 'added',
          () => 'refused',
        ),
        5_000,
        'still waiting',
      );
      expect(outcome).toBe('refused');
      await server.restart();
      await until(
        () =>
          runner.enqueue(PIPELINE, request('after')).then(
            () => true,
            () => false,
          ),
        'an add once Redis is back',
      );
    } finally {
      await runner.close();
      await server.dispose();
    }
  });
});
