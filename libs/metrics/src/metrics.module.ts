import { Module, type DynamicModule } from '@nestjs/common';
import { HUBTEL_TELEMETRY } from 'nestjs-hubtel';
import {
  HUBTEL_METRICS_MODULE_OPTIONS,
  HubtelMetricsConfigurableModule,
  type HubtelMetricsModuleForRootOptions,
  type HubtelMetricsModuleOptions,
} from './metrics.options.js';
import { HubtelMetrics } from './metrics.recorder.js';

/**
 * Prometheus metrics of the suite (prom-client, an optional peer): HubtelMetrics as `HUBTEL_TELEMETRY`.
 * Serve them yourself (`GET /metrics`): `metrics.metrics()` with the `metrics.contentType` header,
 * or your registry's as usual.
 */
@Module({
  providers: [
    {
      provide: HubtelMetrics,
      useFactory: (options: HubtelMetricsModuleOptions) => new HubtelMetrics(options),
      inject: [HUBTEL_METRICS_MODULE_OPTIONS],
    },
    { provide: HUBTEL_TELEMETRY, useExisting: HubtelMetrics },
  ],
  exports: [HUBTEL_TELEMETRY, HubtelMetrics],
})
export class HubtelMetricsModule extends HubtelMetricsConfigurableModule {
  /** Options are all optional: `forRoot()` registers on prom-client's global registry. */
  static override forRoot(options: HubtelMetricsModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }
}
