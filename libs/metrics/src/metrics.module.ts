import { ConfigurableModuleBuilder, Module, type DynamicModule } from '@nestjs/common';
import { HUBTEL_TELEMETRY } from 'nestjs-hubtel';
import { HubtelMetrics, type HubtelMetricsModuleOptions } from './metrics.recorder.js';

/** Extras of `forRoot`/`forRootAsync`. */
export interface HubtelMetricsModuleExtras {
  /** Provide HUBTEL_TELEMETRY to every module of the app. Default true (that is the point). */
  isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass: HubtelMetricsConfigurableModule,
  MODULE_OPTIONS_TOKEN: HUBTEL_METRICS_MODULE_OPTIONS,
  OPTIONS_TYPE: HUBTEL_METRICS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: HUBTEL_METRICS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<HubtelMetricsModuleOptions>({ moduleName: 'HubtelMetrics' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createHubtelMetricsOptions')
  .setExtras<HubtelMetricsModuleExtras>({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** `HubtelMetricsModule.forRoot(...)` argument. */
export type HubtelMetricsModuleForRootOptions = typeof HUBTEL_METRICS_OPTIONS_TYPE;
/** `HubtelMetricsModule.forRootAsync(...)` argument. */
export type HubtelMetricsModuleAsyncOptions = typeof HUBTEL_METRICS_ASYNC_OPTIONS_TYPE;

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
