import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { BullmqJobRunnerOptions } from './bullmq.job-runner.js';

/** `HubtelBullmqModule.forRoot(...)` options: where Redis is, the key prefix, the concurrency. */
export type HubtelBullmqModuleOptions = Omit<BullmqJobRunnerOptions, 'logger'>;

/** Extras of `forRoot`/`forRootAsync`. */
export interface HubtelBullmqModuleExtras {
  /** Provide HUBTEL_JOB_RUNNER to every module of the app. Default true (that is the point). */
  isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass: HubtelBullmqConfigurableModule,
  MODULE_OPTIONS_TOKEN: HUBTEL_BULLMQ_MODULE_OPTIONS,
  OPTIONS_TYPE: HUBTEL_BULLMQ_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: HUBTEL_BULLMQ_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<HubtelBullmqModuleOptions>({ moduleName: 'HubtelBullmq' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createHubtelBullmqOptions')
  .setExtras<HubtelBullmqModuleExtras>({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** `HubtelBullmqModule.forRoot(...)` argument. */
export type HubtelBullmqModuleForRootOptions = typeof HUBTEL_BULLMQ_OPTIONS_TYPE;
/** `HubtelBullmqModule.forRootAsync(...)` argument. */
export type HubtelBullmqModuleAsyncOptions = typeof HUBTEL_BULLMQ_ASYNC_OPTIONS_TYPE;
