import { Module, type DynamicModule } from '@nestjs/common';
import { HUBTEL_DEFAULT_ACCOUNT, HubtelLogger } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  hubtelModuleRecipe,
  type HubtelAccountAsyncOptions,
  type HubtelAccountOptions,
} from '#internal';
import { FulfillmentAccount, FulfillmentService } from './fulfillment/index.js';
import {
  ServiceAppAccounts,
  serviceAppAccount,
  type ServiceAppDefaultAccount,
  serviceAppTransportConfig,
} from './service-app.accounts.js';
import {
  SERVICE_APP_ACCESS_POLICY,
  SERVICE_APP_ACCOUNTS,
  SERVICE_APP_OPTIONS,
  SERVICE_APP_PIPELINE,
  SERVICE_APP_STORE,
  SERVICE_APP_TRANSPORT,
  getFulfillmentAccountToken,
} from './service-app.constants.js';
import { ServiceAppEvents } from './service-app.events.js';
import { createServiceAppController } from './service-app.controller.js';
import { SERVICE_APP_OPTIONS_RECIPE, type ServiceAppAccountOverrides } from './service-app.options.js';
import type { ServiceAppModuleExtras } from './service-app.types.js';
import { ServiceFlowRegistry, ServiceFlowService } from './flow/index.js';

const SERVICE_APP_MODULE = hubtelModuleRecipe({
  options: SERVICE_APP_OPTIONS_RECIPE,
  module: 'ServiceAppModule',
  factoryMethod: 'create',
  resolvedToken: SERVICE_APP_OPTIONS,
  extras: { routes: {} } as ServiceAppModuleExtras,
  // One controller for every account: named accounts add no route (core's inboundPaths).
  extend: (definition, extras) => ({
    ...definition,
    controllers: [...(definition.controllers ?? []), ...createServiceAppController(extras.routes)],
  }),
  registry: ServiceAppAccounts,
  accounts: {
    provide: SERVICE_APP_ACCOUNTS,
    inject: { flows: ServiceFlowService },
    default: (d: ServiceAppDefaultAccount, own, accounts) => {
      d.flows.accountEngines ??= accounts; // how its flows find a named account's
      return serviceAppAccount(d, HUBTEL_DEFAULT_ACCOUNT, d.resolved, own);
    },
    named: serviceAppAccount,
    // Store, access policy, transport and pipeline: core's inbound kit.
    inbound: {
      emits: 'delivers fulfillment events',
      store: SERVICE_APP_STORE,
      access: SERVICE_APP_ACCESS_POLICY,
      transport: {
        provide: SERVICE_APP_TRANSPORT,
        config: serviceAppTransportConfig,
        context: 'HubtelServiceApp',
      },
      pipeline: {
        provide: SERVICE_APP_PIPELINE,
        // Job types are defined by FulfillmentService (their definitions need its state).
        settings: (options) => ({
          name: 'service-app',
          deadLetterEvent: ServiceAppEvents.DeadLetter,
          shutdownGraceMs: options.shutdownGraceMs,
          logger: new HubtelLogger('HubtelServiceApp'),
        }),
      },
      pathSecret: HUBTEL_ENV.serviceAppPathSecret,
      routes: (name) => `its service-flow and fulfillment routes (/${name})`,
    },
  },
  token: getFulfillmentAccountToken,
  // Bound by name, found at each call: the FulfillmentService is forRoot's (global or not).
  bind: (accounts, name) => new FulfillmentAccount(name, accounts),
});

/** `ServiceAppModule.registerAccount(...)` argument: the account's name, its options, and module extras. */
export type ServiceAppAccountOptions = HubtelAccountOptions<ServiceAppAccountOverrides>;
/** `ServiceAppModule.registerAccountAsync(...)` argument. */
export interface ServiceAppAccountAsyncOptions extends HubtelAccountAsyncOptions<ServiceAppAccountOverrides> {}

/**
 * Programmable services, the merchant's side (beside `EventEmitterModule.forRoot()`): serves
 * `POST /api/service-flow` and `/api/fulfillment`, confirms payments, runs `@OnFulfillment()` handlers
 * once per order and posts the callback. `registerAccount({ name })`: routes `/<name>`, own credentials.
 */
@Module({
  providers: [ServiceFlowRegistry, ServiceFlowService, FulfillmentService],
  exports: [
    ServiceFlowService,
    FulfillmentService,
    ServiceFlowRegistry,
    SERVICE_APP_STORE,
    SERVICE_APP_PIPELINE,
  ],
})
export class ServiceAppModule extends SERVICE_APP_MODULE.ConfigurableModuleClass {
  /** Options inline (all optional). Extras: `isGlobal`, `routes` (prefix, guards, decorators, disabled). */
  static override forRoot(options: typeof SERVICE_APP_MODULE.OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }
}
