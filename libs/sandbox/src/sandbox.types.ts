import type { IncomingMessage, ServerResponse } from 'node:http';

// Options

export interface SandboxCredentialPair {
  clientId: string;
  clientSecret: string;
}

/** One named account of a sandbox serving several (`accounts` option). */
export interface SandboxAccountOptions {
  /** Lower-case letters, digits, `-` and `_`, starting with a letter (`north`); not `default`. */
  name: string;
  /**
   * Its key pairs. Default `sandbox-<name>-api` / `sandbox-<name>-api-secret` and
   * `sandbox-<name>-sms` / `sandbox-<name>-sms-secret`; `callback` as on the default account.
   */
  credentials?: {
    sms?: SandboxCredentialPair;
    api?: SandboxCredentialPair;
    callback?: SandboxCredentialPair;
  };
  /** Its POS Sales ID (merchant account number). Default `2000000` + its 1-based place in `accounts`. */
  posSalesId?: string;
  /** Sender ids its SMS keys may send from. Default none: any sender that no other account declares. */
  senderIds?: string[];
  /** Name on its payment page. Default the top-level `checkout.merchantName`. */
  merchantName?: string;
  /** Who bears the platform's charge on its payments. Default the top-level `checkout.chargeBearer`. */
  chargeBearer?: SandboxChargeBearer;
}

/**
 * Who bears the platform's charge on a payment (both happen, per merchant account):
 * - `merchant`: the payer pays the price; the charge is deducted (status check `amount` = the
 *   price, `amountAfterCharges` = price − charges);
 * - `payer`: the charge is added to what the payer pays (`amount` = price + charges,
 *   `amountAfterCharges` = the price), as in Hubtel's 2026 fulfillment-request sample.
 */
export type SandboxChargeBearer = 'merchant' | 'payer';

/** An account the sandbox serves, as `sandbox.accounts()` reports it. */
export interface SandboxAccount {
  /** `default` for the top-level options' account. */
  name: string;
  credentials: { sms: SandboxCredentialPair; api: SandboxCredentialPair; callback?: SandboxCredentialPair };
  posSalesId: string;
  /** Empty: any sender that no other account declares. */
  senderIds: string[];
  merchantName: string;
  /** Who bears the charge on its payments (`sandbox.setChargeBearer()` changes it). */
  chargeBearer: SandboxChargeBearer;
}

/** Picks the records of one account (`sandbox.messages({ account: 'north' })`). */
export interface SandboxAccountFilter {
  /** Account name (`default` for the top-level options' account). */
  account?: string;
}

/** Anything with Nest's `Logger` methods (a Nest `Logger`, `console`). */
export interface SandboxLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug?(message: string): void;
}

export interface SandboxSmsOptions {
  /** Most recipients accepted in one batch (400, sub-code 7, beyond). Default 10,000. */
  maxRecipients?: number;
  /** Longest `Content` accepted (400, sub-code 3, beyond). Default 1530. */
  maxContentLength?: number;
  /** Longest `From` accepted (400, sub-code 2, beyond). Default 11. */
  maxSenderLength?: number;
  /** Value of the `rate` fields. Default 0.0309. */
  rate?: number;
  /** Milliseconds before a message reads `Delivered` (until then `Submitted`). Default 0. */
  deliveryDelayMs?: number;
  /**
   * Sender ids (`From`) the default account's SMS keys may send from; any other is refused (400,
   * sub-code 2). Default none: any sender that no other account declares.
   */
  senderIds?: string[];
}

export interface SandboxCheckoutOptions {
  /** Name shown on the hosted payment page. Default `Sandbox Merchant`. */
  merchantName?: string;
  /** Fee rate used for `charges` in the status check. Default 0.01. */
  chargeRate?: number;
  /** Who bears the charge (see SandboxChargeBearer), for every account that does not say. Default `merchant`. */
  chargeBearer?: SandboxChargeBearer;
  /** Smallest `totalAmount` accepted; below it `4070` (fees not set / amount below minimum). Default none. */
  minAmount?: number;
  /** Fail payments (2001) of invoices whose description contains `& * ! % @`, like the platform. Default true. */
  rejectSpecialCharacters?: boolean;
  /** Phone pre-filled on the payment page when the invoice names none. */
  defaultPhone?: string;
}

export interface HubtelSandboxOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  /**
   * Origin the sandbox tells others to use (`checkoutUrl`, base URLs), when it differs from the
   * bound address (a container, a tunnel). Default `http://<host>:<port>`.
   */
  publicUrl?: string;
  /**
   * Host names (the `Host` header) the admin API (`/_sandbox`) and the dashboard answer, besides
   * loopback ones (`localhost`, `127.0.0.1`, `::1`), the bound `host` and `publicUrl`'s host.
   * Any other is refused 403, so a web page cannot reach them by re-pointing its own DNS name at
   * the sandbox (DNS rebinding). `['*']` allows any. Default none.
   */
  allowedHosts?: string[];
  /**
   * Credentials the sandbox accepts (the default account's). Default
   * {@link SANDBOX_DEFAULT_CREDENTIALS}. `callback`: a Basic-auth pair the fulfillment callbacks of
   * this account's sessions must carry (the contract shows none, so by default none is asked).
   */
  credentials?: {
    sms?: SandboxCredentialPair;
    api?: SandboxCredentialPair;
    callback?: SandboxCredentialPair;
  };
  /** POS Sales ID (merchant account number) of the sandbox merchant. Default `2000000`. */
  posSalesId?: string;
  /**
   * Further Hubtel accounts served at once, each with its own keys, POS Sales ID and sender ids.
   * The options above are the default account (named `default`). One account's keys on another
   * account's POS Sales ID are refused as the platform does (`4101`, `4105` for programmable
   * services), and every record names its account.
   */
  accounts?: SandboxAccountOptions[];
  /** Records kept per kind before the oldest are dropped (counters stay exact). Default 10,000. */
  recordLimit?: number;
  /** Largest request body read, in bytes (413 beyond). Default 1 MiB. */
  maxBodyBytes?: number;
  /** Time-out of the sandbox's own outbound calls (checkout callbacks, fulfillment requests). Default 10 s. */
  outboundTimeoutMs?: number;
  sms?: SandboxSmsOptions;
  checkout?: SandboxCheckoutOptions;
  /**
   * Serve the dashboard at `/_dashboard` (`GET /` redirects there). Default true; false leaves
   * the page out and `GET /` lists the base URLs instead.
   */
  dashboard?: boolean;
  /** Where the sandbox reports problems (a callback that failed, a listener that threw). Default silent. */
  logger?: SandboxLogger;
}

/** The base URLs to plug into the modules' options: all the sandbox's origin. */
export interface SandboxBaseUrls {
  /** `{sms_url}`: SmsModule's base URL. */
  sms: string;
  /** `{checkout_url}`: CheckoutModule's base URL for `/items/initiate`. */
  checkout: string;
  /** Transaction status check base URL (`/transactions/{posSalesId}/status`). */
  status: string;
  /** `{callback_url}`: programmable-services fulfillment callbacks go to `<this>/callback`. */
  fulfillmentCallback: string;
}

/*
 * Records (what the sandbox saw and did). Records are live objects the sandbox updates in place
 * (an invoice gets paid, a delivery completes): read them, never write them.
 */

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

export interface SandboxSmsBatch {
  batchId: string;
  account: string;
  from: string;
  content: string;
  messageIds: string[];
  time: string;
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
  /** Ids of the callback deliveries made for this invoice. */
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
  /**
   * On the USSD channel: the screen the phone showed (the answer's `Message`), measured against
   * the screen size (GSM-7 septets, or UTF-16 units once any character is outside GSM-7).
   */
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
  /**
   * Whether the platform has recorded the payment, so its status check (clientReference = the
   * SessionId) confirms it. False after `pay({ recordPayment: false })` until `recordPayment()`:
   * a payment the platform records late.
   */
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
  /**
   * `ussd` (the phone shows `Message` only; the user types numbers; the cart comes as `Release`
   * with an `Item`) or `app` (the Hubtel app renders `Data`). Null for a session the sandbox did not drive.
   */
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

export interface SandboxEventMap {
  message: [SandboxSmsMessage];
  invoice: [SandboxInvoice];
  delivery: [SandboxDelivery];
  session: [SandboxSession];
  'fulfillment-callback': [SandboxFulfillmentCallback];
  request: [SandboxRequestLog];
  reset: [];
}

export interface SandboxRecordMap {
  message: SandboxSmsMessage;
  invoice: SandboxInvoice;
  delivery: SandboxDelivery;
  session: SandboxSession;
  'fulfillment-callback': SandboxFulfillmentCallback;
}
export type SandboxRecordKind = keyof SandboxRecordMap;

// Wire shapes (the contract's), as the sandbox sends them

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

export interface ServiceFlowOption {
  Display: string;
  Value: string;
  Amount: number;
}

export interface CartItem {
  ItemName: string;
  Qty: number;
  Price: number;
  ServiceData?: Record<string, unknown>;
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

// HTTP plumbing shared with extensions (the dashboard adds its routes through these)

/** Which face of the platform a route belongs to: decides the error body shape and fault matching. */
export type SandboxApi = 'sms' | 'checkout' | 'status' | 'callback' | 'pay-page' | 'admin';

/** What a route handler answers; the sandbox writes it (or a fault replaces it). */
export interface SandboxReply {
  status: number;
  headers?: Record<string, string>;
  /** Sent as `application/json`. */
  json?: unknown;
  /** Sent as `text/html; charset=utf-8`. */
  html?: string;
  /** Sent as `text/plain; charset=utf-8`. */
  text?: string;
}

export interface SandboxRequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** Named `:params` of the route pattern, URL-decoded. */
  readonly params: Record<string, string>;
  readonly api: SandboxApi;
  /** Raw body (read once, cached; 413 beyond `maxBodyBytes`). */
  body(): Promise<Buffer>;
  /** Body parsed as JSON; answers 415/400 in the API's error shape when it is not. */
  json(): Promise<unknown>;
  /** Body parsed as a JSON object; anything else (an array, a string, null) is a 400 in the API's shape. */
  jsonObject(): Promise<Record<string, unknown>>;
  /** Body parsed as an HTML form. */
  form(): Promise<URLSearchParams>;
}

/**
 * A route handler. Return a reply, or nothing when the handler wrote `ctx.res` itself (a
 * server-sent event stream, say).
 */
export type SandboxRouteHandler = (
  ctx: SandboxRequestContext,
) => Promise<SandboxReply | void> | SandboxReply | void;
