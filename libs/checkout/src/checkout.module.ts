import { HttpService } from '@nestjs/axios';
import { Module } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { EventEmitter2, EventEmitterReadinessWatcher } from '@nestjs/event-emitter';
import {
  HUBTEL_JOB_RUNNER,
  HUBTEL_TELEMETRY,
  HUBTEL_STORE,
  HubtelConfigError,
  type HubtelStore,
  type JobRunner,
  type HubtelTelemetry,
} from 'nestjs-hubtel';
import {
  HandlerRegistry,
  InboundAccessPolicy,
  InboundPipeline,
  resolveStoreOption,
  createHttpTransport,
  hubtelHttpModule,
  type HttpTransport,
} from 'nestjs-hubtel/internal';
import { CheckoutApiClient } from './checkout-api.client.js';
import { CheckoutInvoiceStore } from './checkout-invoice.store.js';
import { CheckoutReconciler } from './checkout-reconciler.js';
import { CHECKOUT_EVENT_JOBS, CheckoutSettlement } from './checkout-settlement.js';
import { CheckoutVerifier } from './checkout-verifier.js';
import {
  CHECKOUT_ACCESS_POLICY,
  CHECKOUT_PIPELINE,
  CHECKOUT_PIPELINE_NAME,
  CHECKOUT_RESOLVED_OPTIONS,
  CHECKOUT_ROUTE,
  CHECKOUT_STORE,
  CHECKOUT_TRANSPORT,
} from './checkout.constants.js';
import { CheckoutEvents } from './checkout.events.js';
import { CHECKOUT_MODULE_OPTIONS, CheckoutConfigurableModule } from './checkout.module-definition.js';
import {
  resolveCheckoutOptions,
  type CheckoutModuleOptions,
  type CheckoutRouteInfo,
  type ResolvedCheckoutOptions,
} from './checkout.options.js';
import { CheckoutService } from './checkout.service.js';

function requireEmitter(emitter: EventEmitter2 | undefined): EventEmitter2 {
  if (!emitter) {
    throw new HubtelConfigError(
      'EventEmitterModule',
      'CheckoutModule emits its outcomes as events: import EventEmitterModule.forRoot() in your application module',
    );
  }
  return emitter;
}

/**
 * Online checkout: invoices, verified payment callbacks, status checks and reconciliation.
 *
 * ```ts
 * @Module({ imports: [
 *   EventEmitterModule.forRoot(),
 *   CheckoutModule.forRoot({ clientId, clientSecret, posSalesId, merchantAccountNumber,
 *     publicBaseUrl: 'https://shop.example.com', returnUrl, cancellationUrl }),
 * ] })
 * ```
 * Options are validated when the module is created: a bad option stops the application at
 * bootstrap with a HubtelConfigError naming it.
 */
@Module({
  imports: [hubtelHttpModule(), DiscoveryModule],
  providers: [
    {
      provide: CHECKOUT_RESOLVED_OPTIONS,
      useFactory: (options: CheckoutModuleOptions, route: CheckoutRouteInfo) =>
        resolveCheckoutOptions(options, route),
      inject: [CHECKOUT_MODULE_OPTIONS, CHECKOUT_ROUTE],
    },
    {
      provide: CHECKOUT_STORE,
      useFactory: (options: ResolvedCheckoutOptions, moduleRef: ModuleRef, appStore?: HubtelStore) =>
        resolveStoreOption(options.store, moduleRef, appStore, 'checkout.store'),
      inject: [CHECKOUT_RESOLVED_OPTIONS, ModuleRef, { token: HUBTEL_STORE, optional: true }],
    },
    {
      provide: CHECKOUT_TRANSPORT,
      useFactory: (http: HttpService, options: ResolvedCheckoutOptions, telemetry?: HubtelTelemetry) =>
        createHttpTransport(
          http,
          {
            baseUrls: { checkout: options.baseUrls.checkout, status: options.baseUrls.status },
            // The checkout API and the status check share the merchant's API key pair.
            credentials: { checkout: options.credentials, status: options.credentials },
            timeoutMs: options.http.timeoutMs,
            retry: options.http.retry,
            ...(telemetry ? { telemetry } : {}),
          },
          'HubtelCheckout',
        ),
      inject: [HttpService, CHECKOUT_RESOLVED_OPTIONS, { token: HUBTEL_TELEMETRY, optional: true }],
    },
    {
      provide: CheckoutApiClient,
      useFactory: (transport: HttpTransport, options: ResolvedCheckoutOptions) =>
        new CheckoutApiClient(transport, options.posSalesId),
      inject: [CHECKOUT_TRANSPORT, CHECKOUT_RESOLVED_OPTIONS],
    },
    {
      provide: CHECKOUT_PIPELINE,
      useFactory: (
        options: ResolvedCheckoutOptions,
        store: HubtelStore,
        emitter: EventEmitter2 | undefined,
        readiness: EventEmitterReadinessWatcher | undefined,
        discovery: DiscoveryService,
        scanner: MetadataScanner,
        runner: JobRunner | undefined,
        telemetry: HubtelTelemetry | undefined,
      ) => {
        const pipeline = new InboundPipeline({
          name: CHECKOUT_PIPELINE_NAME,
          store,
          emitter: requireEmitter(emitter),
          // BullMQ (HubtelBullmqModule) when the app provides a runner, this process otherwise.
          ...(runner ? { runner } : {}),
          // Handlers are called by identity (class and method), remembered across retries and deploys.
          handlers: new HandlerRegistry({ emitter: requireEmitter(emitter), discovery, scanner }),
          deadLetterEvent: CheckoutEvents.DeadLetter,
          retry: options.handlers.retry,
          recoverOnBootstrap: options.handlers.recoverOnBootstrap,
          leaseMs: options.handlers.leaseMs,
          sweepIntervalMs: options.handlers.sweepIntervalMs,
          shutdownGraceMs: options.handlers.shutdownGraceMs,
          ...(options.handlers.recordTtlMs === undefined
            ? {}
            : { recordTtlMs: options.handlers.recordTtlMs }),
          ...(readiness ? { whenReady: () => readiness.waitUntilReady() } : {}),
          ...(telemetry ? { telemetry } : {}),
        });
        // A handled event's record only has to make the same outcome unrecordable again (and
        // say it was handled): its payload is dropped once done, a dead one keeps it.
        for (const event of CHECKOUT_EVENT_JOBS) pipeline.define(event, { compactWhenDone: () => undefined });
        return pipeline;
      },
      inject: [
        CHECKOUT_RESOLVED_OPTIONS,
        CHECKOUT_STORE,
        { token: EventEmitter2, optional: true },
        { token: EventEmitterReadinessWatcher, optional: true },
        DiscoveryService,
        MetadataScanner,
        { token: HUBTEL_JOB_RUNNER, optional: true },
        { token: HUBTEL_TELEMETRY, optional: true },
      ],
    },
    {
      provide: CheckoutInvoiceStore,
      useFactory: (options: ResolvedCheckoutOptions, store: HubtelStore) =>
        new CheckoutInvoiceStore(
          store,
          options.invoiceTtlMs,
          options.reconciliation.giveUpAfterMs + options.reconciliation.maxIntervalMs * 2,
          Date.now,
          options.reconciliation.enabled,
        ),
      inject: [CHECKOUT_RESOLVED_OPTIONS, CHECKOUT_STORE],
    },
    {
      provide: CheckoutVerifier,
      useFactory: (options: ResolvedCheckoutOptions) => new CheckoutVerifier(options.verification),
      inject: [CHECKOUT_RESOLVED_OPTIONS],
    },
    {
      provide: CheckoutSettlement,
      useFactory: (
        invoices: CheckoutInvoiceStore,
        pipeline: InboundPipeline,
        emitter: EventEmitter2 | undefined,
      ) => new CheckoutSettlement(invoices, pipeline, requireEmitter(emitter)),
      inject: [CheckoutInvoiceStore, CHECKOUT_PIPELINE, { token: EventEmitter2, optional: true }],
    },
    {
      provide: CheckoutReconciler,
      useFactory: (
        options: ResolvedCheckoutOptions,
        invoices: CheckoutInvoiceStore,
        api: CheckoutApiClient,
        settlement: CheckoutSettlement,
        verifier: CheckoutVerifier,
        runner: JobRunner | undefined,
      ) => new CheckoutReconciler(options, invoices, api, settlement, verifier, Date.now, runner),
      inject: [
        CHECKOUT_RESOLVED_OPTIONS,
        CheckoutInvoiceStore,
        CheckoutApiClient,
        CheckoutSettlement,
        CheckoutVerifier,
        { token: HUBTEL_JOB_RUNNER, optional: true },
      ],
    },
    {
      provide: CHECKOUT_ACCESS_POLICY,
      useFactory: (options: ResolvedCheckoutOptions) =>
        new InboundAccessPolicy(options.access, 'checkout.access.'),
      inject: [CHECKOUT_RESOLVED_OPTIONS],
    },
    CheckoutService,
  ],
  exports: [CheckoutService, CheckoutReconciler, CHECKOUT_RESOLVED_OPTIONS, CHECKOUT_STORE],
})
export class CheckoutModule extends CheckoutConfigurableModule {}
