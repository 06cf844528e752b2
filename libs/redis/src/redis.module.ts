import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { HUBTEL_STORE } from 'nestjs-hubtel';
import {
  HUBTEL_REDIS_MODULE_OPTIONS,
  HubtelRedisConfigurableModule,
  type HubtelRedisModuleOptions,
} from './redis.module-definition.js';
import { RedisStore } from './redis.store.js';

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
 * Startup waits for Redis (and fails with HUBTEL_STORE_UNAVAILABLE when it cannot connect, or
 * HUBTEL_REDIS_UNUSABLE for a connection it cannot use, such as a `url` at one cluster node). A
 * client the module opened is closed at shutdown, after the modules' pipelines have drained.
 */
@Module({
  providers: [
    {
      provide: RedisStore,
      useFactory: async (options: HubtelRedisModuleOptions) => {
        const store = new RedisStore(options);
        await store.connect();
        return store;
      },
      inject: [HUBTEL_REDIS_MODULE_OPTIONS],
    },
    { provide: HUBTEL_STORE, useExisting: RedisStore },
  ],
  exports: [HUBTEL_STORE, RedisStore],
})
export class HubtelRedisModule extends HubtelRedisConfigurableModule implements OnApplicationShutdown {
  constructor(@Inject(RedisStore) private readonly store: RedisStore) {
    super();
  }

  // The last shutdown phase: pipelines drain in beforeApplicationShutdown and still write then.
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
