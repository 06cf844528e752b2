import type { Registry } from 'prom-client';

/** `HubtelMetricsModule.forRoot(...)` options. */
export interface HubtelMetricsModuleOptions {
  /** Where the metrics are registered. Default: prom-client's global registry (`register`). */
  registry?: Registry;
  /** Put in front of every metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`, or ''). Default `hubtel_`. */
  prefix?: string;
  /** Latency buckets (seconds) of calls to the platform. */
  platformBuckets?: number[];
  /** Latency buckets (seconds) of service-flow steps. */
  serviceFlowBuckets?: number[];
}
