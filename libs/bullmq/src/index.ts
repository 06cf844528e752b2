/*
 * nestjs-hubtel/bullmq — the recorded jobs of checkout and service-app run on BullMQ workers,
 * shared by every instance (needs the optional peer dependencies `bullmq` and `ioredis`).
 */
export { BullmqJobRunner, bullmqJobId, type BullmqJobRunnerOptions } from './bullmq.job-runner.js';
export { HubtelBullmqModule } from './bullmq.module.js';
export {
  HUBTEL_BULLMQ_MODULE_OPTIONS,
  type HubtelBullmqModuleOptions,
  type HubtelBullmqModuleExtras,
  type HubtelBullmqModuleForRootOptions,
  type HubtelBullmqModuleAsyncOptions,
} from './bullmq.module-definition.js';
export { BULLMQ_RUNNER_DEFAULTS } from './bullmq.constants.js';
