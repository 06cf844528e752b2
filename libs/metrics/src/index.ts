/* nestjs-hubtel/metrics: Prometheus metrics of every module (needs the optional peer `prom-client`). */
export { HubtelMetrics } from './metrics.recorder.js';
export { HubtelMetricsModule } from './metrics.module.js';
export type { HubtelMetricsModuleForRootOptions, HubtelMetricsModuleAsyncOptions } from './metrics.module.js';
export type { HubtelMetricsModuleOptions } from './metrics.recorder.js';
