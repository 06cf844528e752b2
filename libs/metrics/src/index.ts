/*
 * nestjs-hubtel/metrics — Prometheus metrics of every module (needs the optional peer dependency
 * `prom-client`).
 */
export { HubtelMetrics } from './metrics.recorder.js';
export { HubtelMetricsModule } from './metrics.module.js';
export {
  type HubtelMetricsModuleForRootOptions,
  type HubtelMetricsModuleAsyncOptions,
} from './metrics.module-definition.js';
export type { HubtelMetricsModuleOptions } from './metrics.options.js';
