import type { DynamicModule } from '@nestjs/common';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';

/**
 * With REDIS_URL (records in Redis: store.module.ts), the recorded jobs run with BullMQ on the
 * same Redis (HubtelBullmqModule provides HUBTEL_JOB_RUNNER): a first run starts here, its retries
 * and re-checks are BullMQ jobs any replica runs, a dead replica's job is taken over by another
 * within seconds, reconciliation is one pass per interval across all of them. Without it: this
 * process runs its own jobs.
 */
export function jobRunnerModules(redisUrl: string | undefined): DynamicModule[] {
  return redisUrl === undefined ? [] : [HubtelBullmqModule.forRoot({ url: redisUrl })];
}
