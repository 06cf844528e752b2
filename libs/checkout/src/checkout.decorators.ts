import { Inject } from '@nestjs/common';
import { type HubtelHandlerOptions } from 'nestjs-hubtel';
import { createHandlerDecorator, createListenerDecorator } from '#internal';
import { CHECKOUT_DEFAULT_ACCOUNT, getCheckoutAccountToken } from './checkout.constants.js';
import { CheckoutEvents } from './checkout.events.js';
import { CheckoutService } from './checkout.service.js';

// Written out so that the declarations name the public option type (from 'nestjs-hubtel').
type CheckoutHandlerDecorator = (options?: HubtelHandlerOptions) => MethodDecorator;

/*
 * Handlers of the recorded outcomes (paid, failed, expired, attention): the module finds the
 * method and calls it once per invoice, retried with backoff until it succeeds, dead-lettered in
 * the end; once every handler succeeded the event is emitted for `@OnEvent` observers (at least
 * once). Listeners of the alerts (rejected, dead letter): `@OnEvent` wrappers, called when the
 * module emits them; a throw is logged. `account` (`@OnCheckoutPaid({ account: 'north' })`) runs
 * the method for that account's invoices only (every payload carries `account`).
 */

/** Handles `CheckoutEvents.Paid` (payload `CheckoutPaidEvent`): runs once per paid invoice. */
export const OnCheckoutPaid: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Paid);
/** Handles `CheckoutEvents.Failed` (payload `CheckoutFailedEvent`). */
export const OnCheckoutFailed: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Failed);
/**
 * Listens to `CheckoutEvents.Rejected` (payload `CheckoutRejectedEvent`). Rejections are alerts, not
 * recorded jobs: emitted once, and a listener that throws is logged, not retried.
 */
export const OnCheckoutRejected: CheckoutHandlerDecorator = createListenerDecorator(CheckoutEvents.Rejected);
/** Handles `CheckoutEvents.Expired` (payload `CheckoutExpiredEvent`). */
export const OnCheckoutExpired: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Expired);
/**
 * Handles `CheckoutEvents.Attention` (payload `CheckoutAttentionEvent`): runs once per invoice whose
 * verified payment matches on neither count; resolve it with `CheckoutService.resolveAttention()`.
 */
export const OnCheckoutAttention: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Attention);
/** Listens to `CheckoutEvents.DeadLetter` (payload `CheckoutDeadLetterEvent`), emitted once per dead letter. */
export const OnCheckoutDeadLetter: CheckoutHandlerDecorator = createListenerDecorator(
  CheckoutEvents.DeadLetter,
);

/**
 * Injects the service of an account: `@InjectCheckout('north') north: CheckoutAccountService`,
 * registered with `CheckoutModule.registerAccount({ name: 'north', ... })`. Without a name (or with
 * `default`), the default account's CheckoutService.
 */
export function InjectCheckout(account?: string): ReturnType<typeof Inject> {
  return Inject(
    account === undefined || account === CHECKOUT_DEFAULT_ACCOUNT
      ? CheckoutService
      : getCheckoutAccountToken(account),
  );
}
