// nestjs-hubtel/bullmq — recorded jobs run on shared BullMQ workers (optional peers: bullmq, ioredis).
// test/api/bullmq.api.txt pins this list (npm run api:update after a deliberate change).
export { BullmqJobRunner, type BullmqJobRunnerOptions } from './bullmq.job-runner.js';
export { HubtelBullmqModule } from './bullmq.module.js';
export type {
  HubtelBullmqModuleOptions,
  HubtelBullmqModuleForRootOptions,
  HubtelBullmqModuleAsyncOptions,
} from './bullmq.module.js';
