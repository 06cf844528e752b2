/** Defaults of HubtelMetricsModule, in one place. */
export const METRICS_DEFAULTS = Object.freeze({
  /** Put in front of every metric name. */
  prefix: 'hubtel_',
  /** Latency buckets (seconds) of calls to the platform: its time-out is 15 s by default. */
  platformBuckets: Object.freeze([0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15]),
  /** Latency buckets (seconds) of service-flow steps: the platform waits about 5 s for an answer. */
  serviceFlowBuckets: Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]),
});
