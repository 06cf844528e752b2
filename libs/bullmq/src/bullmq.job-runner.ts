import { Logger } from '@nestjs/common';
import {
  DelayedError,
  UnrecoverableError,
  Queue,
  Worker,
  type Job,
  type QueueOptions,
  type RedisOptions as BullmqRedisOptions,
} from 'bullmq';
import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import {
  HubtelError,
  HubtelLogger,
  HubtelRedisConfigError,
  HubtelStoreUnavailableError,
  type JobExecutor,
  type JobRunRequest,
  type JobRunner,
  type JobRunnerHealth,
} from 'nestjs-hubtel';
import { ErrorLogThrottle, clusterEnabledIn, hashTagOf, redisClusterNodesOption } from '#internal';
import { BULLMQ_RUNNER_DEFAULTS } from './bullmq.constants.js';

export interface BullmqJobRunnerOptions {
  /** Redis URL (`redis://host:6379/0`, `rediss://` for TLS). Not a node of a cluster: see `cluster`. */
  url?: string;
  /**
   * ioredis options (BullMQ opens its own connections from them; workers get
   * `maxRetriesPerRequest: null`, as BullMQ requires, and queues `enableOfflineQueue: false`, so an
   * add fails at once while Redis is away), or an ioredis client of yours (`Redis` or `Cluster`),
   * used as it is, never copied: give it `maxRetriesPerRequest: null` when this instance runs
   * workers (an add through it then waits for Redis). Redis must run with `maxmemory-policy noeviction`.
   */
  connection?: BullmqRedisOptions | Redis | Cluster;
  /**
   * A Redis Cluster: some of its nodes, and ioredis Cluster options (TLS and auth in
   * `options.redisOptions`). The runner opens (and closes) its own Cluster clients.
   */
  cluster?: { nodes: ClusterNode[]; options?: ClusterOptions };
  /**
   * BullMQ key prefix. Default `{hubtel}:bull`: the `{hash tag}` keeps each queue's keys in one
   * slot, which BullMQ's scripts need on a cluster (a prefix without one is refused there).
   */
  prefix?: string;
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
}

/** The BullMQ backoff type of every run: the delay is the one the pipeline named. */
const BACKOFF_TYPE = 'hubtel';

/** Thrown by the processor for a dead letter the pipeline wrote: BullMQ keeps it in its failed set. */
class BullmqDeadLetterError extends UnrecoverableError {}

/**
 * Thrown by the processor for a `retry` outcome: BullMQ moves the job to its delayed set, and the
 * worker's backoff strategy reads `delayMs` from it. Its message is the job's failed reason in
 * dashboards.
 */
class BullmqRetryError extends Error {
  readonly code = 'HUBTEL_JOB_RETRY';
  constructor(
    readonly delayMs: number,
    message: string,
  ) {
    super(message);
    this.name = 'BullmqRetryError';
  }
}

/**
 * The BullMQ runner: one queue per pipeline (`checkout`, `service-app`), one worker per pipeline
 * on every instance, one BullMQ job per run of a recorded job. Every guarantee of time and place
 * is BullMQ's, none is ours:
 * - the job id is derived from the store key and the run number, so the same run asked twice (a
 *   sender's retry, another instance) is one job (BullMQ ignores an id it holds);
 * - a retry stays that job: thrown back with the pipeline's delay (a custom backoff), with
 *   attempts BullMQ never runs out of, since the pipeline decides when the job is dead;
 * - a deferral is the job moved to the delayed set (without counting an attempt), and a wake
 *   promotes it;
 * - a job whose worker died is found stalled (its lock expired) and run by another instance; one
 *   that BullMQ fails for good (a crash loop) is handed to the executor to settle it dead.
 * The record keeps every handler that already succeeded from running again.
 */
export class BullmqJobRunner implements JobRunner {
  private readonly queues = new Map<string, Queue<RunData>>();
  private readonly workers = new Map<string, Worker<RunData>>();
  /** When each worker of this instance last started a job (or was created), by name: see health. */
  private readonly lastStarted = new Map<string, number>();
  /** The timers that put back a repeated task's job scheduler when Redis lost it, by name. */
  private readonly keepers = new Map<string, NodeJS.Timeout>();
  private readonly logger: Logger;
  /** Queue and worker errors repeat at BullMQ's retry rate: one line per distinct error per minute. */
  private readonly errors: ErrorLogThrottle;
  private readonly prefix: string;
  private readonly lockDurationMs: number;
  /** Cluster clients the runner opened from `cluster` (closed by it): one for queues, one for workers. */
  private readonly ownClusters = new Map<'queue' | 'worker', Cluster>();
  /** The last add that failed, until one succeeds: /health is down while jobs cannot be added. */
  private addFailure?: { at: number; message: string };
  /** Processors running here, by pipeline (drain waits for none). */
  private readonly running = new Map<string, number>();
  private idleWaiters: Array<() => void> = [];
  private closed = false;

  constructor(private readonly options: BullmqJobRunnerOptions) {
    const given = (['url', 'connection', 'cluster'] as const).filter((k) => options[k] !== undefined);
    if (given.length !== 1)
      throw new HubtelError(
        'HUBTEL_CONFIG_INVALID',
        `BullmqJobRunner needs one of \`url\`, \`connection\` or \`cluster\`${given.length ? ` (got ${given.join(', ')})` : ''}`,
      );
    this.lockDurationMs = options.lockDurationMs ?? BULLMQ_RUNNER_DEFAULTS.lockDurationMs;
    this.prefix = options.prefix ?? BULLMQ_RUNNER_DEFAULTS.prefix;
    this.logger = options.logger ?? new HubtelLogger('Hubtel:BullMQ');
    this.errors = new ErrorLogThrottle(this.logger, BULLMQ_RUNNER_DEFAULTS.errorLogIntervalMs);
    if (options.cluster) redisClusterNodesOption(options.cluster.nodes, 'bullmq.cluster.nodes');
    const client = clientOf(options.connection);
    if (client) this.checkClient(client);
    else if (looksLikeCopiedClient(options.connection)) {
      throw new HubtelRedisConfigError(
        'bullmq.connection',
        'CLIENT_UNUSABLE',
        'is a copy of a client (a plain object with its fields, without its methods): BullMQ would connect to 127.0.0.1:6379 instead; pass the Redis or Cluster client itself',
      );
    }
    if (this.onCluster) this.checkPrefix();
  }

  /** True when the runner's connection is a Redis Cluster (`cluster`, or a Cluster client). */
  get onCluster(): boolean {
    return this.options.cluster !== undefined || isClusterClient(this.options.connection);
  }

  /** The queue of a pipeline (created on first use), e.g. to show it in a dashboard. */
  queue(pipeline: string): Queue<RunData> {
    let queue = this.queues.get(pipeline);
    if (!queue) {
      queue = new Queue<RunData>(pipeline, {
        connection: this.connection(false),
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

  /**
   * Resolves once Redis answers (startup fails fast on a wrong URL), and refuses a single-node
   * connection to a node of a Redis Cluster before any job or worker uses it (it would answer
   * MOVED for most queues' keys).
   */
  async connect(pipeline = 'checkout'): Promise<void> {
    const queue = this.queue(pipeline);
    await queue.waitUntilReady();
    if (this.onCluster) return;
    let info: string;
    try {
      info = await (await queue.getBackend().client).info();
    } catch {
      return; // a server that hides INFO (some managed proxies) is no cluster node to us
    }
    if (clusterEnabledIn(info)) {
      await this.close();
      throw new HubtelRedisConfigError(
        this.options.url !== undefined ? 'bullmq.url' : 'bullmq.connection',
        'CLUSTER_NODE_WITHOUT_CLUSTER_CLIENT',
        'points at a node of a Redis Cluster: give `cluster: { nodes: [...] }` (or a Cluster client) instead, and a prefix with a {hash tag}',
      );
    }
  }

  /**
   * Adds the run's BullMQ job; resolves once Redis holds it. The same run asked again is the same
   * job id, which BullMQ ignores while it holds the job (kept after it ends: see keepCompleted).
   */
  async enqueue(pipeline: string, request: JobRunRequest): Promise<void> {
    try {
      await this.queue(pipeline).add(
        request.type,
        { storeKey: request.storeKey },
        request.delayMs
          ? { jobId: bullmqJobId(request.storeKey, request.run), delay: request.delayMs }
          : { jobId: bullmqJobId(request.storeKey, request.run) },
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.addFailure = { at: Date.now(), message };
      // Typed as the store's outage it is (Redis away): a run that adds a job is tried again for
      // it, not charged an attempt (see InboundPipeline), and a request gets its 503.
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
    // The queue is opened now, while Redis answers: one first opened during an outage would hold
    // its first add until Redis is back (BullMQ waits for a new connection), not fail it at once.
    this.queue(pipeline);
    if (this.options.work === false || this.workers.has(pipeline)) return;
    const worker = new Worker<RunData>(
      pipeline,
      (job: Job<RunData>, token?: string) => this.process(pipeline, job, token, execute),
      {
        connection: this.connection(true),
        prefix: this.prefix,
        concurrency: this.options.concurrency ?? BULLMQ_RUNNER_DEFAULTS.concurrency,
        lockDuration: this.lockDurationMs,
        stalledInterval: this.options.stalledIntervalMs ?? BULLMQ_RUNNER_DEFAULTS.stalledIntervalMs,
        maxStalledCount: this.options.maxStalledCount ?? BULLMQ_RUNNER_DEFAULTS.maxStalledCount,
        settings: { backoffStrategy: retryDelay },
      },
    );
    this.watch(pipeline, worker);
    // Every retry emits `failed` too: only a job BullMQ failed for good is given up.
    worker.on('failed', (job, error) => {
      if (job) void this.giveUp(pipeline, job, error, execute);
    });
    this.workers.set(pipeline, worker);
    await worker.waitUntilReady();
  }

  /**
   * A BullMQ job scheduler named `name` (in a queue of that name), upserted by every instance (the
   * same schedule), whose jobs one worker runs at a time on each instance: with N instances, one
   * run per `everyMs`, not N. Each instance looks for the scheduler every `everyMs` (at most a
   * minute) and upserts it again when it is missing: Redis came back empty (a restart without
   * persistence, a failover to an empty replica, a flush), or was away when the instance started.
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
    const worker = new Worker(name, () => task(), {
      connection: this.connection(true),
      prefix: this.prefix,
      concurrency: 1,
      lockDuration: this.lockDurationMs,
      stalledInterval: this.options.stalledIntervalMs ?? BULLMQ_RUNNER_DEFAULTS.stalledIntervalMs,
    });
    this.watch(name, worker);
    worker.on('failed', (_job, error) => this.logger.warn(`Scheduled ${name} failed: ${error.message}`));
    this.workers.set(name, worker as unknown as Worker<RunData>);
    // Redis away now: logged, and the keeper creates the scheduler once it is back.
    await this.keepScheduler(name, upsert, false);
    await worker.waitUntilReady();
  }

  /** Logs a worker's errors, and notes when it starts a job (see health). */
  private watch(name: string, worker: Worker): void {
    this.lastStarted.set(name, Date.now());
    worker.on('error', (error) => this.errors.error(`Worker ${name}: ${error.message}`));
    worker.on('active', () => this.lastStarted.set(name, Date.now()));
  }

  /**
   * How long a job has waited in the queue of `name` while its worker here started none, when
   * both are longer than a takeover (lockDurationMs + stalledIntervalMs): the worker runs, but
   * does not take jobs. Undefined while it does (or nothing waits).
   */
  private async notTakingJobs(name: string): Promise<number | undefined> {
    const now = Date.now();
    const bound =
      this.lockDurationMs + (this.options.stalledIntervalMs ?? BULLMQ_RUNNER_DEFAULTS.stalledIntervalMs);
    if (now - (this.lastStarted.get(name) ?? now) <= bound) return undefined;
    const [oldest] = await this.queue(name).getJobs(['waiting'], 0, 0, true);
    return oldest && now - oldest.timestamp > bound ? now - oldest.timestamp : undefined;
  }

  /** Upserts the job scheduler `name` again when Redis no longer holds it (see repeat). */
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
      // Redis away: the next look tries again.
      this.errors.error(`Job scheduler ${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async stop(pipeline: string): Promise<void> {
    clearInterval(this.keepers.get(pipeline));
    this.keepers.delete(pipeline);
    const worker = this.workers.get(pipeline);
    if (!worker) return;
    this.workers.delete(pipeline);
    await bounded(worker.close(), () => worker.disconnect());
  }

  /**
   * Resolves when no run of the pipeline is being executed by this process (runs waiting in Redis
   * are BullMQ's, not this process's).
   */
  async drain(pipeline: string): Promise<void> {
    while ((this.running.get(pipeline) ?? 0) > 0)
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Up when the queue's Redis connection is ready and answers, every worker of this instance
   * runs and takes jobs (down, with `notTakingJobs`, while a job has waited longer than a takeover
   * and the worker started none), and jobs can be added: down while the last add failed (until
   * one succeeds, or for `addFailureWindowMs` without another try). (A round trip to a Redis that went away waits for
   * its reconnection: health checks bound it with their own time-out.)
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
    if (failure && Date.now() - failure.at < BULLMQ_RUNNER_DEFAULTS.addFailureWindowMs) {
      return { up: false, details: { redis: 'ready', workers, add: `failing: ${failure.message}` } };
    }
    // A worker that runs but takes no job (its connection stuck after an outage) is down too.
    const stuck: Record<string, string> = {};
    for (const name of this.workers.keys()) {
      const waited = await this.notTakingJobs(name);
      if (waited !== undefined) {
        workers[name] = false;
        stuck[name] = `a job waits for ${Math.round(waited / 1000)} s, none started here`;
      }
    }
    if (Object.keys(stuck).length > 0)
      return { up: false, details: { redis: 'ready', workers, notTakingJobs: stuck } };
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
    // BullMQ leaves a client it was given open (it is shared): the ones the runner opened, it closes.
    await Promise.all(
      [...this.ownClusters.values()].map((cluster) =>
        bounded(cluster.quit(), async () => cluster.disconnect()),
      ),
    );
    this.ownClusters.clear();
  }

  /** One execution of a run, its outcome mapped onto the BullMQ job. */
  private async process(
    pipeline: string,
    job: Job<RunData>,
    token: string | undefined,
    execute: JobExecutor,
  ): Promise<void> {
    this.running.set(pipeline, (this.running.get(pipeline) ?? 0) + 1);
    try {
      // A throw (the store unreachable) is retried too, with retryDelay's exponential delay.
      const outcome = await execute(job.data.storeKey);
      // A dead letter fails its BullMQ job for good, so dashboards show it in the failed set.
      if (outcome.kind === 'settled') {
        if (outcome.dead !== undefined) throw new BullmqDeadLetterError(outcome.dead);
        return;
      }
      if (outcome.kind === 'retry') throw new BullmqRetryError(outcome.delayMs, outcome.error);
      // BullMQ's manual delay: moved to the delayed set (no attempt counted), then DelayedError
      // tells the worker the job is already moved. Moved first, then asked for a wake: a duplicate
      // that came before either is seen.
      await job.moveToDelayed(outcome.until, token);
      if (await outcome.woken().catch(() => false)) await job.promote().catch(() => undefined);
      throw new DelayedError();
    } finally {
      const left = (this.running.get(pipeline) ?? 1) - 1;
      if (left > 0) this.running.set(pipeline, left);
      else this.running.delete(pipeline);
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /**
   * A job BullMQ failed for good, outside the pipeline (stalled more than maxStalledCount times,
   * i.e. a crash loop): the executor settles the record dead (a no-op when it is settled already).
   */
  private async giveUp(
    pipeline: string,
    job: Job<RunData>,
    error: Error,
    execute: JobExecutor,
  ): Promise<void> {
    // A dead letter the pipeline settled itself (see process): nothing to give up.
    if (error instanceof BullmqDeadLetterError) return;
    try {
      // A retry is in the delayed (or waiting) set again: BullMQ holds it, nothing to give up.
      if (!(await job.isFailed())) return;
      this.logger.warn(`Run ${job.id ?? '?'} of ${pipeline} failed for good: ${error.message}`);
      await execute(job.data.storeKey, error.message);
    } catch (failure) {
      this.errors.error(
        `Run ${job.id ?? '?'} of ${pipeline} failed for good and could not be settled: ${failure instanceof Error ? failure.message : String(failure)}`,
      );
    }
  }

  private connection(worker: boolean): QueueOptions['connection'] {
    const { url, connection, cluster } = this.options;
    // A client of yours is used as it is: a copy of a Cluster is a plain object, which BullMQ
    // reads as options for one Redis at 127.0.0.1:6379.
    if (clientOf(connection)) return connection as Redis | Cluster;
    if (cluster) return this.ownCluster(worker ? 'worker' : 'queue', cluster);
    const given: BullmqRedisOptions = url !== undefined ? { url } : { ...(connection as BullmqRedisOptions) };
    // Back within a second or two of Redis: BullMQ's own default waits up to 20 s between tries,
    // and adds fail until the queue's connection is back (see below).
    const base: BullmqRedisOptions = { retryStrategy: reconnectDelay, ...given };
    // Workers block on Redis and must never give a command up (BullMQ's own requirement). Adds
    // fail fast while Redis is away (BullMQ's documented pattern), so an inbound request gets its
    // 503 instead of waiting for the reconnection.
    // An add already sent when Redis went away fails at the first failed reconnection, not 20 later.
    return worker
      ? { ...base, maxRetriesPerRequest: null }
      : { ...base, enableOfflineQueue: false, maxRetriesPerRequest: 1 };
  }

  /** One Cluster client per role, opened from `cluster` (workers: no command ever given up). */
  private ownCluster(
    role: 'queue' | 'worker',
    given: NonNullable<BullmqJobRunnerOptions['cluster']>,
  ): Cluster {
    let cluster = this.ownClusters.get(role);
    if (!cluster) {
      const options = given.options ?? {};
      cluster = new Cluster(given.nodes, {
        // As for one Redis (see connection): the connection is back soon after the cluster, and
        // adds fail fast while it is away.
        clusterRetryStrategy: reconnectDelay,
        ...options,
        ...(role === 'queue' ? { enableOfflineQueue: false } : {}),
        redisOptions: {
          ...options.redisOptions,
          ...(role === 'worker' ? { maxRetriesPerRequest: null } : {}),
        },
      });
      cluster.on('error', (error: Error) => this.errors.error(`Redis Cluster (${role}): ${error.message}`));
      this.ownClusters.set(role, cluster);
    }
    return cluster;
  }

  private checkClient(client: Redis | Cluster): void {
    const options: RedisOptions = isClusterClient(client)
      ? { ...client.options.redisOptions, keyPrefix: client.options.keyPrefix }
      : client.options;
    if (options.keyPrefix) {
      throw new HubtelRedisConfigError(
        'bullmq.connection',
        'CLIENT_UNUSABLE',
        'sets an ioredis keyPrefix, which BullMQ refuses: remove it and use the `prefix` option',
      );
    }
    // Workers would have to copy the client to change this (and a copy of a Cluster loses it).
    if (this.options.work !== false && options.maxRetriesPerRequest !== null) {
      throw new HubtelRedisConfigError(
        'bullmq.connection',
        'CLIENT_UNUSABLE',
        `has maxRetriesPerRequest ${String(options.maxRetriesPerRequest ?? 'default (20)')}: BullMQ workers need null; create the client with maxRetriesPerRequest: null${isClusterClient(client) ? ' in redisOptions' : ''}, or give \`cluster\`/\`url\` and let the runner open its own`,
      );
    }
  }

  private checkPrefix(): void {
    if (hashTagOf(this.prefix) === undefined) {
      throw new HubtelRedisConfigError(
        'bullmq.prefix',
        'PREFIX_WITHOUT_HASH_TAG',
        `"${this.prefix}" has no {hash tag}: on a Redis Cluster every BullMQ script would fail with CROSSSLOT; use e.g. "{${this.prefix}}" or the default "${BULLMQ_RUNNER_DEFAULTS.prefix}"`,
      );
    }
  }
}

/** The ioredis client given as `connection`, or undefined when it is options. */
function clientOf(connection: BullmqJobRunnerOptions['connection']): Redis | Cluster | undefined {
  // BullMQ's own test of a client (its methods), not `instanceof`: a client of another installed
  // copy of ioredis is a client all the same, and must not be read as options.
  const methods = ['connect', 'disconnect', 'duplicate'] as const;
  return connection !== undefined &&
    methods.every((m) => typeof (connection as Record<string, unknown>)[m] === 'function')
    ? (connection as Redis | Cluster)
    : undefined;
}

/** A Cluster client, by ioredis's own `isCluster` flag (see clientOf). */
function isClusterClient(client: unknown): client is Cluster {
  return (
    typeof client === 'object' && client !== null && (client as { isCluster?: unknown }).isCluster === true
  );
}

/** A spread client (`{ ...cluster }`): it carries a client's own fields, which options never do. */
function looksLikeCopiedClient(connection: BullmqJobRunnerOptions['connection']): boolean {
  if (!connection || typeof connection !== 'object') return false;
  return ['startupNodes', 'isCluster', 'connector', 'commandQueue', 'condition'].some(
    (field) => field in connection,
  );
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

/** Reconnection delays of the runner's own connections: 250 ms, 500 ms, ... at most 2 s. */
function reconnectDelay(times: number): number {
  return Math.min(250 * times, 2_000);
}

/**
 * A BullMQ job id for a run of a recorded job: readable in dashboards, and never an integer nor
 * containing `:` (which BullMQ forbids in custom ids): `%` and `:` are percent-encoded.
 */
export function bullmqJobId(storeKey: string, run: number): string {
  return `${storeKey.replace(/%/g, '%25').replace(/:/g, '%3A')}@${run}`;
}

/**
 * The worker's backoff strategy: a retry's delay is the pipeline's; any other error (the executor
 * threw: the store unreachable) waits `retryDelayMs`, doubled per attempt of the run, capped.
 */
function retryDelay(attemptsMade: number, _type?: string, error?: Error): number {
  if (error instanceof BullmqRetryError) return Math.max(0, error.delayMs);
  const { retryDelayMs, maxRetryDelayMs } = BULLMQ_RUNNER_DEFAULTS;
  return Math.min(maxRetryDelayMs, retryDelayMs * 2 ** Math.min(Math.max(0, attemptsMade - 1), 30));
}
