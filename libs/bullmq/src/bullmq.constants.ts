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
   * after it, a dead instance's job is found stalled and run by another instance.
   */
  lockDurationMs: 10_000,
  /** How often each worker looks for jobs whose lock expired (a dead instance's). */
  stalledIntervalMs: 5_000,
  /**
   * How often one job may be found stalled before BullMQ fails it, and the pipeline settles it
   * dead: only a crash loop (a job that kills its process each time) gets there.
   */
  maxStalledCount: 10,
  /**
   * BullMQ attempts of one run: never the limit (the pipeline decides when a job is dead, and
   * names each retry's delay), so as many as BullMQ's scripts store as a plain integer.
   */
  attempts: 2 ** 31 - 1,
  /**
   * A run whose executor threw (the store unreachable) is retried after `retryDelayMs`, doubled
   * with each attempt of the run, at most `maxRetryDelayMs`.
   */
  retryDelayMs: 1_000,
  maxRetryDelayMs: 30_000,
  /** Finished BullMQ jobs kept for the dashboards (the store record is what proves a job ran). */
  keepCompleted: Object.freeze({ age: 3_600, count: 1_000 }),
  /**
   * Failed BullMQ jobs kept for the dashboards (a week, at most 1,000): the dead letter itself is
   * the store record, settled dead by the pipeline.
   */
  keepFailed: Object.freeze({ age: 7 * 24 * 3_600, count: 1_000 }),
});
