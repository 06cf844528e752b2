import { Module } from '@nestjs/common';
import { type HubtelRouteOptions } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  hubtelModuleRecipe,
  mountController,
  type HubtelAccountAsyncOptions,
  type HubtelAccountOptions,
  type HubtelModuleExtras,
} from '#internal';
import { CheckoutAccounts, checkoutTransportConfig, checkoutAccount } from './checkout.accounts.js';
import { CheckoutCallbackController } from './callbacks/callback.controller.js';
import { CheckoutInvoiceStore } from './invoices/invoice.store.js';
import { CheckoutReconciler } from './reconciliation/invoice.reconciler.js';
import { CheckoutSettlement } from './callbacks/payment.settlement.js';
import {
  CHECKOUT_ACCESS_POLICY,
  CHECKOUT_ACCOUNTS,
  CHECKOUT_DEFAULT_CALLBACK_PATH,
  CHECKOUT_PIPELINE,
  CHECKOUT_PIPELINE_NAME,
  CHECKOUT_RESOLVED_OPTIONS,
  CHECKOUT_STORE,
  CHECKOUT_TRANSPORT,
  getCheckoutAccountToken,
} from './checkout.constants.js';
import { CHECKOUT_EVENT_JOBS, CheckoutEvents } from './checkout.events.js';
import {
  CHECKOUT_OPTIONS_RECIPE,
  type CheckoutAccountOverrides,
  type CheckoutRouteInfo,
} from './checkout.options.js';
import { CheckoutService } from './checkout.service.js';

// A handled event's record only has to make the same outcome unrecordable again: its payload goes.
const COMPACT_EVENT_JOBS = Object.fromEntries(
  CHECKOUT_EVENT_JOBS.map((event) => [event, { compactWhenDone: () => undefined }]),
);

/** Extras of `forRoot`/`forRootAsync`: static, as Nest fixes routes before async options resolve. */
export interface CheckoutModuleExtras extends HubtelModuleExtras {
  /**
   * The callback route: `path` (default `hubtel/checkout/callback`, a named account's `<path>/<name>`),
   * `decorators`, `guards`, or `disabled: true` to mount it yourself (`CheckoutService.handleCallback`).
   */
  callback?: HubtelRouteOptions;
}

const routeInfo = (extras: CheckoutModuleExtras): CheckoutRouteInfo => ({
  path: extras.callback?.path ?? CHECKOUT_DEFAULT_CALLBACK_PATH,
  disabled: extras.callback?.disabled === true,
});

const CHECKOUT_MODULE = hubtelModuleRecipe({
  options: CHECKOUT_OPTIONS_RECIPE,
  module: 'CheckoutModule',
  factoryMethod: 'createCheckoutOptions',
  resolvedToken: CHECKOUT_RESOLVED_OPTIONS,
  extras: { callback: {} } as CheckoutModuleExtras,
  context: routeInfo,
  // One controller for every account: it routes each request and checks that account's access.
  extend: (definition, extras) => ({
    ...definition,
    controllers: routeInfo(extras).disabled
      ? []
      : [mountController(CheckoutCallbackController, CHECKOUT_DEFAULT_CALLBACK_PATH, extras.callback ?? {})],
  }),
  registry: CheckoutAccounts,
  accounts: {
    provide: CHECKOUT_ACCOUNTS,
    inject: {},
    named: checkoutAccount,
    // Store, access policy, transport and pipeline: core's inbound kit.
    inbound: {
      emits: 'emits its outcomes as events',
      store: CHECKOUT_STORE,
      access: CHECKOUT_ACCESS_POLICY,
      transport: { provide: CHECKOUT_TRANSPORT, config: checkoutTransportConfig, context: 'HubtelCheckout' },
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
      pathSecret: HUBTEL_ENV.checkoutPathSecret,
      routes: (name, route) => (route.disabled ? undefined : `POST /${route.path}/${name}`),
    },
  },
  token: getCheckoutAccountToken,
  bind: (accounts, name) => accounts.service(name),
});

/** `CheckoutModule.forRoot(...)` argument. */
export type CheckoutModuleForRootOptions = typeof CHECKOUT_MODULE.OPTIONS_TYPE;
/** `CheckoutModule.forRootAsync(...)` argument (useFactory / useClass / useExisting, imports, inject). */
export type CheckoutModuleAsyncOptions = typeof CHECKOUT_MODULE.ASYNC_OPTIONS_TYPE;
/** `CheckoutModule.registerAccount(...)` argument: the account's name, its options, and module extras. */
export type CheckoutAccountOptions = HubtelAccountOptions<CheckoutAccountOverrides>;
/** `CheckoutModule.registerAccountAsync(...)` argument. */
export interface CheckoutAccountAsyncOptions extends HubtelAccountAsyncOptions<CheckoutAccountOverrides> {}

/**
 * Online checkout: invoices, verified payment callbacks, status checks and reconciliation, beside
 * `EventEmitterModule.forRoot()`. `registerAccount({ name, clientId, clientSecret })`: a further
 * account (`@InjectCheckout(name)`) with its own keys, its callbacks on `<callback path>/<name>`.
 */
@Module({
  providers: [CheckoutInvoiceStore, CheckoutSettlement, CheckoutReconciler, CheckoutService],
  exports: [CheckoutService, CheckoutReconciler, CHECKOUT_RESOLVED_OPTIONS, CHECKOUT_STORE],
})
export class CheckoutModule extends CHECKOUT_MODULE.ConfigurableModuleClass {}
