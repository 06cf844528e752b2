/** Defaults of the BullMQ job runner. */
export const BULLMQ_RUNNER_DEFAULTS = Object.freeze({
  /**
   * The `{hash tag}` puts every queue key in one Cluster slot, as BullMQ's scripts need. (Before 0.2:
   * `hubtel:bull`; set `prefix` to it to keep jobs queued by an older version.)
   */
  prefix: '{hubtel}:bull',
  /** One log line per distinct queue/worker error per this interval (BullMQ repeats them fast). */
  errorLogIntervalMs: 60_000,
  /** /health stays down this long after a failed add, unless an add succeeds sooner. */
  addFailureWindowMs: 60_000,
  /**
   * A runner's own connection with no byte back this long after a command is dropped and reopened (the
   * command resent): one whose peer vanished unclosed (a failover, a dropped NAT entry) would hold the
   * worker's next-job fetch for good. Above BullMQ's longest blocking wait (10 s) plus its watchdog's 1 s.
   */
  socketTimeoutMs: 15_000,
  /** Jobs one instance runs at once per pipeline (handlers mostly wait on I/O). */
  concurrency: 50,
  /** A job's lock without renewal: after it, a dead instance's job is run by another instance. */
  lockDurationMs: 10_000,
  /** How often each worker looks for jobs whose lock expired (a dead instance's). */
  stalledIntervalMs: 5_000,
  /** Stalls before BullMQ fails a job (the pipeline then settles it dead): only a crash loop gets there. */
  maxStalledCount: 10,
  /** Never the limit (the pipeline decides when a job is dead): the most BullMQ stores as an integer. */
  attempts: 2 ** 31 - 1,
  /** A run whose executor threw is retried after `retryDelayMs`, doubled each time, at most the max. */
  retryDelayMs: 1_000,
  maxRetryDelayMs: 30_000,
  /** Finished BullMQ jobs kept for the dashboards (the store record is what proves a job ran). */
  keepCompleted: Object.freeze({ age: 3_600, count: 1_000 }),
  /** Failed BullMQ jobs kept for the dashboards: the dead letter itself is the store record. */
  keepFailed: Object.freeze({ age: 7 * 24 * 3_600, count: 1_000 }),
});
