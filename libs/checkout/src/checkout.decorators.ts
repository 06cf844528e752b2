import { type HubtelHandlerOptions } from 'nestjs-hubtel';
import { createHandlerDecorator } from '#internal';
import { CheckoutEvents } from './checkout.events.js';

// Written out so that the declarations name the public option type (from 'nestjs-hubtel').
type CheckoutHandlerDecorator = (options?: HubtelHandlerOptions) => MethodDecorator;

/*
 * Handler decorators: thin wrappers over `@OnEvent(CheckoutEvents.X)` that make the handler's
 * errors visible to the module (`suppressErrors: false`), so a throwing handler is retried with
 * backoff and dead-lettered in the end. Every other `@OnEvent` option can be passed.
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
/** Handles `CheckoutEvents.DeadLetter` (payload `CheckoutDeadLetterEvent`). */
export const OnCheckoutDeadLetter: CheckoutHandlerDecorator = createHandlerDecorator(
  CheckoutEvents.DeadLetter,
);
