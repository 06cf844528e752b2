import { ConfigurableModuleBuilder } from '@nestjs/common';
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

export const METRICS_DEFAULTS = Object.freeze({
  prefix: 'hubtel_',
  /** Up to the platform calls' default time-out, 15 s. */
  platformBuckets: Object.freeze([0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15]),
  /** Up to the about 5 s the platform waits for a service-flow answer. */
  serviceFlowBuckets: Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]),
});

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
