// nestjs-hubtel/bullmq — the recorded jobs of checkout and service-app run on BullMQ workers,
// shared by every instance (needs the optional peer dependencies `bullmq` and `ioredis`).
// test/api/bullmq.api.txt pins this list (npm run api:update after a deliberate change).
export { BullmqJobRunner, type BullmqJobRunnerOptions } from './bullmq.job-runner.js';
export { HubtelBullmqModule } from './bullmq.module.js';
export type {
  HubtelBullmqModuleOptions,
  HubtelBullmqModuleExtras,
  HubtelBullmqModuleForRootOptions,
  HubtelBullmqModuleAsyncOptions,
} from './bullmq.module.js';
