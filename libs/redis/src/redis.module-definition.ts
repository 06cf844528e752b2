import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { RedisStoreOptions } from './redis.store.js';

/** `HubtelRedisModule.forRoot(...)` options: where Redis is, and the key prefix. */
export type HubtelRedisModuleOptions = RedisStoreOptions;

/** Extras of `forRoot`/`forRootAsync`. */
export interface HubtelRedisModuleExtras {
  /** Provide HUBTEL_STORE to every module of the app. Default true (that is the point). */
  isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass: HubtelRedisConfigurableModule,
  MODULE_OPTIONS_TOKEN: HUBTEL_REDIS_MODULE_OPTIONS,
  OPTIONS_TYPE: HUBTEL_REDIS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: HUBTEL_REDIS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<HubtelRedisModuleOptions>({ moduleName: 'HubtelRedis' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createHubtelRedisOptions')
  .setExtras<HubtelRedisModuleExtras>({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** `HubtelRedisModule.forRoot(...)` argument. */
export type HubtelRedisModuleForRootOptions = typeof HUBTEL_REDIS_OPTIONS_TYPE;
/** `HubtelRedisModule.forRootAsync(...)` argument (useFactory / useClass / useExisting, imports, inject). */
export type HubtelRedisModuleAsyncOptions = typeof HUBTEL_REDIS_ASYNC_OPTIONS_TYPE;
