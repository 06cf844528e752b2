import { HubtelValidationError, tryNormalizeMsisdn, type ValidationIssue } from '#light/core';
import { ghanaNetwork, hexId, paymentDescription } from '#light/sandbox';
import type { CheckoutCallbackBody, FulfillmentRequestBody, ServiceFlowRequest } from 'nestjs-hubtel/sandbox';
import type { FulfillmentCallback } from 'nestjs-hubtel/service-app';
import { TESTING_DEFAULTS } from './testing.constants.js';

// The platform's messages field for field as the wire contract writes them (hand-written ones drift).

/** Anything that names an invoice: the module's `CheckoutInvoice`, `createInvoice`'s result, a sandbox invoice. */
export interface CheckoutInvoiceLike {
  clientReference: string;
  checkoutId?: string | null;
  /** The sandbox's invoice record and the creation request call it `totalAmount`. */
  totalAmount?: number;
  /** The CheckoutModule's invoice record calls it `amount`. */
  amount?: number;
  /** Used as the payer's number when no `phone` is given (sandbox invoices). */
  customerPhoneNumber?: string | null;
  payeeMobileNumber?: string | null;
}

export type CheckoutCallbackOutcome = 'paid' | 'failed';

export interface BuildCheckoutCallbackInput {
  /** The invoice the callback is about; the explicit fields below win over it. */
  invoice?: CheckoutInvoiceLike;
  /** `Data.ClientReference`. Required (here or through `invoice`). */
  clientReference?: string;
  /** `Data.Amount`. Required (here or through `invoice`). */
  amount?: number;
  /** `Data.CheckoutId`. Default: the invoice's, else a random one (a forgery: verification rejects it). */
  checkoutId?: string;
  /** `paid` (default): `0000` / `Success`. `failed`: `2001` / `Failed`, as the platform reports a refused payment. */
  outcome?: CheckoutCallbackOutcome;
  /** The payer's mobile-money number, any accepted form. Default `233241234567`. */
  phone?: string;
  /** `PaymentDetails.Channel`. Default: the network of `phone` (`mtn-gh`, `vodafone-gh`, `tigo-gh`). */
  channel?: string;
  /** `Data.SalesInvoiceId`. Default: random. */
  salesInvoiceId?: string;
  /** `Data.Description`. Default: the platform's wording for the outcome. */
  description?: string;
  /** Override the envelope's `ResponseCode` (odd cases: a contradiction, an unknown code). */
  responseCode?: string;
  /** Override both `Status` fields (`Pending`, `Refunded`, ...). */
  status?: string;
}

export interface BuildFulfillmentRequestInput {
  /** `SessionId`: the session that ended in AddToCart. Required. */
  sessionId: string;
  /** `OrderId`. Default: random. */
  orderId?: string;
  /** `ExtraData`. Default `{}` (as in the contract's sample). */
  extraData?: Record<string, unknown>;
  /** `OrderInfo`. Default null (as in the contract's sample). */
  orderInfo?: Record<string, unknown> | null;
}

/** The service app's `FulfillmentCallback` as sent on the wire, any `ServiceStatus` allowed. */
export type FulfillmentCallbackBody = Omit<FulfillmentCallback, 'ServiceStatus'> & { ServiceStatus: string };

export interface BuildFulfillmentCallbackInput {
  sessionId: string;
  orderId: string;
  /** Default `success`. */
  serviceStatus?: string;
  /** Default null. */
  metaData?: unknown;
}

export interface BuildServiceFlowRequestInput {
  /** `SessionId`. Default: random (a new session). */
  sessionId?: string;
  /** `initiation` (default when no `message`), `Response` (default with a `message`), `Release`. */
  type?: string;
  /** The user's input or the chosen option's `Value`. Default `""`. */
  message?: string;
  serviceCode?: string;
  /** MSISDN of the user. Default `233241234567`. */
  mobile?: string;
  operator?: string;
  /** `Sequence`; sent on initiation only (the contract's steps 2 and 3 carry none). Default `1`. */
  sequence?: string;
  /** Extra fields of newer platform versions (`Platform`, `Timeout`). */
  extraFields?: Record<string, unknown>;
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function fail(what: string, issues: ValidationIssue[]): never {
  const detail = issues.map((i) => `${i.field} ${i.message}`).join('; ');
  throw new HubtelValidationError(`${what}: ${detail}`, issues);
}

/**
 * A checkout web callback body exactly as the platform posts it to the invoice's `callbackUrl`.
 *
 * ```ts
 * buildCheckoutCallback({ invoice: await checkout.getInvoice(ref) });          // valid, paid
 * buildCheckoutCallback({ invoice, outcome: 'failed' });                       // refused payment
 * buildCheckoutCallback({ invoice, amount: 1 });                               // forged: wrong amount
 * buildCheckoutCallback({ clientReference: 'nobody', amount: 10 });            // forged: unknown reference
 * ```
 * @throws HubtelValidationError when the reference or the amount is missing or malformed.
 */
export function buildCheckoutCallback(input: BuildCheckoutCallbackInput): CheckoutCallbackBody {
  if (input === null || typeof input !== 'object')
    fail('buildCheckoutCallback', [{ field: 'input', message: 'must be an object' }]);
  const invoice = input.invoice;
  const issues: ValidationIssue[] = [];
  const clientReference = input.clientReference ?? invoice?.clientReference;
  if (!nonEmptyString(clientReference))
    issues.push({
      field: 'clientReference',
      message: 'is required (or give an invoice)',
      value: clientReference,
    });
  const amount = input.amount ?? invoice?.amount ?? invoice?.totalAmount;
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0)
    issues.push({
      field: 'amount',
      message: 'is required: a finite number >= 0 (or give an invoice with its amount)',
      value: amount,
    });
  const outcome = input.outcome ?? 'paid';
  if (outcome !== 'paid' && outcome !== 'failed')
    issues.push({ field: 'outcome', message: 'must be "paid" or "failed"', value: outcome });
  const phoneInput =
    input.phone ?? invoice?.customerPhoneNumber ?? invoice?.payeeMobileNumber ?? TESTING_DEFAULTS.phone;
  const phone = tryNormalizeMsisdn(phoneInput);
  if (!phone.ok) issues.push({ field: 'phone', message: phone.reason, value: phoneInput });
  if (input.checkoutId !== undefined && !nonEmptyString(input.checkoutId))
    issues.push({ field: 'checkoutId', message: 'must be a non-empty string' });
  if (issues.length > 0) fail('buildCheckoutCallback', issues);

  const msisdn = (phone as { msisdn: string }).msisdn;
  const channel = input.channel ?? ghanaNetwork(msisdn).channel;
  const paid = outcome === 'paid';
  const status = input.status ?? (paid ? 'Success' : 'Failed');
  return {
    ResponseCode: input.responseCode ?? (paid ? '0000' : '2001'),
    Status: status,
    Data: {
      CheckoutId: input.checkoutId ?? (nonEmptyString(invoice?.checkoutId) ? invoice.checkoutId : hexId()),
      SalesInvoiceId: input.salesInvoiceId ?? hexId(),
      ClientReference: clientReference as string,
      Status: status,
      Amount: amount as number,
      CustomerPhoneNumber: msisdn,
      PaymentDetails: { MobileMoneyNumber: msisdn, PaymentType: 'mobilemoney', Channel: channel },
      Description: input.description ?? paymentDescription(channel, outcome),
    },
  };
}

/** A fulfillment request as the platform posts it. @throws HubtelValidationError without a `sessionId`. */
export function buildFulfillmentRequest(input: BuildFulfillmentRequestInput): FulfillmentRequestBody {
  const issues: ValidationIssue[] = [];
  if (input === null || typeof input !== 'object')
    fail('buildFulfillmentRequest', [{ field: 'input', message: 'must be an object' }]);
  if (!nonEmptyString(input.sessionId))
    issues.push({ field: 'sessionId', message: 'is required', value: input.sessionId });
  if (input.orderId !== undefined && !nonEmptyString(input.orderId))
    issues.push({ field: 'orderId', message: 'must be a non-empty string' });
  const extra = input.extraData;
  if (extra !== undefined && (extra === null || typeof extra !== 'object' || Array.isArray(extra)))
    issues.push({ field: 'extraData', message: 'must be an object' });
  if (issues.length > 0) fail('buildFulfillmentRequest', issues);
  return {
    OrderId: input.orderId ?? hexId(),
    SessionId: input.sessionId,
    ExtraData: input.extraData ?? {},
    OrderInfo: input.orderInfo ?? null,
  };
}

/** The service application's fulfillment callback, as the platform's `/callback` receives it. */
export function buildFulfillmentCallback(input: BuildFulfillmentCallbackInput): FulfillmentCallbackBody {
  const issues: ValidationIssue[] = [];
  if (input === null || typeof input !== 'object')
    fail('buildFulfillmentCallback', [{ field: 'input', message: 'must be an object' }]);
  if (!nonEmptyString(input.sessionId)) issues.push({ field: 'sessionId', message: 'is required' });
  if (!nonEmptyString(input.orderId)) issues.push({ field: 'orderId', message: 'is required' });
  if (input.serviceStatus !== undefined && !nonEmptyString(input.serviceStatus))
    issues.push({ field: 'serviceStatus', message: 'must be a non-empty string' });
  if (issues.length > 0) fail('buildFulfillmentCallback', issues);
  return {
    SessionId: input.sessionId,
    OrderId: input.orderId,
    ServiceStatus: input.serviceStatus ?? 'success',
    MetaData: input.metaData ?? null,
  };
}

/** One service-flow request as the platform posts it (`Sequence` and an empty `Message` on initiation). */
export function buildServiceFlowRequest(input: BuildServiceFlowRequestInput = {}): ServiceFlowRequest {
  const type = input.type ?? (input.message === undefined ? 'initiation' : 'Response');
  const issues: ValidationIssue[] = [];
  const mobileInput = input.mobile ?? TESTING_DEFAULTS.phone;
  const mobile = tryNormalizeMsisdn(mobileInput);
  if (!mobile.ok) issues.push({ field: 'mobile', message: mobile.reason, value: mobileInput });
  if (input.message !== undefined && typeof input.message !== 'string')
    issues.push({ field: 'message', message: 'must be a string' });
  if (input.sessionId !== undefined && !nonEmptyString(input.sessionId))
    issues.push({ field: 'sessionId', message: 'must be a non-empty string' });
  if (issues.length > 0) fail('buildServiceFlowRequest', issues);
  const initiation = type.toLowerCase() === 'initiation';
  return {
    ...(initiation ? { Sequence: input.sequence ?? '1' } : {}),
    Type: type,
    Message: initiation ? '' : (input.message ?? ''),
    ServiceCode: input.serviceCode ?? TESTING_DEFAULTS.serviceCode,
    Operator: input.operator ?? TESTING_DEFAULTS.operator,
    ClientState: '',
    Mobile: (mobile as { msisdn: string }).msisdn,
    SessionId: input.sessionId ?? hexId(),
    ...input.extraFields,
  };
}
