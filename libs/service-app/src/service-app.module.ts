import {
  HubtelConfigError,
  HUBTEL_JOB_RUNNER,
  HUBTEL_STORE,
  HUBTEL_TELEMETRY,
  type HubtelStore,
  type HubtelTelemetry,
  type JobRunner,
} from 'nestjs-hubtel';
import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { HttpService } from '@nestjs/axios';
import { EventEmitter2, EventEmitterReadinessWatcher } from '@nestjs/event-emitter';
import {
  HandlerRegistry,
  HttpTransport,
  InboundAccessPolicy,
  InboundPipeline,
  resolveStoreOption,
  hubtelHttpModule,
} from 'nestjs-hubtel/internal';
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
  imports: [hubtelHttpModule(), DiscoveryModule],
  providers: [
    {
      provide: SERVICE_APP_OPTIONS,
      useFactory: (options: ServiceAppModuleOptions) => resolveServiceAppOptions(options),
      inject: [SERVICE_APP_MODULE_OPTIONS],
    },
    {
      provide: SERVICE_APP_STORE,
      useFactory: (options: ResolvedServiceAppOptions, moduleRef: ModuleRef, appStore?: HubtelStore) =>
        resolveStoreOption(options.store, moduleRef, appStore, 'serviceApp.store'),
      inject: [SERVICE_APP_OPTIONS, ModuleRef, { token: HUBTEL_STORE, optional: true }],
    },
    {
      provide: SERVICE_APP_ACCESS_POLICY,
      useFactory: (options: ResolvedServiceAppOptions) =>
        new InboundAccessPolicy(options.access, 'serviceApp.access.'),
      inject: [SERVICE_APP_OPTIONS],
    },
    {
      provide: SERVICE_APP_TRANSPORT,
      useFactory: (http: HttpService, options: ResolvedServiceAppOptions, telemetry?: HubtelTelemetry) =>
        new HttpTransport(http, {
          baseUrls: { fulfillment: options.callbackUrl, status: options.statusCheck?.url },
          credentials: {
            fulfillment: options.callbackCredentials,
            status: options.statusCheck?.credentials,
          },
          timeoutMs: options.callbackTimeoutMs,
          // One attempt per call: the pipeline schedules the callback's retries up to its deadline.
          retry: {
            maxAttempts: 1,
            baseDelayMs: options.callbackRetry.baseDelayMs,
            maxDelayMs: options.callbackRetry.maxDelayMs,
          },
          loggerContext: 'HubtelServiceApp',
          ...(telemetry ? { telemetry } : {}),
        }),
      inject: [HttpService, SERVICE_APP_OPTIONS, { token: HUBTEL_TELEMETRY, optional: true }],
    },
    {
      provide: SERVICE_APP_PIPELINE,
      useFactory: (
        options: ResolvedServiceAppOptions,
        store: HubtelStore,
        emitter: EventEmitter2 | undefined,
        readiness: EventEmitterReadinessWatcher | undefined,
        discovery: DiscoveryService,
        scanner: MetadataScanner,
        runner: JobRunner | undefined,
        telemetry: HubtelTelemetry | undefined,
      ) => {
        if (!emitter) {
          throw new HubtelConfigError(
            'EventEmitterModule',
            'ServiceAppModule needs EventEmitterModule.forRoot() imported in your app (it delivers fulfillment events)',
          );
        }
        return new InboundPipeline({
          name: 'service-app',
          store,
          emitter,
          // BullMQ (HubtelBullmqModule) when the app provides a runner, this process otherwise.
          ...(runner ? { runner } : {}),
          // Handlers are called by identity (class and method), remembered across retries and deploys.
          handlers: new HandlerRegistry({ emitter, discovery, scanner, logger: new ServiceAppLogger() }),
          deadLetterEvent: ServiceAppEvents.DeadLetter,
          recoverOnBootstrap: options.recoverOnBootstrap,
          leaseMs: options.leaseMs,
          sweepIntervalMs: options.sweepIntervalMs,
          shutdownGraceMs: options.shutdownGraceMs,
          whenReady: readiness ? () => readiness.waitUntilReady() : undefined,
          logger: new ServiceAppLogger(),
          ...(telemetry ? { telemetry } : {}),
        });
      },
      inject: [
        SERVICE_APP_OPTIONS,
        SERVICE_APP_STORE,
        { token: EventEmitter2, optional: true },
        { token: EventEmitterReadinessWatcher, optional: true },
        DiscoveryService,
        MetadataScanner,
        { token: HUBTEL_JOB_RUNNER, optional: true },
        { token: HUBTEL_TELEMETRY, optional: true },
      ],
    },
    {
      provide: SERVICE_APP_STATUS_CLIENT,
      useFactory: (transport: HttpTransport, options: ResolvedServiceAppOptions) =>
        options.statusCheck
          ? new PaymentStatusClient(transport, options.statusCheck.posSalesId, options.statusCheck.timeoutMs)
          : undefined,
      inject: [SERVICE_APP_TRANSPORT, SERVICE_APP_OPTIONS],
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
