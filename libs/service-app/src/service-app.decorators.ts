import { Inject } from '@nestjs/common';
import { HUBTEL_DEFAULT_ACCOUNT, type HubtelHandlerOptions } from 'nestjs-hubtel';
import { createHandlerDecorator, createListenerDecorator } from '#internal';
import { FulfillmentService } from './fulfillment/index.js';
import { getFulfillmentAccountToken } from './service-app.constants.js';
import { ServiceAppEvents, fulfillmentEventFor } from './service-app.events.js';

/**
 * Handles paid orders of one ServiceCode (or all): once per OrderId, a throw retried
 * (`fulfillmentRetry`) then reported `failed`. The return value becomes the callback's `MetaData`.
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

/** A fulfillment request failed verification: an alert, emitted once (a throw is logged). */
export const OnFulfillmentRejected = createListenerDecorator(ServiceAppEvents.Rejected);

/** A paid order that fits its cart on neither count: once per order, retried; see `resolveAttention()`. */
export const OnFulfillmentAttention = createHandlerDecorator(ServiceAppEvents.Attention);

/** Answers `query` requests with its return value (ServiceQueryAnswer); none: `messages.queryUnavailable`. */
export const OnServiceQuery = createListenerDecorator(ServiceAppEvents.Query);

/** Injects an account's orders: `@InjectFulfillment('north') north: FulfillmentAccount`. */
export function InjectFulfillment(account?: string): ReturnType<typeof Inject> {
  const named = account !== undefined && account !== HUBTEL_DEFAULT_ACCOUNT;
  return Inject(named ? getFulfillmentAccountToken(account) : FulfillmentService);
}
