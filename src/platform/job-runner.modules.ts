import type { DynamicModule } from '@nestjs/common';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import type { ExampleAppConfig } from '../app.config.js';

/**
 * Where the recorded jobs run, decided with the store (store.module.ts): records in Redis
 * (REDIS_URL or REDIS_CLUSTER_NODES) mean jobs on BullMQ on the same Redis, as the modules
 * require (HubtelBullmqModule provides HUBTEL_JOB_RUNNER; there is no Redis without it). Every
 * run, retries and re-checks included, is a BullMQ job any replica's worker takes; a job whose
 * replica died is taken over by another within seconds (BullMQ's stalled-job check, only the
 * handlers that had not finished run again); reconciliation is one BullMQ job scheduler, one pass
 * per interval across all replicas. On a cluster the queues keep the runner's default `{hubtel}`
 * hash-tagged prefix. Without Redis: nothing to import, this process runs its own jobs.
 */
export function jobRunnerModules(
  config: Pick<ExampleAppConfig, 'redisUrl' | 'redisClusterNodes'>,
): DynamicModule[] {
  if (config.redisClusterNodes !== undefined)
    return [HubtelBullmqModule.forRoot({ cluster: { nodes: config.redisClusterNodes } })];
  return config.redisUrl === undefined ? [] : [HubtelBullmqModule.forRoot({ url: config.redisUrl })];
}
