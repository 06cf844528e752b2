import { Inject } from '@nestjs/common';
import { type HubtelHandlerOptions } from 'nestjs-hubtel';
import { createHandlerDecorator, createListenerDecorator } from '#internal';
import { CHECKOUT_DEFAULT_ACCOUNT, getCheckoutAccountToken } from './checkout.constants.js';
import { CheckoutEvents } from './checkout.events.js';
import { CheckoutService } from './checkout.service.js';

// Written out so that the declarations name the public option type.
type CheckoutHandlerDecorator = (options?: HubtelHandlerOptions) => MethodDecorator;

/** Handles `CheckoutEvents.Paid` (payload `CheckoutPaidEvent`): runs once per paid invoice. */
export const OnCheckoutPaid: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Paid);
/** Handles `CheckoutEvents.Failed` (payload `CheckoutFailedEvent`). */
export const OnCheckoutFailed: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Failed);
/** Listens to `CheckoutEvents.Rejected` (payload `CheckoutRejectedEvent`): an alert, not retried. */
export const OnCheckoutRejected: CheckoutHandlerDecorator = createListenerDecorator(CheckoutEvents.Rejected);
/** Handles `CheckoutEvents.Expired` (payload `CheckoutExpiredEvent`). */
export const OnCheckoutExpired: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Expired);
/** Handles `CheckoutEvents.Attention` (payload `CheckoutAttentionEvent`): once per invoice. */
export const OnCheckoutAttention: CheckoutHandlerDecorator = createHandlerDecorator(CheckoutEvents.Attention);
/** Listens to `CheckoutEvents.DeadLetter` (payload `CheckoutDeadLetterEvent`), emitted once per dead letter. */
export const OnCheckoutDeadLetter: CheckoutHandlerDecorator = createListenerDecorator(
  CheckoutEvents.DeadLetter,
);

/** Injects an account's service: `@InjectCheckout('north') north: CheckoutAccountService`. */
export function InjectCheckout(account?: string): ReturnType<typeof Inject> {
  const named = account !== undefined && account !== CHECKOUT_DEFAULT_ACCOUNT;
  return Inject(named ? getCheckoutAccountToken(account) : CheckoutService);
}
