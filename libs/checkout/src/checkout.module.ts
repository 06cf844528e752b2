import { Module } from '@nestjs/common';
import { HUBTEL_JOB_RUNNER, type HubtelStore, type JobRunner } from 'nestjs-hubtel';
import {
  HUBTEL_STATUS_CHECK_BUDGET,
  InboundPipeline,
  inboundKit,
  type HttpTransport,
  type StatusCheckBudget,
} from '#internal';
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

// A handled event's record only has to make the same outcome unrecordable again (and say it was
// handled): its payload is dropped once done, a dead one keeps it.
const COMPACT_EVENT_JOBS = Object.fromEntries(
  CHECKOUT_EVENT_JOBS.map((event) => [event, { compactWhenDone: () => undefined }]),
);

/** Store, access policy, transport and pipeline, built by core's inbound kit. */
const kit = inboundKit<ResolvedCheckoutOptions>({
  module: 'CheckoutModule',
  emits: 'emits its outcomes as events',
  optionPrefix: 'checkout',
  options: CHECKOUT_RESOLVED_OPTIONS,
  store: CHECKOUT_STORE,
  access: CHECKOUT_ACCESS_POLICY,
  transport: {
    provide: CHECKOUT_TRANSPORT,
    config: (options) => ({
      baseUrls: { checkout: options.baseUrls.checkout, status: options.baseUrls.status },
      // The checkout API and the status check share the merchant's API key pair.
      credentials: { checkout: options.credentials, status: options.credentials },
      timeoutMs: options.http.timeoutMs,
      retry: options.http.retry,
      loggerContext: 'HubtelCheckout',
    }),
  },
  pipeline: {
    provide: CHECKOUT_PIPELINE,
    settings: ({ handlers }) => ({
      name: CHECKOUT_PIPELINE_NAME,
      deadLetterEvent: CheckoutEvents.DeadLetter,
      retry: handlers.retry,
      shutdownGraceMs: handlers.shutdownGraceMs,
      recordTtlMs: handlers.recordTtlMs,
      jobs: COMPACT_EVENT_JOBS,
    }),
  },
});

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
  imports: kit.imports,
  providers: [
    {
      provide: CHECKOUT_RESOLVED_OPTIONS,
      useFactory: (options: CheckoutModuleOptions, route: CheckoutRouteInfo) =>
        resolveCheckoutOptions(options, route),
      inject: [CHECKOUT_MODULE_OPTIONS, CHECKOUT_ROUTE],
    },
    ...kit.providers,
    {
      provide: CheckoutApiClient,
      // The budget is the instance's (one per app, shared with ServiceAppModule): this module's
      // option only lowers it.
      useFactory: (transport: HttpTransport, options: ResolvedCheckoutOptions, budget: StatusCheckBudget) => {
        budget.configure(options.statusCheckBudget.perMinute);
        return new CheckoutApiClient(transport, options.posSalesId, budget);
      },
      inject: [CHECKOUT_TRANSPORT, CHECKOUT_RESOLVED_OPTIONS, HUBTEL_STATUS_CHECK_BUDGET],
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
      // The emitter the pipeline was made with: the kit checked that the app has one.
      useFactory: (invoices: CheckoutInvoiceStore, pipeline: InboundPipeline) =>
        new CheckoutSettlement(invoices, pipeline, pipeline.emitter),
      inject: [CheckoutInvoiceStore, CHECKOUT_PIPELINE],
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
    CheckoutService,
  ],
  exports: [CheckoutService, CheckoutReconciler, CHECKOUT_RESOLVED_OPTIONS, CHECKOUT_STORE],
})
export class CheckoutModule extends CheckoutConfigurableModule {}
