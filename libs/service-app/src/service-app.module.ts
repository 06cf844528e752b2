import { Module, type DynamicModule } from '@nestjs/common';
import {
  HUBTEL_STATUS_CHECK_BUDGET,
  inboundKit,
  type HttpTransport,
  type StatusCheckBudget,
} from '#internal';
import { FulfillmentCallbackClient } from './fulfillment-callback.client.js';
import { FulfillmentService } from './fulfillment.service.js';
import {
  SERVICE_APP_ACCESS_POLICY,
  SERVICE_APP_OPTIONS,
  SERVICE_APP_PIPELINE,
  SERVICE_APP_STATUS_CLIENT,
  SERVICE_APP_STORE,
  SERVICE_APP_TRANSPORT,
} from './service-app.constants.js';
import { PaymentStatusClient } from './payment-status.client.js';
import { ServiceAppEvents } from './service-app.events.js';
import { ServiceAppLogger } from './service-app.logger.js';
import {
  SERVICE_APP_ASYNC_OPTIONS_TYPE,
  SERVICE_APP_MODULE_OPTIONS,
  SERVICE_APP_OPTIONS_TYPE,
  ServiceAppConfigurableModule,
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
    config: (options) => ({
      baseUrls: { fulfillment: options.callbackUrl, status: options.statusCheck?.url },
      credentials: { fulfillment: options.callbackCredentials, status: options.statusCheck?.credentials },
      timeoutMs: options.callbackTimeoutMs,
      // One attempt per call: the pipeline schedules the callback's retries up to its deadline.
      retry: {
        maxAttempts: 1,
        baseDelayMs: options.callbackRetry.baseDelayMs,
        maxDelayMs: options.callbackRetry.maxDelayMs,
      },
      loggerContext: 'HubtelServiceApp',
    }),
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
  imports: kit.imports,
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
}
