import { HUBTEL_STORE } from 'nestjs-hubtel';
import { hubtelConnectionModule } from '#internal';
import type { RedisStoreOptions } from './redis.client.js';
import { RedisStore } from './redis.store.js';

/** `HubtelRedisModule.forRoot(...)` options: where Redis is, and the key prefix. */
export type HubtelRedisModuleOptions = RedisStoreOptions;

const REDIS_MODULE = hubtelConnectionModule({
  moduleName: 'HubtelRedis',
  factoryMethod: 'createHubtelRedisOptions',
  type: RedisStore,
  token: HUBTEL_STORE,
  create: (options: HubtelRedisModuleOptions) => new RedisStore(options),
});

/** `HubtelRedisModule.forRoot(...)` argument; `isGlobal` (default true) provides HUBTEL_STORE app-wide. */
export type HubtelRedisModuleForRootOptions = typeof REDIS_MODULE.OPTIONS_TYPE;
/** `HubtelRedisModule.forRootAsync(...)` argument (useFactory / useClass / useExisting, imports, inject). */
export type HubtelRedisModuleAsyncOptions = typeof REDIS_MODULE.ASYNC_OPTIONS_TYPE;

/**
 * One Redis store for the whole app: provides `HUBTEL_STORE` (global by default), which
 * CheckoutModule and ServiceAppModule use when their `store` option is omitted.
 *
 * ```ts
 * @Module({ imports: [
 *   EventEmitterModule.forRoot(),
 *   HubtelRedisModule.forRoot({ url: process.env.REDIS_URL }),   // or { cluster: { nodes } }
 *   CheckoutModule.forRoot({ ... }),   // no store option: uses the Redis store
 * ] })
 * ```
 * Startup waits for Redis (HUBTEL_STORE_UNAVAILABLE when it cannot connect). A client the module
 * opened is closed at shutdown, after the pipelines have drained.
 */
export class HubtelRedisModule extends REDIS_MODULE.ConfigurableModuleClass {}
