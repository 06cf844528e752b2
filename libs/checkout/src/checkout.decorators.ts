import { Inject } from '@nestjs/common';
import { type HubtelHandlerOptions } from 'nestjs-hubtel';
import { createHandlerDecorator } from '#internal';
import { CHECKOUT_DEFAULT_ACCOUNT, getCheckoutAccountToken } from './checkout.constants.js';
import { CheckoutEvents } from './checkout.events.js';
import { CheckoutService } from './checkout.service.js';

// Written out so that the declarations name the public option type (from 'nestjs-hubtel').
type CheckoutHandlerDecorator = (options?: HubtelHandlerOptions) => MethodDecorator;

/*
 * Handler decorators: thin wrappers over `@OnEvent(CheckoutEvents.X)` that make the handler's
 * errors visible to the module (`suppressErrors: false`), so a throwing handler is retried with
 * backoff and dead-lettered in the end. Every other `@OnEvent` option can be passed, and
 * `account` (`@OnCheckoutPaid({ account: 'north' })`) runs the handler for that account's
 * invoices only (every payload carries `account`).
 */

/** Handles `CheckoutEvents.Paid` (payload `CheckoutPaidEvent`): runs once per paid invoice. */
export const OnCheckoutPaid: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Paid);
/** Handles `CheckoutEvents.Failed` (payload `CheckoutFailedEvent`). */
export const OnCheckoutFailed: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Failed);
/**
 * Handles `CheckoutEvents.Rejected` (payload `CheckoutRejectedEvent`). Rejections are alerts, not
 * recorded jobs: a handler that throws is logged, not retried.
 */
export const OnCheckoutRejected: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Rejected);
/** Handles `CheckoutEvents.Expired` (payload `CheckoutExpiredEvent`). */
export const OnCheckoutExpired: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Expired);
/**
 * Handles `CheckoutEvents.Attention` (payload `CheckoutAttentionEvent`): runs once per invoice whose
 * verified payment matches on neither count; resolve it with `CheckoutService.resolveAttention()`.
 */
export const OnCheckoutAttention: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Attention);
/** Handles `CheckoutEvents.DeadLetter` (payload `CheckoutDeadLetterEvent`). */
export const OnCheckoutDeadLetter: CheckoutHandlerDecorator = createHandlerDecorator(
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
