import { ConfigurableModuleBuilder } from '@nestjs/common';
import { createServiceAppController } from './service-app.controller.js';
import type { FactoryProvider, ModuleMetadata } from '@nestjs/common';
import type {
  ServiceAppAccountOverrides,
  ServiceAppModuleExtras,
  ServiceAppModuleOptions,
} from './service-app.options.js';

export const {
  ConfigurableModuleClass: ServiceAppConfigurableModule,
  MODULE_OPTIONS_TOKEN: SERVICE_APP_MODULE_OPTIONS,
  OPTIONS_TYPE: SERVICE_APP_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SERVICE_APP_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ServiceAppModuleOptions>({ moduleName: 'HubtelServiceApp' })
  .setClassMethodName('forRoot')
  // One controller for every account: named accounts add no route (core's inboundPaths).
  .setExtras<ServiceAppModuleExtras>({ isGlobal: false, routes: {} }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
    controllers: [...(definition.controllers ?? []), ...createServiceAppController(extras.routes)],
  }))
  .build();

/** `ServiceAppModule.registerAccount(...)` argument: the account's name, its options, and module extras. */
export type ServiceAppAccountOptions = ServiceAppAccountOverrides & {
  /** The account's name (`north`): lower-case letters, digits, `-`, `_`; not `default`. */
  name: string;
  /** Make `@InjectFulfillment(name)` work in every module, not only those importing this registration. */
  isGlobal?: boolean;
};

/** `ServiceAppModule.registerAccountAsync(...)` argument. */
export interface ServiceAppAccountAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  name: string;
  isGlobal?: boolean;
  inject?: FactoryProvider['inject'];
  /** The account's options (as `registerAccount` takes them, without `name`). */
  useFactory: (...args: never[]) => ServiceAppAccountOverrides | Promise<ServiceAppAccountOverrides>;
}
