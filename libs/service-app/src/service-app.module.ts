import { HttpService } from '@nestjs/axios';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from 'nestjs-hubtel';
import {
  HUBTEL_STATUS_CHECK_BUDGET,
  registerAccountAsyncModule,
  registerAccountModule,
  type AccountModuleSpec,
  inboundKit,
  type HttpTransport,
  type InboundAccessPolicy,
  type StatusCheckBudget,
} from '#internal';
import { FulfillmentAccount } from './fulfillment.service.js';
import { ServiceAppAccounts, serviceAppTransportConfig } from './service-app.accounts.js';
import { FulfillmentCallbackClient } from './fulfillment-callback.client.js';
import { FulfillmentService } from './fulfillment.service.js';
import {
  SERVICE_APP_ACCESS_POLICY,
  SERVICE_APP_ACCOUNTS,
  SERVICE_APP_OPTIONS,
  SERVICE_APP_PIPELINE,
  SERVICE_APP_STATUS_CLIENT,
  SERVICE_APP_STORE,
  SERVICE_APP_TRANSPORT,
  getFulfillmentAccountToken,
} from './service-app.constants.js';
import { PaymentStatusClient } from './payment-status.client.js';
import { ServiceAppEvents } from './service-app.events.js';
import { ServiceAppLogger } from './service-app.logger.js';
import {
  SERVICE_APP_ASYNC_OPTIONS_TYPE,
  SERVICE_APP_MODULE_OPTIONS,
  SERVICE_APP_OPTIONS_TYPE,
  ServiceAppConfigurableModule,
  type ServiceAppAccountAsyncOptions,
  type ServiceAppAccountOptions,
} from './service-app.module-definition.js';
import {
  resolveServiceAppOptions,
  type ResolvedServiceAppOptions,
  type ServiceAppModuleOptions,
} from './service-app.options.js';
import { ServiceFlowRegistry } from './service-flow.registry.js';
import { ServiceFlowService } from './service-flow.service.js';

/** Store, access policy, transport and pipeline, built by core's inbound kit. */
const kit = inboundKit<ResolvedServiceAppOptions>({
  module: 'ServiceAppModule',
  emits: 'delivers fulfillment events',
  optionPrefix: 'serviceApp',
  options: SERVICE_APP_OPTIONS,
  store: SERVICE_APP_STORE,
  access: SERVICE_APP_ACCESS_POLICY,
  transport: {
    provide: SERVICE_APP_TRANSPORT,
    // The default account's; each named account gets its own (service-app.accounts.ts).
    config: (options) => serviceAppTransportConfig(options),
  },
  pipeline: {
    provide: SERVICE_APP_PIPELINE,
    // Job types are defined by FulfillmentService (their definitions need its state).
    settings: (options) => ({
      name: 'service-app',
      deadLetterEvent: ServiceAppEvents.DeadLetter,
      shutdownGraceMs: options.shutdownGraceMs,
      logger: new ServiceAppLogger(),
    }),
  },
});

/**
 * One ServiceAppAccounts per application, whichever modules register accounts: global, so
 * forRoot's module and every registerAccount module share it (each Nest application gets its own).
 */
@Global()
@Module({ providers: [ServiceAppAccounts], exports: [ServiceAppAccounts] })
class ServiceAppAccountsModule {}

/** The module `registerAccount(Async)` returns (one per account name). */
@Module({})
class ServiceAppAccountModule {}

/** How `registerAccount(Async)` make their modules (core's account-module helpers). */
const ACCOUNT_MODULE: AccountModuleSpec<ServiceAppAccounts> = {
  area: 'serviceApp',
  forRoot: 'ServiceAppModule.forRoot',
  module: ServiceAppAccountModule,
  registryModule: ServiceAppAccountsModule,
  registry: ServiceAppAccounts,
  token: getFulfillmentAccountToken,
  register: (accounts, name, overrides) => {
    accounts.register(name, overrides);
    // Bound by name, found at each call: the FulfillmentService is forRoot's (global or not).
    return new FulfillmentAccount(name, accounts);
  },
};

/**
 * Programmable services, the merchant's side: serves `POST /api/service-flow` (the session) and
 * `POST /api/fulfillment` (paid orders), confirms each order's payment with the transaction status
 * check (with `statusCheck`), runs your `@OnFulfillment()` handlers exactly once per order and
 * posts the fulfillment callback. Needs `EventEmitterModule.forRoot()` in the app.
 *
 * ```ts
 * @Module({
 *   imports: [
 *     EventEmitterModule.forRoot(),
 *     ServiceAppModule.forRoot({
 *       statusCheck: { clientId, clientSecret, posSalesId }, // or serviceAppOptionsFromEnv()
 *       access: { allowedIps: [...] },
 *     }),
 *   ],
 *   providers: [BundleFlow, BundleFulfillment],
 * })
 * export class AppModule {}
 * ```
 */
@Module({
  imports: [...kit.imports, ServiceAppAccountsModule],
  providers: [
    {
      provide: SERVICE_APP_OPTIONS,
      useFactory: (options: ServiceAppModuleOptions) => resolveServiceAppOptions(options),
      inject: [SERVICE_APP_MODULE_OPTIONS],
    },
    ...kit.providers,
    {
      provide: SERVICE_APP_STATUS_CLIENT,
      // The instance's status-check budget (one per app, shared with CheckoutModule): configured
      // here even without a status check of ours, as checkout's checks draw on it too.
      useFactory: (
        transport: HttpTransport,
        options: ResolvedServiceAppOptions,
        budget: StatusCheckBudget,
      ) => {
        budget.configure(options.statusCheckBudget.perMinute);
        return options.statusCheck
          ? new PaymentStatusClient(
              transport,
              options.statusCheck.posSalesId,
              options.statusCheck.timeoutMs,
              budget,
            )
          : undefined;
      },
      inject: [SERVICE_APP_TRANSPORT, SERVICE_APP_OPTIONS, HUBTEL_STATUS_CHECK_BUDGET],
    },
    ServiceFlowRegistry,
    ServiceFlowService,
    FulfillmentCallbackClient,
    {
      // The default account, handed to the application's accounts: named ones inherit from it.
      provide: SERVICE_APP_ACCOUNTS,
      useFactory: (
        accounts: ServiceAppAccounts,
        options: ServiceAppModuleOptions,
        resolved: ResolvedServiceAppOptions,
        access: InboundAccessPolicy,
        status: PaymentStatusClient | undefined,
        callback: FulfillmentCallbackClient,
        flows: ServiceFlowService,
        http: HttpService,
        budget: StatusCheckBudget,
        telemetry?: HubtelTelemetry,
      ) =>
        accounts.attachDefault({
          options: options ?? {},
          resolved,
          access,
          status,
          callback,
          flows,
          http,
          budget,
          ...(telemetry ? { telemetry } : {}),
        }),
      inject: [
        ServiceAppAccounts,
        SERVICE_APP_MODULE_OPTIONS,
        SERVICE_APP_OPTIONS,
        SERVICE_APP_ACCESS_POLICY,
        SERVICE_APP_STATUS_CLIENT,
        FulfillmentCallbackClient,
        ServiceFlowService,
        HttpService,
        HUBTEL_STATUS_CHECK_BUDGET,
        { token: HUBTEL_TELEMETRY, optional: true },
      ],
    },
    FulfillmentService,
  ],
  exports: [
    ServiceFlowService,
    FulfillmentService,
    ServiceFlowRegistry,
    SERVICE_APP_STORE,
    SERVICE_APP_PIPELINE,
  ],
})
export class ServiceAppModule extends ServiceAppConfigurableModule {
  /** Options inline (all optional). Extras: `isGlobal`, `routes` (prefix, guards, decorators, disabled). */
  static override forRoot(options: typeof SERVICE_APP_OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }

  /** Options from a factory / class (`useFactory` + `inject`, `useClass`, `useExisting`); extras as in forRoot. */
  static override forRootAsync(options: typeof SERVICE_APP_ASYNC_OPTIONS_TYPE): DynamicModule {
    return super.forRootAsync(options);
  }

  /**
   * A further account, by name: its programmable service answers on `/api/service-flow/<name>`
   * and `/api/fulfillment/<name>` (the module's one controller), its orders are verified with its
   * own `statusCheck` and called back with its own `callbackCredentials`; `@InjectFulfillment(name)`
   * injects its FulfillmentAccount (in the modules that import this one, or everywhere with
   * `isGlobal`), `fulfillment.forAccount(name)` reaches it from anywhere. Every option it leaves
   * out is the default account's (`ServiceAppModule.forRoot`, required), except its credentials
   * and path secret.
   */
  static registerAccount(options: ServiceAppAccountOptions): DynamicModule {
    return registerAccountModule(ACCOUNT_MODULE, options);
  }

  /** `registerAccount` with the account's options from a factory (ConfigService, a vault...). */
  static registerAccountAsync(options: ServiceAppAccountAsyncOptions): DynamicModule {
    return registerAccountAsyncModule(ACCOUNT_MODULE, options);
  }
}
