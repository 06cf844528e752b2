/**
 * Where and when recorded jobs run: the second seam of the suite (the store is the first).
 *
 * The pipeline records a job in the store (set-if-absent) before the sender is acknowledged, then
 * asks its runner to run it: now, or after a retry's backoff. The record stays the exactly-once
 * guard (every change is a compare-and-set, and the handlers that succeeded are named in it), so a
 * runner may deliver a job twice (a stalled worker, a recovery sweep) without any handler running
 * twice: the runner only decides where and when.
 *
 * Without a runner a pipeline runs its jobs in its own process (setImmediate, timers for retries,
 * leases with a heartbeat and a takeover sweep): the default. A distributed runner (the BullMQ one
 * of `nestjs-hubtel/bullmq`) shares the jobs of N replicas and recovers those of a dead one.
 */

/**
 * Runs one attempt of the job recorded under `storeKey`; resolves once its outcome is recorded.
 * `run`: which run was asked (from its JobRunRequest): a run overtaken by a wake is a no-op.
 */
export type JobExecutor = (storeKey: string, run?: JobRunRef) => Promise<void>;

/** Which run of a job a runner delivers: what it was asked for (JobRunRequest). */
export interface JobRunRef {
  attempt: number;
  /** The record's deferral count when the run was asked (absent: 0). */
  deferral?: number;
}

export interface JobRunRequest {
  /** The record's store key: what the executor is called with. */
  storeKey: string;
  /** The job type (a name operators see, e.g. in a queue dashboard). */
  type: string;
  /**
   * Which run of the job this is (1 for the first). The same request from two instances (a retry
   * both would schedule, a recovery both would make) names the same run, so a runner can keep one.
   */
  attempt: number;
  /**
   * How often the job deferred itself or was woken before this run (absent: never): with
   * `attempt`, names the run, as a deferred job runs again without a new attempt.
   */
  deferral?: number;
  /** Run it after this long (0: now). */
  delayMs: number;
}

export interface JobRunner {
  /**
   * How long a job may go without news from the process running it before another takes it over,
   * when the pipeline's own `leaseMs` is not set: the runner's crash detection and the record's
   * lease then agree.
   */
  readonly leaseMs?: number;
  /**
   * When true, a new job's first run starts in the process that recorded it, at once (no queue
   * round trip before the handler), leased and heartbeated as without a runner; the runner takes
   * its retries and deferrals, and the job itself should that process die mid-run (the record's
   * open mark, written with it, lets any instance's sweep hand it to the runner once its lease
   * runs out). When false or absent (the BullMQ runner's default), every run, the first included,
   * is asked of the runner before submit() resolves.
   */
  readonly firstRunHere?: boolean;
  /** Starts running the jobs of a pipeline (called once its event listeners are attached). */
  start(pipeline: string, execute: JobExecutor): Promise<void>;
  /** Durably asks for a recorded job to be run: resolves once the request survives this process. */
  schedule(pipeline: string, request: JobRunRequest): Promise<void>;
  /**
   * Optional: runs `task` every `everyMs` on one of the instances sharing the runner (a job
   * scheduler), instead of a timer in each. Resolves once scheduled and this instance takes part.
   * Without it, every instance runs the task on its own timer.
   */
  repeat?(name: string, everyMs: number, task: () => Promise<void>): Promise<void>;
  /**
   * Stops taking jobs of the pipeline (or of the repeated task `name`) here; resolves when the
   * ones it runs here have ended. The other instances carry on.
   */
  stop(pipeline: string): Promise<void>;
  /**
   * Optional: whether the runner can take and run jobs now (its connection answers, its workers
   * run). Health checks call it; without it a runner counts as up.
   */
  health?(): Promise<JobRunnerHealth>;
}

/** What `JobRunner.health()` found. `details` is shown as is by health checks (no secrets). */
export interface JobRunnerHealth {
  up: boolean;
  details?: Record<string, unknown>;
}
