/**
 * Defaults of the BullMQ job runner, in one place.
 */
export const BULLMQ_RUNNER_DEFAULTS = Object.freeze({
  /**
   * Put in front of every BullMQ key (queues are named after the pipelines: `checkout`,
   * `service-app`). Apart from the store's `hubtel:<pipeline>:` keys on a shared Redis. The
   * `{hash tag}` puts every queue key in one Redis Cluster slot, as BullMQ's scripts need there.
   * (Before 0.2 it was `hubtel:bull`: set `prefix` to it to keep jobs queued by an older version.)
   */
  prefix: '{hubtel}:bull',
  /** One log line per distinct queue/worker error per this interval (BullMQ repeats them fast). */
  errorLogIntervalMs: 60_000,
  /** /health stays down this long after a failed add, unless an add succeeds sooner. */
  addFailureWindowMs: 60_000,
  /** Jobs one instance runs at once per pipeline (handlers mostly wait on I/O). */
  concurrency: 50,
  /**
   * How long a job stays locked to a worker without its renewal (BullMQ renews it every half):
   * after it, a dead instance's job is taken over. Also the pipelines' record lease.
   */
  lockDurationMs: 10_000,
  /** How often each worker looks for jobs whose lock expired (a dead instance's). */
  stalledIntervalMs: 5_000,
  /**
   * How often one job may be found stalled before BullMQ fails it (the store record is the guard,
   * and the pipelines' sweep asks again for a job it lost: a high bound only stops a crash loop).
   */
  maxStalledCount: 10,
  /**
   * Runs of the processor failing on the store itself (unreachable Redis) or on a shutdown, with
   * an exponential backoff from `retryDelayMs`. Handler failures are not these: they are retried
   * by the pipeline's own policy, as delayed jobs.
   */
  processorAttempts: 10,
  retryDelayMs: 1_000,
  /**
   * Every run, the first included, is a BullMQ job (seen in dashboards, a crash taken over by the
   * stalled-job check). True trades that for latency: see `BullmqJobRunnerOptions.firstRunHere`.
   */
  firstRunHere: false,
  /** Finished BullMQ jobs kept for the dashboards (the store record is what proves a job ran). */
  keepCompleted: Object.freeze({ age: 3_600, count: 1_000 }),
});
