import type { SandboxApi } from './sandbox.route-types.js';
import type { SandboxChargeBearer } from './sandbox.option-types.js';
import type { CartItem, SelectOption as ServiceFlowOption } from 'nestjs-hubtel/service-app';

// Records are live objects the sandbox updates in place: read them, never write them.

export type SandboxSmsStatus =
  'Submitted' | 'Delivered' | 'Undelivered' | 'Failed' | 'Rejected' | 'Expired' | (string & {});

export interface SandboxSmsMessage {
  messageId: string;
  /** The account whose SMS keys sent it. */
  account: string;
  /** The batch it was sent in; null for a single send. */
  batchId: string | null;
  kind: 'batch' | 'single';
  from: string;
  /** The recipient exactly as the caller wrote it. */
  to: string;
  /** The recipient normalised (`233241234567`), for look-ups. */
  msisdn: string;
  content: string;
  rate: number;
  networkId: string;
  clientReference: string | null;
  status: SandboxSmsStatus;
  /** ISO time the sandbox accepted it. */
  time: string;
  /** ISO time of the last status change (`Delivered`, ...). */
  updateTime: string;
  /** Epoch ms at which a `Submitted` message turns `Delivered`. */
  deliverAt: number;
}

/** A batch send: what its messages share, and their ids. */
export interface SandboxSmsBatch extends Pick<SandboxSmsMessage, 'account' | 'from' | 'content' | 'time'> {
  batchId: string;
  messageIds: string[];
}

export type SandboxInvoiceState = 'pending' | 'paid' | 'failed' | 'cancelled';

export interface SandboxPaymentAttempt {
  outcome: 'paid' | 'failed';
  at: string;
  phone: string;
  channel: string;
  responseCode: string;
  description: string;
}

export interface SandboxInvoice {
  checkoutId: string;
  /** The account whose API keys created it (its status check answers only for that account). */
  account: string;
  clientReference: string;
  totalAmount: number;
  description: string;
  callbackUrl: string;
  returnUrl: string;
  cancellationUrl: string;
  payeeName: string | null;
  payeeMobileNumber: string | null;
  payeeEmail: string | null;
  merchantAccountNumber: string | null;
  checkoutUrl: string;
  checkoutDirectUrl: string;
  /** `pending` until paid or cancelled; `failed` after a failed attempt (the payer may try again). */
  state: SandboxInvoiceState;
  createdAt: string;
  updatedAt: string;
  /** Set on the first payment attempt. */
  salesInvoiceId: string | null;
  /** Hubtel transaction id (status check `transactionId`), set when paid. */
  transactionId: string | null;
  /** Network transaction id (status check `externalTransactionId`), set when paid. */
  externalTransactionId: string | null;
  customerPhoneNumber: string | null;
  channel: string | null;
  paidAt: string | null;
  /** The platform's fee, once paid. */
  charges: number;
  /** What the payer paid (status check `amount`; the callback's `Amount`), once paid; else 0. */
  amountPaid: number;
  /** What reaches the merchant (status check `amountAfterCharges`), once paid; else 0. */
  amountAfterCharges: number;
  /** Who bore the charge, once paid. */
  chargeBearer: SandboxChargeBearer | null;
  /** Currency of the payment (status check `currencyCode`). */
  currency: string;
  refunded: boolean;
  attempts: SandboxPaymentAttempt[];
  deliveryIds: string[];
  /** The request body as received (unknown fields included). */
  request: Record<string, unknown>;
}

export type SandboxDeliveryKind = 'checkout-callback' | 'fulfillment-request';
export type SandboxDeliveryState = 'scheduled' | 'sending' | 'delivered' | 'failed' | 'dropped';

/** One outbound POST the sandbox made (or was told not to make) on behalf of the platform. */
export interface SandboxDelivery {
  id: string;
  /** The account of the invoice or session it is for. */
  account: string;
  kind: SandboxDeliveryKind;
  url: string;
  headers: Record<string, string>;
  /** The JSON body sent (after any fault changed it). */
  body: unknown;
  /** Invoice / order it belongs to. */
  checkoutId: string | null;
  clientReference: string | null;
  sessionId: string | null;
  orderId: string | null;
  /** `scheduled` (delayed), `sending`, `delivered` (2xx), `failed` (non-2xx or no answer), `dropped` (a fault kept it). */
  state: SandboxDeliveryState;
  /** Names of the faults applied (`drop`, `duplicate`, `amount`, `checkoutId`, `forge`, `delay`, `body`). */
  faults: string[];
  /** 1-based copy number when a fault duplicated it. */
  copy: number;
  copies: number;
  /** Set on a re-send: the delivery it repeats. */
  redeliveryOf: string | null;
  statusCode: number | null;
  /** The first 2 KB of the answer. */
  responseBody: string | null;
  durationMs: number | null;
  error: string | null;
  createdAt: string;
  sentAt: string | null;
  completedAt: string | null;
}

export type SandboxSessionState =
  | 'new'
  | 'active'
  | 'cart'
  | 'paid'
  | 'payment-failed'
  | 'fulfilled'
  | 'fulfillment-failed'
  | 'released'
  | 'ended'
  | 'error';

export interface SandboxSessionExchange {
  at: string;
  url: string;
  request: ServiceFlowRequest;
  statusCode: number | null;
  response: unknown;
  durationMs: number;
  error: string | null;
  /** Where the answer breaks the contract (strict drivers throw on these). */
  issues: string[];
  /** On USSD: the screen the phone showed (`Message`), measured in GSM-7 septets or UTF-16 units. */
  screen?: SandboxUssdScreen;
  /** What a user of this channel would trip on without the answer breaking the contract (shown, never thrown). */
  warnings?: string[];
}

/** One USSD screen as the sandbox's phone measured it. */
export interface SandboxUssdScreen {
  length: number;
  limit: number;
  gsm7: boolean;
  fits: boolean;
  /** The numbered lines of the menu in `Message` (`1. 1GB`): what the user can type. */
  menu: UssdMenuLine[];
}

/** One `N. Display` line of a USSD menu. */
export interface UssdMenuLine {
  key: string;
  label: string;
}

export interface SandboxServiceOrder {
  orderId: string;
  /** What the payer paid (status check `amount`, `OrderInfo.Payment.AmountPaid`). */
  amount: number;
  charges: number;
  /** What reaches the merchant (`amountAfterCharges`, `OrderInfo.Payment.AmountAfterCharges`). */
  amountAfterCharges: number;
  chargeBearer: SandboxChargeBearer;
  /** Status check `currencyCode`, `OrderInfo.Currency`. */
  currency: string;
  outcome: 'paid' | 'failed';
  paidAt: string;
  transactionId: string;
  externalTransactionId: string;
  isFulfilled: boolean;
  /** `ServiceStatus` of the fulfillment callback, once received. */
  serviceStatus: string | null;
  /** Whether the status check confirms it: false after `pay({ recordPayment: false })`. */
  recorded: boolean;
}

export interface SandboxSession {
  sessionId: string;
  /** The account whose programmable service it is (the driver's `account` option). */
  account: string;
  serviceAppUrl: string;
  serviceCode: string;
  mobile: string;
  operator: string;
  /** How the driver played the phone (`ussd` shows `Message` only); null when it did not drive it. */
  channel: 'ussd' | 'app' | null;
  state: SandboxSessionState;
  exchanges: SandboxSessionExchange[];
  cart: CartItem | null;
  order: SandboxServiceOrder | null;
  createdAt: string;
  updatedAt: string;
}

export interface SandboxFulfillmentCallback {
  id: string;
  /** The account of the session it names; null for a session the sandbox does not know. */
  account: string | null;
  sessionId: string;
  orderId: string;
  serviceStatus: string;
  metaData: unknown;
  /** The body as received. */
  body: Record<string, unknown>;
  /** True when it names an order the sandbox's driver paid in that session. */
  matched: boolean;
  receivedAt: string;
}

/** One inbound request (bodies and credentials are not kept). */
export interface SandboxRequestLog {
  id: number;
  at: string;
  method: string;
  path: string;
  api: SandboxApi;
  statusCode: number | null;
  durationMs: number | null;
  /** Id of the inbound fault applied, if any. */
  faultId: string | null;
}

export interface SandboxStats {
  requests: number;
  messages: number;
  batches: number;
  invoices: number;
  payments: number;
  deliveries: number;
  sessions: number;
  fulfillmentCallbacks: number;
}

/** A record's kind is its event, emitted when it is created and on every change. */
export interface SandboxEventMap extends RecordEvents {
  request: [SandboxRequestLog];
  reset: [];
}
type RecordEvents = { [K in SandboxRecordKind]: [SandboxRecordMap[K]] };

export interface SandboxRecordMap {
  message: SandboxSmsMessage;
  invoice: SandboxInvoice;
  delivery: SandboxDelivery;
  session: SandboxSession;
  'fulfillment-callback': SandboxFulfillmentCallback;
}
export type SandboxRecordKind = keyof SandboxRecordMap;

// Wire shapes (the contract's), as the sandbox sends them; a select option and a cart item as the
// service app declares them (types only: nothing of the service app loads)
export type { CartItem, ServiceFlowOption };

export interface ServiceFlowRequest {
  Sequence?: string;
  Type: string;
  Message: string;
  ServiceCode: string;
  Operator: string;
  ClientState: string;
  Mobile: string;
  SessionId: string;
  [extra: string]: unknown;
}

export interface ServiceFlowResponse {
  SessionId: string;
  Type: string;
  Message: string;
  Mask: unknown;
  MaskNextRoute: unknown;
  Item: CartItem | null;
  ServiceCode: string | null;
  Label: string | null;
  DataType: string;
  FieldType: string;
  FieldName: string | null;
  ClientState: string | null;
  Data: ServiceFlowOption[] | null;
  [extra: string]: unknown;
}

export interface FulfillmentRequestBody {
  OrderId: string;
  SessionId: string;
  ExtraData: Record<string, unknown>;
  OrderInfo: unknown;
}

export interface CheckoutCallbackBody {
  ResponseCode: string;
  Status: string;
  Data: {
    CheckoutId: string;
    SalesInvoiceId: string;
    ClientReference: string;
    Status: string;
    Amount: number;
    CustomerPhoneNumber: string;
    PaymentDetails: { MobileMoneyNumber: string; PaymentType: string; Channel: string };
    Description: string;
  };
}
