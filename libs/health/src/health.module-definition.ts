import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { HubtelHealthModuleOptions } from './health.options.js';

export const {
  ConfigurableModuleClass: HubtelHealthConfigurableModule,
  MODULE_OPTIONS_TOKEN: HUBTEL_HEALTH_MODULE_OPTIONS,
  OPTIONS_TYPE: HUBTEL_HEALTH_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: HUBTEL_HEALTH_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<HubtelHealthModuleOptions>({ moduleName: 'HubtelHealth' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createHubtelHealthOptions')
  .build();

/** `HubtelHealthModule.forRoot(...)` argument. */
export type HubtelHealthModuleForRootOptions = typeof HUBTEL_HEALTH_OPTIONS_TYPE;
/** `HubtelHealthModule.forRootAsync(...)` argument (useFactory / useClass / useExisting, imports, inject). */
export type HubtelHealthModuleAsyncOptions = typeof HUBTEL_HEALTH_ASYNC_OPTIONS_TYPE;
