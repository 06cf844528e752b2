// nestjs-hubtel/redis — a HubtelStore on Redis (needs the optional peer dependency `ioredis`).
// test/api/redis.api.txt pins this list (npm run api:update after a deliberate change).
export { RedisStore } from './redis.store.js';
export type { RedisStoreOptions, RedisClusterConnection } from './redis.client.js';
export { HubtelRedisModule } from './redis.module.js';
export type {
  HubtelRedisModuleOptions,
  HubtelRedisModuleForRootOptions,
  HubtelRedisModuleAsyncOptions,
} from './redis.module.js';
