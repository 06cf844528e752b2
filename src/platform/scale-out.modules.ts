import type { DynamicModule } from '@nestjs/common';
import { HubtelConfigError, readEnvValue, type HubtelEnvSource } from 'nestjs-hubtel';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { HubtelRedisModule } from 'nestjs-hubtel/redis';

/** REDIS_URL: `redis://` or `rediss://` (TLS), else a config error naming the variable. */
export function readRedisUrl(env: HubtelEnvSource): string | undefined {
  const raw = readEnvValue(env, 'REDIS_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new HubtelConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new HubtelConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL');
  return raw;
}

/**
 * With REDIS_URL, the app runs as one of N replicas: the modules' records live in Redis
 * (HubtelRedisModule: exactly once across replicas and restarts) and their recorded jobs run on
 * BullMQ workers (HubtelBullmqModule: shared by the replicas, a dead one's job taken over within
 * seconds, reconciliation one pass per interval). Without it: memory and this process.
 */
export function scaleOutModules(redisUrl: string | undefined): DynamicModule[] {
  if (redisUrl === undefined) return [];
  return [HubtelRedisModule.forRoot({ url: redisUrl }), HubtelBullmqModule.forRoot({ url: redisUrl })];
}
