import type { DynamicModule } from '@nestjs/common';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';

/**
 * With REDIS_URL (records in Redis: store.module.ts), the recorded jobs run on BullMQ workers of
 * the same Redis (HubtelBullmqModule provides HUBTEL_JOB_RUNNER): shared by the replicas, a dead
 * replica's job taken over by another within seconds, reconciliation one pass per interval across
 * all of them. Without it: this process runs its own jobs.
 */
export function jobRunnerModules(redisUrl: string | undefined): DynamicModule[] {
  return redisUrl === undefined ? [] : [HubtelBullmqModule.forRoot({ url: redisUrl })];
}
