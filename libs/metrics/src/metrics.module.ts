import { type DynamicModule } from '@nestjs/common';
import { HUBTEL_TELEMETRY } from 'nestjs-hubtel';
import { hubtelConnectionModule } from '#internal';
import { HubtelMetrics, type HubtelMetricsModuleOptions } from './metrics.recorder.js';

const METRICS_MODULE = hubtelConnectionModule({
  moduleName: 'HubtelMetrics',
  factoryMethod: 'createHubtelMetricsOptions',
  type: HubtelMetrics,
  token: HUBTEL_TELEMETRY,
  create: (options: HubtelMetricsModuleOptions) => new HubtelMetrics(options),
});

/** `HubtelMetricsModule.forRoot(...)` argument; `isGlobal` (default true) provides HUBTEL_TELEMETRY app-wide. */
export type HubtelMetricsModuleForRootOptions = typeof METRICS_MODULE.OPTIONS_TYPE;
/** `HubtelMetricsModule.forRootAsync(...)` argument. */
export type HubtelMetricsModuleAsyncOptions = typeof METRICS_MODULE.ASYNC_OPTIONS_TYPE;

/**
 * Prometheus metrics of the suite (prom-client, an optional peer): HubtelMetrics as `HUBTEL_TELEMETRY`.
 * Serve them yourself (`GET /metrics`): `metrics.metrics()` with `metrics.contentType`, or your registry's.
 */
export class HubtelMetricsModule extends METRICS_MODULE.ConfigurableModuleClass {
  /** Options are all optional: `forRoot()` registers on prom-client's global registry. */
  static override forRoot(options: HubtelMetricsModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }
}
