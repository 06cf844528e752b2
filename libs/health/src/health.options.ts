import { ConfigurableModuleBuilder } from '@nestjs/common';
import { type HubtelStore, type JobRunner } from 'nestjs-hubtel';

/** `HubtelHealthModule.forRoot(...)` options. */
export interface HubtelHealthModuleOptions {
  /** The stores to check. Default: every HubtelStore the app's providers hold. */
  stores?: HubtelStore[];
  /** The job runner to check. Default: the app's `HUBTEL_JOB_RUNNER` (HubtelBullmqModule), if any. */
  runner?: JobRunner;
  /** A store or runner check that has not answered after this long is down. Default 1000 ms. */
  timeoutMs?: number;
  /**
   * Also probe the platform: one GET per API base URL through its transport, no retry; any HTTP answer
   * means reachable. Off by default: a readiness check on a third party takes every replica out at once.
   */
  platform?: boolean | { timeoutMs?: number };
}

export const HEALTH_DEFAULTS = Object.freeze({
  timeoutMs: 1_000,
  platformTimeoutMs: 2_000,
  keys: Object.freeze({ store: 'hubtel_store', runner: 'hubtel_runner', platform: 'hubtel_platform' }),
});

export const {
  ConfigurableModuleClass: HubtelHealthConfigurableModule,
  MODULE_OPTIONS_TOKEN: HUBTEL_HEALTH_MODULE_OPTIONS,
  OPTIONS_TYPE: HUBTEL_HEALTH_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: HUBTEL_HEALTH_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<HubtelHealthModuleOptions>({ moduleName: 'HubtelHealth' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createHubtelHealthOptions')
  .build();

/** `HubtelHealthModule.forRoot(...)` argument. */
export type HubtelHealthModuleForRootOptions = typeof HUBTEL_HEALTH_OPTIONS_TYPE;
/** `HubtelHealthModule.forRootAsync(...)` argument. */
export type HubtelHealthModuleAsyncOptions = typeof HUBTEL_HEALTH_ASYNC_OPTIONS_TYPE;
