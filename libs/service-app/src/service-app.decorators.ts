import { Inject } from '@nestjs/common';
import { HUBTEL_DEFAULT_ACCOUNT, type HubtelHandlerOptions } from 'nestjs-hubtel';
import { createHandlerDecorator, createListenerDecorator } from '#internal';
import { FulfillmentService } from './fulfillment/index.js';
import { getFulfillmentAccountToken } from './service-app.constants.js';
import { ServiceAppEvents, fulfillmentEventFor } from './service-app.events.js';

/**
 * Handles paid orders (payload: FulfillmentRequestedEvent) — of one ServiceCode, or of every code
 * when none is given. Runs once per OrderId; a throw is retried with backoff (`fulfillmentRetry`),
 * then `failed` is reported. Its return value becomes the callback's `MetaData` (or return
 * `deferFulfillment()` / `failFulfillment()`). Handlers of the code run before catch-all ones.
 *
 * ```ts
 * @OnFulfillment()
 * async deliver(order: FulfillmentRequestedEvent) {
 *   await this.topUp.send(order.serviceData.destination as string, order.item!.Price);
 * }
 * ```
 */
export function OnFulfillment(serviceCode?: string, options?: HubtelHandlerOptions): MethodDecorator {
  if (serviceCode === undefined) return onAnyFulfillment(options);
  return createHandlerDecorator(fulfillmentEventFor(serviceCode))(options);
}
// Made at load: a plain @OnEvent on these events is recognised (and warned about) without one.
const onAnyFulfillment = createHandlerDecorator(ServiceAppEvents.Fulfillment);

/** The platform accepted a fulfillment callback (payload: FulfillmentCallbackSentEvent). */
export const OnFulfillmentCallbackSent = createListenerDecorator(ServiceAppEvents.CallbackSent);

/** A fulfillment or its callback was given up on (payload: DeadLetterEvent). */
export const OnServiceAppDeadLetter = createListenerDecorator(ServiceAppEvents.DeadLetter);

/**
 * A fulfillment request failed verification (payload: FulfillmentRejectedEvent): nothing was
 * delivered nor reported. An alert, emitted once; a throwing handler is logged, not retried.
 */
export const OnFulfillmentRejected = createListenerDecorator(ServiceAppEvents.Rejected);

/**
 * An order was paid but matches its cart on neither count (payload: FulfillmentAttentionEvent):
 * nothing delivered; resolve it with `FulfillmentService.resolveAttention()`. A recorded job: runs
 * once per order, retried when it throws.
 */
export const OnFulfillmentAttention = createHandlerDecorator(ServiceAppEvents.Attention);

/**
 * Answers `query` requests (payload: ServiceQueryEvent): the platform asking the service for data.
 * The return value (ServiceQueryAnswer, or a promise of it) is the answer; without a handler the
 * module answers a polite `Release` (`messages.queryUnavailable`).
 *
 * ```ts
 * @OnServiceQuery()
 * balance(query: ServiceQueryEvent): ServiceQueryAnswer {
 *   return `Bundles from GHS 5.00 for ${query.serviceCode}`;
 * }
 * ```
 */
export const OnServiceQuery = createListenerDecorator(ServiceAppEvents.Query);

/**
 * Injects the orders of an account: `@InjectFulfillment('north') north: FulfillmentAccount`,
 * registered with `ServiceAppModule.registerAccount({ name: 'north', ... })`. Without a name (or
 * with `default`), the default account's FulfillmentService.
 */
export function InjectFulfillment(account?: string): ReturnType<typeof Inject> {
  return Inject(
    account === undefined || account === HUBTEL_DEFAULT_ACCOUNT
      ? FulfillmentService
      : getFulfillmentAccountToken(account),
  );
}
