import { Logger } from '@nestjs/common';
import { DelayedError, Queue, Worker, type Job, type Processor, type WorkerOptions } from 'bullmq';
import {
  HubtelLogger,
  HubtelStoreUnavailableError,
  type JobExecutor,
  type JobRunRequest,
  type JobRunner,
  type JobRunnerHealth,
} from 'nestjs-hubtel';
import { ErrorLogThrottle, describeError, refuseClusterNode } from '#internal';
import { BullmqConnections, closeBounded, type BullmqConnectionOptions } from './bullmq.connection.js';
import { BULLMQ_RUNNER_DEFAULTS } from './bullmq.constants.js';
import { WorkerWatch, type Watched } from './bullmq.worker-watch.js';
import {
  BACKOFF_TYPE,
  BullmqDeadLetterError,
  BullmqRetryError,
  bullmqJobId,
  retryDelay,
} from './bullmq.jobs.js';

export interface BullmqJobRunnerOptions extends BullmqConnectionOptions {
  /** Jobs run at once per pipeline on this instance. Default 50. */
  concurrency?: number;
  /** See BULLMQ_RUNNER_DEFAULTS. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxStalledCount?: number;
  /** Run jobs on this instance (default true). False: this instance only records and enqueues. */
  work?: boolean;
  logger?: Logger;
}

/** A run's BullMQ job data: the executor reads everything else from the record. */
interface RunData {
  storeKey: string;
  /** The record as its submit wrote it, for the run's first start (see JobRunRequest.written). */
  written?: JobRunRequest['written'];
}

/**
 * The BullMQ runner: one queue and one worker per pipeline on every instance, one BullMQ job per run
 * of a recorded job. Every guarantee of time and place is BullMQ's: the job id derives from the store
 * key and run number (the same run asked twice is one job); a retry or deferral stays that job; a
 * stalled job is run by another instance. The record keeps succeeded handlers from running again.
 */
export class BullmqJobRunner implements JobRunner {
  private readonly queues = new Map<string, Queue<RunData>>();
  private readonly workers = new Map<string, Worker<RunData>>();
  /** Makes a worker again when it takes no job while one waits. */
  private readonly watch: WorkerWatch;
  /** When each worker here last started a job (or was created), by name: see health. */
  private readonly lastStarted = new Map<string, number>();
  /** Timers that put back a repeated task's job scheduler when Redis lost it, by name. */
  private readonly keepers = new Map<string, NodeJS.Timeout>();
  private readonly logger: Logger;
  /** Queue and worker errors repeat at BullMQ's retry rate: one line per distinct error per minute. */
  private readonly errors: ErrorLogThrottle;
  private readonly prefix: string;
  private readonly lockDurationMs: number;
  private readonly stalledIntervalMs: number;
  private readonly connections: BullmqConnections;
  /** The last add that failed, until one succeeds: /health is down while jobs cannot be added. */
  private addFailure?: { at: number; message: string };
  /** Processors running here, by pipeline (drain waits for none). */
  private readonly running = new Map<string, number>();
  private readonly idleWaiters: Array<() => void> = [];
  private closed = false;

  constructor(private readonly options: BullmqJobRunnerOptions) {
    this.lockDurationMs = options.lockDurationMs ?? BULLMQ_RUNNER_DEFAULTS.lockDurationMs;
    this.stalledIntervalMs = options.stalledIntervalMs ?? BULLMQ_RUNNER_DEFAULTS.stalledIntervalMs;
    this.prefix = options.prefix ?? BULLMQ_RUNNER_DEFAULTS.prefix;
    this.logger = options.logger ?? new HubtelLogger('Hubtel:BullMQ');
    this.errors = new ErrorLogThrottle(this.logger, BULLMQ_RUNNER_DEFAULTS.errorLogIntervalMs);
    this.connections = new BullmqConnections(options, this.prefix, this.errors);
    this.watch = new WorkerWatch({
      intervalMs: this.stalledIntervalMs,
      logger: this.logger,
      notTakingJobs: (name) => this.notTakingJobs(name),
      heldBack: (name) => this.heldBack(name),
    });
  }

  /** True when the runner's connection is a Redis Cluster (`cluster`, or a Cluster client). */
  get onCluster(): boolean {
    return this.connections.onCluster;
  }

  /** The queue of a pipeline (created on first use), e.g. to show it in a dashboard. */
  queue(pipeline: string): Queue<RunData> {
    let queue = this.queues.get(pipeline);
    if (!queue) {
      queue = new Queue<RunData>(pipeline, {
        connection: this.connections.for(false),
        prefix: this.prefix,
        defaultJobOptions: {
          // The pipeline decides when a job is dead: BullMQ only holds the retry.
          attempts: BULLMQ_RUNNER_DEFAULTS.attempts,
          backoff: { type: BACKOFF_TYPE },
          // A job retried for days must not grow a stack per retry.
          stackTraceLimit: 5,
          removeOnComplete: { ...BULLMQ_RUNNER_DEFAULTS.keepCompleted },
          removeOnFail: { ...BULLMQ_RUNNER_DEFAULTS.keepFailed },
        },
      });
      queue.on('error', (error) => this.errors.error(`Queue ${pipeline}: ${error.message}`));
      this.queues.set(pipeline, queue);
    }
    return queue;
  }

  /** Resolves once Redis answers; refuses a single-node connection to a Cluster node (MOVED, most keys). */
  async connect(pipeline = 'checkout'): Promise<void> {
    const queue = this.queue(pipeline);
    await queue.waitUntilReady();
    if (this.onCluster) return;
    const client = await queue.getBackend().client;
    await refuseClusterNode(
      () => client.info(),
      this.options.url !== undefined ? 'bullmq.url' : 'bullmq.connection',
    ).catch(async (error: unknown) => {
      await this.close();
      throw error;
    });
  }

  /** Adds the run's BullMQ job; the same run asked again is the same job id, which BullMQ ignores. */
  async enqueue(pipeline: string, request: JobRunRequest): Promise<void> {
    const { storeKey, written, delayMs: delay } = request;
    const jobId = bullmqJobId(storeKey, request.run);
    try {
      await this.queue(pipeline).add(
        request.type,
        written ? { storeKey, written } : { storeKey },
        delay ? { jobId, delay } : { jobId },
      );
    } catch (error) {
      const message = describeError(error);
      this.addFailure = { at: Date.now(), message };
      // A store outage: the run is tried again without an attempt charged, and a request gets its 503.
      throw new HubtelStoreUnavailableError(`BullMQ could not add a job to ${pipeline}: ${message}`, {
        cause: error,
      });
    }
    this.addFailure = undefined;
  }

  /** Promotes the run's job when it waits in the delayed set (a deferral); a no-op otherwise. */
  async wake(pipeline: string, request: JobRunRequest): Promise<void> {
    const job = await this.queue(pipeline).getJob(bullmqJobId(request.storeKey, request.run));
    if (!job || !(await job.isDelayed())) return;
    // It may have started meanwhile (its time came, or another wake): then promote refuses it.
    await job.promote().catch(() => undefined);
  }

  async start(pipeline: string, execute: JobExecutor): Promise<void> {
    if (this.closed) return;
    // Opened now, while Redis answers: one first opened in an outage would hold its first add, not fail it.
    this.queue(pipeline);
    if (this.options.work === false || this.workers.has(pipeline)) return;
    const worker = this.worker<RunData>(
      pipeline,
      (job: Job<RunData>, token?: string) => this.process(pipeline, job, token, execute),
      {
        concurrency: this.options.concurrency ?? BULLMQ_RUNNER_DEFAULTS.concurrency,
        maxStalledCount: this.options.maxStalledCount ?? BULLMQ_RUNNER_DEFAULTS.maxStalledCount,
        settings: { backoffStrategy: retryDelay },
      },
      (created) =>
        // Every retry emits `failed` too: only a job BullMQ failed for good is given up.
        created.on('failed', (job, error) => {
          if (job) void this.giveUp(pipeline, job, error, execute);
        }),
    );
    await worker.waitUntilReady();
  }

  /**
   * A BullMQ job scheduler upserted by every instance: with N instances, one run per `everyMs`, not N.
   * Each instance upserts it again when missing (Redis came back empty, or was away at start-up).
   */
  async repeat(name: string, everyMs: number, task: () => Promise<void>): Promise<void> {
    if (this.closed || this.options.work === false || this.workers.has(name)) return;
    const upsert = () =>
      this.queue(name).upsertJobScheduler(
        name,
        { every: everyMs },
        { name, opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 }, attempts: 1 } },
      );
    const keeper = setInterval(
      () => void this.keepScheduler(name, upsert),
      Math.min(Math.max(everyMs, 1_000), 60_000),
    );
    keeper.unref();
    this.keepers.set(name, keeper);
    const worker = this.worker(
      name,
      () => task(),
      { concurrency: 1 },
      (created) =>
        created.on('failed', (_job, error) => this.logger.warn(`Scheduled ${name} failed: ${error.message}`)),
    );
    // Redis away now: logged, and the keeper creates the scheduler once it is back.
    await this.keepScheduler(name, upsert, false);
    await worker.waitUntilReady();
  }

  /**
   * A worker on this runner's connection and lock timings, kept by name; its starts are watched
   * (health, WorkerWatch). `listen` adds its own listeners, to a worker made again too.
   */
  private worker<D>(
    name: string,
    process: Processor<D>,
    options: Partial<WorkerOptions>,
    listen: (worker: Worker<D>) => void,
  ): Worker<D> {
    const create = (): Watched => {
      const entry: Omit<Watched, 'worker'> = { create, concurrency: options.concurrency ?? 1, running: 0 };
      const worker = new Worker<D>(name, (job, token) => this.watch.run(entry, () => process(job, token)), {
        connection: this.connections.for(true),
        prefix: this.prefix,
        lockDuration: this.lockDurationMs,
        stalledInterval: this.stalledIntervalMs,
        ...options,
      });
      this.lastStarted.set(name, Date.now());
      worker.on('error', (error) => this.errors.error(`Worker ${name}: ${error.message}`));
      worker.on('active', () => this.lastStarted.set(name, Date.now()));
      listen(worker);
      this.workers.set(name, worker as unknown as Worker<RunData>);
      const watched = Object.assign(entry, { worker: worker as unknown as Worker<never> });
      this.watch.add(name, watched);
      return watched;
    };
    return create().worker as unknown as Worker<D>;
  }

  /**
   * A job due and not taken, when `name`'s worker started none for a takeover: the oldest waiting
   * one older than that, else a delayed one due that long ago. A worker promotes its queue's delayed
   * jobs when due itself, so one stuck leaves them delayed: a repeated task has nothing else.
   */
  private async notTakingJobs(name: string): Promise<{ jobId: string; idleMs: number } | undefined> {
    const now = Date.now();
    const bound = this.lockDurationMs + this.stalledIntervalMs;
    const idleMs = now - (this.lastStarted.get(name) ?? now);
    if (idleMs <= bound) return undefined;
    const queue = this.queue(name);
    const [oldest] = await queue.getJobs(['waiting'], 0, 0, true);
    if (oldest?.id !== undefined && now - oldest.timestamp > bound) return { jobId: oldest.id, idleMs };
    if ((await queue.getDelayedCount(now - bound)) === 0) return undefined;
    const [soonest] = await queue.getJobs(['delayed'], 0, 0, true);
    return soonest?.id !== undefined ? { jobId: soonest.id, idleMs } : undefined;
  }

  /** Jobs wait by design on a queue paused (a dashboard), rate-limited or at its global concurrency. */
  private async heldBack(name: string): Promise<boolean> {
    const queue = this.queue(name);
    const [paused, limitedMs, limit] = await Promise.all([
      queue.isPaused(),
      queue.getRateLimitTtl(),
      queue.getGlobalConcurrency(),
    ]);
    return paused || limitedMs > 0 || (limit !== null && (await queue.getActiveCount()) >= limit);
  }

  private async keepScheduler(name: string, upsert: () => Promise<unknown>, look = true): Promise<void> {
    try {
      if (!look) return void (await upsert());
      if (await this.queue(name).getJobScheduler(name)) return;
      if (this.closed || !this.keepers.has(name)) return;
      await upsert();
      this.logger.warn(
        `Job scheduler ${name} was missing from Redis (emptied, or away at start-up): created again`,
      );
    } catch (error) {
      this.errors.error(`Job scheduler ${name}: ${describeError(error)}`);
    }
  }

  async stop(pipeline: string): Promise<void> {
    clearInterval(this.keepers.get(pipeline));
    this.keepers.delete(pipeline);
    const worker = this.workers.get(pipeline);
    if (!worker) return;
    this.workers.delete(pipeline);
    this.watch.remove(pipeline);
    await closeBounded(worker);
  }

  /** Resolves when no run of the pipeline is being executed by this process. */
  async drain(pipeline: string): Promise<void> {
    while ((this.running.get(pipeline) ?? 0) > 0)
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Up when Redis answers, every worker here runs and takes jobs, and the last add did not fail (within
   * `addFailureWindowMs`). A round trip to a Redis that went away waits: health checks bound it.
   */
  async health(): Promise<JobRunnerHealth> {
    const workers: Record<string, boolean> = {};
    for (const [name, worker] of this.workers) workers[name] = worker.isRunning();
    const allRunning = Object.values(workers).every(Boolean);
    if (this.closed) return { up: false, details: { redis: 'closed', workers } };
    const queue = this.queues.values().next().value ?? this.queue('checkout');
    const client = await queue.getBackend().client;
    // A Cluster client says `connect` once it is usable (it has no `ready` of its own).
    const usable = client.status === 'ready' || (this.onCluster && client.status === 'connect');
    if (!usable) return { up: false, details: { redis: client.status, workers } };
    // A round trip that reads nothing, in the queues' slot (the backend's client has no PING).
    await client.get(`${this.prefix}:health`);
    const failure = this.addFailure;
    if (failure && Date.now() - failure.at < BULLMQ_RUNNER_DEFAULTS.addFailureWindowMs)
      return { up: false, details: { redis: 'ready', workers, add: `failing: ${failure.message}` } };
    const stuck: Record<string, string> = {};
    for (const name of this.workers.keys()) {
      const waited = await this.notTakingJobs(name);
      if (waited !== undefined && !(await this.heldBack(name))) {
        workers[name] = false;
        stuck[name] = `none started here for ${Math.round(waited.idleMs / 1000)} s while a job is due`;
      }
    }
    // Workers made again (WorkerWatch): shown for the operator, up once they take jobs.
    const restarted = this.watch.restarted();
    const seen = restarted ? { restarted } : {};
    if (Object.keys(stuck).length > 0)
      return { up: false, details: { redis: 'ready', workers, notTakingJobs: stuck, ...seen } };
    return { up: allRunning, details: { redis: 'ready', workers, ...seen } };
  }

  /** Stops every worker and closes every connection (at once when Redis does not answer). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([
      ...[...this.workers.keys()].map((pipeline) => this.stop(pipeline)),
      this.watch.close(),
    ]);
    await Promise.all([...this.queues.values()].map((queue) => closeBounded(queue)));
    this.queues.clear();
    await this.connections.close();
  }

  private async process(
    pipeline: string,
    job: Job<RunData>,
    token: string | undefined,
    execute: JobExecutor,
  ): Promise<void> {
    this.running.set(pipeline, (this.running.get(pipeline) ?? 0) + 1);
    try {
      // The record as written goes to the first start only: a retry, deferral or takeover reads the store.
      const first = job.attemptsStarted <= 1 && job.stalledCounter === 0;
      const outcome = await execute(job.data.storeKey, undefined, first ? job.data.written : undefined);
      // A dead letter fails its BullMQ job for good, so dashboards show it as failed.
      if (outcome.kind === 'settled') {
        if (outcome.dead !== undefined) throw new BullmqDeadLetterError(outcome.dead);
        return;
      }
      if (outcome.kind === 'retry') throw new BullmqRetryError(outcome.delayMs, outcome.error);
      // Moved to the delayed set first, then asked for a wake: a duplicate that came before either is seen.
      await job.moveToDelayed(outcome.until, token);
      if (await outcome.woken().catch(() => false)) await job.promote().catch(() => undefined);
      throw new DelayedError();
    } finally {
      const left = (this.running.get(pipeline) ?? 1) - 1;
      if (left > 0) this.running.set(pipeline, left);
      else this.running.delete(pipeline);
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** A job BullMQ failed for good (a crash loop): the executor settles the record dead. */
  private async giveUp(
    pipeline: string,
    job: Job<RunData>,
    error: Error,
    execute: JobExecutor,
  ): Promise<void> {
    if (error instanceof BullmqDeadLetterError) return; // settled dead by the pipeline itself
    try {
      // Every retry emits `failed` too: a retry is back in the delayed set.
      if (!(await job.isFailed())) return;
      this.logger.warn(`Run ${job.id ?? '?'} of ${pipeline} failed for good: ${error.message}`);
      await execute(job.data.storeKey, error.message);
    } catch (failure) {
      this.errors.error(
        `Run ${job.id ?? '?'} of ${pipeline} failed for good and could not be settled: ${describeError(failure)}`,
      );
    }
  }
}
