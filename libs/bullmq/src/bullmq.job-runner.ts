import { Logger } from '@nestjs/common';
import { Queue, Worker, type ConnectionOptions, type Job, type QueueOptions } from 'bullmq';
import {
  HubtelError,
  HubtelLogger,
  type JobExecutor,
  type JobRunRequest,
  type JobRunner,
  type JobRunnerHealth,
} from 'nestjs-hubtel';
import { BULLMQ_RUNNER_DEFAULTS } from './bullmq.constants.js';

export interface BullmqJobRunnerOptions {
  /** Redis URL (`redis://host:6379/0`). Or `connection`. */
  url?: string;
  /**
   * ioredis options (BullMQ opens its own connections from them; workers get
   * `maxRetriesPerRequest: null`, as BullMQ requires). Redis must run with
   * `maxmemory-policy noeviction`.
   */
  connection?: Exclude<ConnectionOptions, { options: unknown }> & Record<string, unknown>;
  /** BullMQ key prefix. Default `hubtel:bull`. */
  prefix?: string;
  /** Jobs run at once per pipeline on this instance. Default 50. */
  concurrency?: number;
  /** See BULLMQ_RUNNER_DEFAULTS. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxStalledCount?: number;
  /** Run jobs on this instance (default true). False: this instance only records and enqueues. */
  work?: boolean;
  /**
   * Default false: every run of a job, the first included, is a BullMQ job, added before the
   * sender's 2xx; any instance's worker runs it, a dead instance's run is taken over by BullMQ's
   * stalled-job check, and each run shows in BullMQ dashboards.
   * True (lower latency): a new job's first run starts on the instance that received it, at once,
   * without the queue's round trips. The trade: first runs are not BullMQ jobs (a dashboard sees a
   * job only from its first retry), and a first run whose instance died is handed to BullMQ by a
   * pipeline's sweep once its lease (`lockDurationMs`) ran out. Retries and deferrals are BullMQ
   * jobs either way.
   */
  firstRunHere?: boolean;
  logger?: Logger;
}

interface RunData {
  storeKey: string;
  attempt: number;
  /** The record's deferral count when the run was asked (absent: 0). */
  deferral?: number;
}

/**
 * The BullMQ runner: one queue per pipeline (`checkout`, `service-app`), one worker per pipeline
 * on every instance. A run's job id is derived from the record's store key and the run number,
 * so the same run asked by two instances is one BullMQ job; a job whose worker died is found
 * stalled (its lock expired) and run by another instance, where the record (compare-and-set,
 * handlers done by identity) keeps every handler that already succeeded from running again.
 * Handler retries are delayed jobs of the next run number, with the pipeline's backoff.
 */
export class BullmqJobRunner implements JobRunner {
  readonly leaseMs: number;
  readonly firstRunHere: boolean;
  private readonly queues = new Map<string, Queue<RunData>>();
  private readonly workers = new Map<string, Worker<RunData>>();
  private readonly logger: Logger;
  private readonly prefix: string;
  private closed = false;

  constructor(private readonly options: BullmqJobRunnerOptions) {
    if (!options.url && !options.connection)
      throw new HubtelError('HUBTEL_CONFIG_INVALID', 'BullmqJobRunner needs a `url` or a `connection`');
    this.leaseMs = options.lockDurationMs ?? BULLMQ_RUNNER_DEFAULTS.lockDurationMs;
    this.firstRunHere =
      options.work !== false && (options.firstRunHere ?? BULLMQ_RUNNER_DEFAULTS.firstRunHere);
    this.prefix = options.prefix ?? BULLMQ_RUNNER_DEFAULTS.prefix;
    this.logger = options.logger ?? new HubtelLogger('Hubtel:BullMQ');
  }

  /** The queue of a pipeline (created on first use), e.g. to show it in a dashboard. */
  queue(pipeline: string): Queue<RunData> {
    let queue = this.queues.get(pipeline);
    if (!queue) {
      queue = new Queue<RunData>(pipeline, {
        connection: this.connection(false),
        prefix: this.prefix,
        defaultJobOptions: {
          attempts: BULLMQ_RUNNER_DEFAULTS.processorAttempts,
          backoff: { type: 'exponential', delay: BULLMQ_RUNNER_DEFAULTS.retryDelayMs },
          removeOnComplete: { ...BULLMQ_RUNNER_DEFAULTS.keepCompleted },
          // A failed run is logged; removed so the pipeline's sweep can ask for it again.
          removeOnFail: true,
        },
      });
      queue.on('error', (error) => this.logger.error(`Queue ${pipeline}: ${error.message}`));
      this.queues.set(pipeline, queue);
    }
    return queue;
  }

  /** Resolves once Redis answers (startup fails fast on a wrong URL). */
  async connect(pipeline = 'checkout'): Promise<void> {
    await this.queue(pipeline).waitUntilReady();
  }

  async schedule(pipeline: string, request: JobRunRequest): Promise<void> {
    const data: RunData = { storeKey: request.storeKey, attempt: request.attempt };
    if (request.deferral) data.deferral = request.deferral;
    await this.queue(pipeline).add(request.type, data, {
      jobId: bullmqJobId(request.storeKey, request.attempt, request.deferral),
      ...(request.delayMs > 0 ? { delay: request.delayMs } : {}),
    });
  }

  async start(pipeline: string, execute: JobExecutor): Promise<void> {
    if (this.closed || this.options.work === false || this.workers.has(pipeline)) return;
    const worker = new Worker<RunData>(
      pipeline,
      (job: Job<RunData>) => execute(job.data.storeKey, job.data),
      {
        connection: this.connection(true),
        prefix: this.prefix,
        concurrency: this.options.concurrency ?? BULLMQ_RUNNER_DEFAULTS.concurrency,
        lockDuration: this.leaseMs,
        stalledInterval: this.options.stalledIntervalMs ?? BULLMQ_RUNNER_DEFAULTS.stalledIntervalMs,
        maxStalledCount: this.options.maxStalledCount ?? BULLMQ_RUNNER_DEFAULTS.maxStalledCount,
      },
    );
    worker.on('error', (error) => this.logger.error(`Worker ${pipeline}: ${error.message}`));
    worker.on('failed', (job, error) =>
      this.logger.warn(`Run ${job?.id ?? '?'} of ${pipeline} failed: ${error.message}`),
    );
    this.workers.set(pipeline, worker);
    await worker.waitUntilReady();
  }

  /**
   * A BullMQ job scheduler named `name` (in a queue of that name), upserted by every instance (the
   * same schedule), whose jobs one worker runs at a time on each instance: with N instances, one
   * run per `everyMs`, not N.
   */
  async repeat(name: string, everyMs: number, task: () => Promise<void>): Promise<void> {
    if (this.closed || this.options.work === false || this.workers.has(name)) return;
    await this.queue(name).upsertJobScheduler(
      name,
      { every: everyMs },
      { name, opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 }, attempts: 1 } },
    );
    const worker = new Worker(name, () => task(), {
      connection: this.connection(true),
      prefix: this.prefix,
      concurrency: 1,
      lockDuration: this.leaseMs,
      stalledInterval: this.options.stalledIntervalMs ?? BULLMQ_RUNNER_DEFAULTS.stalledIntervalMs,
    });
    worker.on('error', (error) => this.logger.error(`Worker ${name}: ${error.message}`));
    worker.on('failed', (_job, error) => this.logger.warn(`Scheduled ${name} failed: ${error.message}`));
    this.workers.set(name, worker as unknown as Worker<RunData>);
    await worker.waitUntilReady();
  }

  async stop(pipeline: string): Promise<void> {
    const worker = this.workers.get(pipeline);
    if (!worker) return;
    this.workers.delete(pipeline);
    await bounded(worker.close(), () => worker.disconnect());
  }

  /**
   * Up when the queue's Redis connection is ready and answers a PING, and every worker of this
   * instance runs. (A PING to a Redis that went away waits for its reconnection: health checks
   * bound it with their own time-out.)
   */
  async health(): Promise<JobRunnerHealth> {
    const workers: Record<string, boolean> = {};
    for (const [name, worker] of this.workers) workers[name] = worker.isRunning();
    const allRunning = Object.values(workers).every(Boolean);
    if (this.closed) return { up: false, details: { redis: 'closed', workers } };
    const queue = this.queues.values().next().value ?? this.queue('checkout');
    const client = await queue.getBackend().client;
    if (client.status !== 'ready') return { up: false, details: { redis: client.status, workers } };
    // A round trip that reads nothing (the backend's client interface has no PING).
    await client.get(`${this.prefix}:health`);
    return { up: allRunning, details: { redis: 'ready', workers } };
  }

  /** Stops every worker and closes every connection (at once when Redis does not answer). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.workers.keys()].map((pipeline) => this.stop(pipeline)));
    await Promise.all(
      [...this.queues.values()].map((queue) => bounded(queue.close(), () => queue.disconnect())),
    );
    this.queues.clear();
  }

  private connection(worker: boolean): QueueOptions['connection'] {
    const base = this.options.url ? { url: this.options.url } : { ...this.options.connection };
    // Workers block on Redis and must never give a command up (BullMQ's own requirement).
    return (worker ? { ...base, maxRetriesPerRequest: null } : base) as QueueOptions['connection'];
  }
}

/**
 * Waits for a graceful close, but not forever: with Redis gone, BullMQ's close waits for it to
 * come back, and a repeated task's worker may wait for its pass. After CLOSE_GRACE_MS the connections are dropped (jobs still running are left to
 * another worker's stalled-job check).
 */
async function bounded(closing: Promise<unknown>, disconnect: () => Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CLOSE_GRACE_MS)));
  const outcome = await Promise.race([
    closing.then(
      () => 'closed' as const,
      () => 'closed' as const,
    ),
    late,
  ]);
  clearTimeout(timer);
  if (outcome !== 'late') return;
  // Not awaited past a second either: a connection that does not close must not hold the app.
  await Promise.race([
    disconnect().catch(() => undefined),
    new Promise((resolve) => setTimeout(resolve, 1_000).unref()),
  ]);
}

const CLOSE_GRACE_MS = 2_000;

/**
 * A BullMQ job id for a run of a recorded job: readable in dashboards, and never an integer nor
 * containing `:` (which BullMQ forbids in custom ids): `%` and `:` are percent-encoded. A run
 * after the job deferred itself (or was woken) `n` times ends in `@<attempt>.<n>`.
 */
export function bullmqJobId(storeKey: string, attempt: number, deferral = 0): string {
  const run = deferral > 0 ? `${attempt}.${deferral}` : `${attempt}`;
  return `${storeKey.replace(/%/g, '%25').replace(/:/g, '%3A')}@${run}`;
}
