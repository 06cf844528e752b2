import { type DeadLetterEvent, type PaymentAmounts } from 'nestjs-hubtel';
import { dropUndefined } from '#internal';
import type { FulfillmentOrderClaims } from './fulfillment.claims.js';
import type { CartItem, FulfillmentServiceStatus, ServiceData } from './service-app.types.js';

/**
 * Domain events of the ServiceAppModule, handled once per order (`@OnFulfillment()`, ...). Payloads
 * are plain JSON, recorded before handlers run: do not rely on `instanceof` after a restart.
 */
export const ServiceAppEvents = Object.freeze({
  /** A paid order to fulfil, every ServiceCode (payload: FulfillmentRequestedEvent). */
  Fulfillment: 'hubtel.service-app.fulfillment',
  /** A request failed verification (FulfillmentRejectedEvent): nothing ran or was sent. An alert. */
  Rejected: 'hubtel.service-app.rejected',
  /** The platform accepted a fulfillment callback (payload: FulfillmentCallbackSentEvent). */
  CallbackSent: 'hubtel.service-app.callback-sent',
  /** A job gave up (DeadLetterEvent): `fulfillment` (reported `failed`) or `callback` (act by hand). */
  DeadLetter: 'hubtel.service-app.dead-letter',
  /** A `query` request (ServiceQueryEvent): the first handler's ServiceQueryAnswer is the answer. */
  Query: 'hubtel.service-app.query',
  /** A verified payment that fits the cart on neither count (FulfillmentAttentionEvent): resolve it. */
  Attention: 'hubtel.service-app.attention',
} as const);

/** Event of the fulfillments of one ServiceCode (what `@OnFulfillment('711')` listens to). */
export function fulfillmentEventFor(serviceCode: string): string {
  return `${ServiceAppEvents.Fulfillment}:${serviceCode}`;
}

/** The payload classes' base: the fields given, those undefined left out (plain JSON once recorded). */
export class ServiceAppPayload<T> {
  constructor(fields: T) {
    Object.assign(this, dropUndefined(fields as object));
  }
}

/** Payload of the fulfillment events: the platform says this order is paid; deliver it. */
export class FulfillmentRequestedEvent extends ServiceAppPayload<FulfillmentRequestedEvent> {
  /** The platform's `OrderId`. The key of exactly-once: handlers run once per order. */
  declare readonly orderId: string;
  declare readonly sessionId: string;
  /** ServiceCode, flow, MSISDN and cart item: null when the cart is unknown (`requireCart: false`). */
  declare readonly serviceCode: string | null;
  declare readonly flow: string | null;
  /** Personal data: mask it before logging. */
  declare readonly mobile: string | null;
  /** Channel of the session (`mtn`, `Hubtel-Android`, ...), when the platform said. */
  declare readonly operator?: string;
  declare readonly item: CartItem | null;
  /** `item.ServiceData` ({} when none): what your flow put in the cart for this moment. */
  declare readonly serviceData: ServiceData;
  /** Everything the session collected (entries by field name, plus `ctx.set()` values). */
  declare readonly data: Record<string, unknown>;
  declare readonly extraData: Record<string, unknown>;
  /** The request's `OrderInfo` as received (null when absent). A claim: see `claims`. */
  declare readonly orderInfo: unknown;
  /** `OrderInfo` as typed fields: unsigned CLAIMS, never proof of payment (that is `payment`). */
  declare readonly claims?: FulfillmentOrderClaims;
  /** Set when the payment matched on neither count and the merchant chose to deliver anyway. */
  declare readonly attention?: FulfillmentAttention;
  declare readonly receivedAt: string;
  /** The payment as the status check confirmed it (absent when verification is off). */
  declare readonly payment?: FulfillmentPayment;
  /** The order's account: `default` or a named account (`@OnFulfillment(code, { account })`). */
  declare readonly account: string;
}

/** An order's payment, as the transaction status check reported it. */
export interface FulfillmentPayment {
  confirmedByStatusCheck: true;
  /** As the status check reports it (with a payer-borne charge, more than the cart). */
  amount: number;
  /** The verified figures and who bore the charge (absent when the status check gave no amount). */
  amounts?: PaymentAmounts;
  currencyCode?: string;
  transactionId?: string;
  externalTransactionId?: string;
  paymentMethod?: string;
}

/** Why a fulfillment request was refused (`CART_ALREADY_ORDERED`: no longer emitted). */
export type FulfillmentRejection =
  | 'UNKNOWN_SESSION'
  | 'CART_ALREADY_ORDERED'
  | 'ORDER_CONFLICT'
  | 'NOT_PAID'
  | 'AMOUNT_MISMATCH'
  | 'CURRENCY_MISMATCH'
  | 'NOT_CONFIRMED';

/** Payload of `ServiceAppEvents.Rejected`: an order that was not delivered, and why. */
export class FulfillmentRejectedEvent extends ServiceAppPayload<FulfillmentRejectedEvent> {
  declare readonly reason: FulfillmentRejection;
  /** Human-readable detail (phone numbers masked). */
  declare readonly message: string;
  declare readonly orderId: string;
  declare readonly sessionId: string;
  declare readonly serviceCode: string | null;
  /** The cart's total, and what the status check reported (when it answered). */
  declare readonly amountExpected?: number;
  declare readonly amountPaid?: number;
  declare readonly paymentStatus?: string;
  /** Status checks made. */
  declare readonly checks: number;
  declare readonly rejectedAt: string;
  declare readonly account: string;
}

/** Why an order needs attention, and how it was resolved. */
export interface FulfillmentAttention {
  reason: 'AMOUNT_MISMATCH' | 'CURRENCY_MISMATCH';
  message: string;
  at: string;
  amounts?: PaymentAmounts;
  /** The cart's total. */
  amountExpected?: number;
  /** ISO time by which the platform is told `failed` unless resolved. */
  decideBy: string;
  /** Set once resolved: `delivered` (handlers ran), `refunded` or `expired` (reported `failed`). */
  resolution?: { action: 'delivered' | 'refunded' | 'expired'; at: string };
}

/** Payload of `ServiceAppEvents.Attention`: resolve it before `attention.decideBy`. */
export class FulfillmentAttentionEvent extends ServiceAppPayload<FulfillmentAttentionEvent> {
  declare readonly orderId: string;
  declare readonly sessionId: string;
  declare readonly serviceCode: string | null;
  declare readonly attention: FulfillmentAttention;
  declare readonly payment: FulfillmentPayment;
  declare readonly claims?: FulfillmentOrderClaims;
  declare readonly account: string;
}

/** Payload of `ServiceAppEvents.CallbackSent`. */
export class FulfillmentCallbackSentEvent extends ServiceAppPayload<FulfillmentCallbackSentEvent> {
  declare readonly orderId: string;
  declare readonly sessionId: string;
  declare readonly serviceStatus: FulfillmentServiceStatus;
  declare readonly metaData: unknown;
  /** `handler` (your @OnFulfillment handler's outcome) or `app` (`FulfillmentService.complete()`). */
  declare readonly reportedBy: 'handler' | 'app';
  /** POSTs it took. */
  declare readonly attempts: number;
  declare readonly sentAt: string;
  declare readonly account: string;
}

/** Payload of `ServiceAppEvents.DeadLetter`. */
export type ServiceAppDeadLetterEvent = DeadLetterEvent<unknown>;

const OUTCOME = '__hubtelFulfillment';

/** What an @OnFulfillment handler may return besides plain metadata. */
export type FulfillmentOutcome =
  | { readonly [OUTCOME]: 'success'; readonly metaData: unknown }
  | { readonly [OUTCOME]: 'failed'; readonly metaData: unknown }
  | { readonly [OUTCOME]: 'deferred' };

/** Return from a handler to deliver later: report with `FulfillmentService.complete()` within the hour. */
export function deferFulfillment(): FulfillmentOutcome {
  return { [OUTCOME]: 'deferred' };
}

/** Return from a handler to report `failed` at once, without retries (out of stock, invalid target). */
export function failFulfillment(metaData: unknown = null): FulfillmentOutcome {
  return { [OUTCOME]: 'failed', metaData };
}

/** Return from a handler to report `success` with `MetaData` (same as returning the metadata itself). */
export function fulfilled(metaData: unknown = null): FulfillmentOutcome {
  return { [OUTCOME]: 'success', metaData };
}

/** @internal In listener order: the first failure wins, else any deferral, else the first metadata. */
export function combineOutcomes(
  results: Record<string, unknown> | undefined,
): { kind: 'deferred' } | { kind: 'report'; status: FulfillmentServiceStatus; metaData: unknown } {
  let deferred = false;
  let failedSeen = false;
  let success: { metaData: unknown } | undefined;
  // In dispatch order (older records' listener indexes list ascending too).
  for (const answer of Object.values(results ?? {})) {
    const mark =
      answer !== null && typeof answer === 'object' && OUTCOME in answer
        ? (answer as FulfillmentOutcome)
        : undefined;
    if (!mark) {
      if (!success && answer !== undefined && answer !== null) success = { metaData: answer };
      continue;
    }
    if (mark[OUTCOME] === 'failed' && !failedSeen) {
      // The first failure decides (one without metaData was not built by failFulfillment()).
      failedSeen = true;
      if ('metaData' in mark) return { kind: 'report', status: 'failed', metaData: mark.metaData ?? null };
    }
    if (mark[OUTCOME] === 'deferred') deferred = true;
    if (!success && 'metaData' in mark) success = { metaData: mark.metaData ?? null };
  }
  if (deferred) return { kind: 'deferred' };
  return { kind: 'report', status: 'success', metaData: success ? success.metaData : null };
}

/** Payload of `query` requests: what the platform asked (`@OnServiceQuery()`). */
export class ServiceQueryEvent extends ServiceAppPayload<ServiceQueryEvent> {
  declare readonly sessionId: string;
  declare readonly serviceCode: string;
  /** The user's MSISDN. Personal data: mask it before logging. */
  declare readonly mobile: string;
  declare readonly operator?: string;
  declare readonly channel: 'ussd' | 'app';
  /** The request's `Message`: what is asked. */
  declare readonly message: string;
  /** The request's `ClientState` ('' when absent). */
  declare readonly clientState: string;
  /** The account whose service was asked: `default`, or a named account's name. */
  declare readonly account: string;
}

/** An @OnServiceQuery() handler's answer (a `display` Response): a text, or one with `Label` and `Data`. */
export type ServiceQueryAnswer =
  | string
  | {
      message: string;
      label?: string;
      data?: ReadonlyArray<{ Display: string; Value: string | number; Amount?: number }>;
    };
