/*
 * nestjs-hubtel/redis — a HubtelStore on Redis (needs the optional peer dependency `ioredis`).
 */
export { RedisStore, escapeGlob, type RedisStoreOptions } from './redis.store.js';
export { HubtelRedisModule } from './redis.module.js';
export {
  HUBTEL_REDIS_MODULE_OPTIONS,
  type HubtelRedisModuleOptions,
  type HubtelRedisModuleExtras,
  type HubtelRedisModuleForRootOptions,
  type HubtelRedisModuleAsyncOptions,
} from './redis.module-definition.js';
export { REDIS_STORE_DEFAULTS } from './redis.constants.js';
