import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { HubtelMetricsModuleOptions } from './metrics.options.js';

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
/** `HubtelMetricsModule.forRootAsync(...)` argument (useFactory / useClass / useExisting, imports, inject). */
export type HubtelMetricsModuleAsyncOptions = typeof HUBTEL_METRICS_ASYNC_OPTIONS_TYPE;
