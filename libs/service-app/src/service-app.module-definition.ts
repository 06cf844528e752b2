import { ConfigurableModuleBuilder } from '@nestjs/common';
import { accessGuardNeeded } from '#internal';
import { createServiceAppController } from './service-app.controller.js';
import type { ServiceAppModuleExtras, ServiceAppModuleOptions } from './service-app.options.js';

export const {
  ConfigurableModuleClass: ServiceAppConfigurableModule,
  MODULE_OPTIONS_TOKEN: SERVICE_APP_MODULE_OPTIONS,
  OPTIONS_TYPE: SERVICE_APP_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SERVICE_APP_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ServiceAppModuleOptions>({ moduleName: 'HubtelServiceApp' })
  .setClassMethodName('forRoot')
  .setExtras<ServiceAppModuleExtras>({ isGlobal: false, routes: {} }, (definition, extras) => {
    // forRoot without access options needs no guard; forRootAsync may set them later: keep it.
    const guarded = accessGuardNeeded(definition, SERVICE_APP_MODULE_OPTIONS, (options) => options.access);
    return {
      ...definition,
      global: extras.isGlobal,
      controllers: [...(definition.controllers ?? []), ...createServiceAppController(extras.routes, guarded)],
    };
  })
  .build();
