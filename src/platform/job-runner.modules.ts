import type { DynamicModule } from '@nestjs/common';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import type { ExampleAppConfig } from '../app.config.js';

/**
 * With REDIS_URL or REDIS_CLUSTER_NODES (records in Redis: store.module.ts), the recorded jobs run
 * with BullMQ on the same Redis (HubtelBullmqModule provides HUBTEL_JOB_RUNNER): every run,
 * retries and re-checks included, is a BullMQ job any replica runs (the runner's default), a dead
 * replica's job is taken over by another within seconds (BullMQ's stalled-job check),
 * reconciliation is one pass per interval across all of them. On a cluster the queues keep the
 * runner's default `{hubtel}` hash-tagged prefix. Without Redis: this process runs its own jobs.
 */
export function jobRunnerModules(
  config: Pick<ExampleAppConfig, 'redisUrl' | 'redisClusterNodes'>,
): DynamicModule[] {
  if (config.redisClusterNodes !== undefined)
    return [HubtelBullmqModule.forRoot({ cluster: { nodes: config.redisClusterNodes } })];
  return config.redisUrl === undefined ? [] : [HubtelBullmqModule.forRoot({ url: config.redisUrl })];
}
