import type { DynamicModule } from '@nestjs/common';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';

/**
 * With REDIS_URL (records in Redis: store.module.ts), the recorded jobs run with BullMQ on the
 * same Redis (HubtelBullmqModule provides HUBTEL_JOB_RUNNER): every run, retries and re-checks
 * included, is a BullMQ job any replica runs (the runner's default), a dead replica's job is taken
 * over by another within seconds (BullMQ's stalled-job check), reconciliation is one pass per
 * interval across all of them. Without it: this process runs its own jobs.
 */
export function jobRunnerModules(redisUrl: string | undefined): DynamicModule[] {
  return redisUrl === undefined ? [] : [HubtelBullmqModule.forRoot({ url: redisUrl })];
}
