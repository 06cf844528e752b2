import type { ServiceAppChannel, UssdScreenLimits } from '#internal';
import type { CallbackFaultSpec } from './sandbox.faults.js';
import type { SandboxChargeBearer } from './sandbox.option-types.js';
import type { SandboxDelivery, SandboxServiceOrder } from './sandbox.types.js';

/* What the service-app driver (service-app.driver.ts) takes and gives back. */

export interface ServiceAppDriverOptions {
  /**
   * The account whose programmable service this is (`accounts` option): its status check and its
   * callback credentials answer for the session. Default `default`.
   */
  account?: string;
  /** `ServiceCode` sent on every call. Default `sandbox-service`. */
  serviceCode?: string;
  /** `Mobile`: the user's MSISDN. Default `233241234567`. */
  mobile?: string;
  /** `Operator`: the user's channel (`mtn`, `vodafone`, `Hubtel-Android`, ...). Default `mtn`. */
  operator?: string;
  /**
   * `ussd` plays a USSD phone: it shows `Message` only (measured against the screen size: a screen
   * that does not fit is a contract issue), `choose()` types the number of the option's menu line,
   * and a `Release` carrying an `Item` is the cart, paid like an `AddToCart`. `app` plays the
   * Hubtel app (`Data` rendered as a list). Default: by the platform's rule, `ussd` for a telco
   * operator (`mtn`, `vodafone-gh`, ...) or `extraFields.Platform` `USSD`, `app` otherwise.
   * `ussd` with an operator the rule does not call USSD sends `Platform: 'USSD'` on every call,
   * so the service sees the channel played; `app` with a telco operator only changes how the
   * driver plays (the service still sees USSD by the rule).
   */
  channel?: ServiceAppChannel;
  /** USSD screen sizes: `screenSize` (GSM-7, default 182) and `unicodeScreenSize` (default 70). */
  ussd?: Partial<UssdScreenLimits>;
  /** `SessionId`. Default: a fresh random one. */
  sessionId?: string;
  /** Path of the Service Interaction URL, after the service app's URL. Default `/api/service-flow`. */
  serviceFlowPath?: string;
  /** Path of the Service Fulfillment URL. Default `/api/fulfillment`. */
  fulfillmentPath?: string;
  /** Extra headers on every call (a path secret goes in the URL instead). */
  headers?: Record<string, string>;
  /** Extra request fields (newer platform fields such as `Platform`, `Timeout`), merged into every service-flow call. */
  extraFields?: Record<string, unknown>;
  /** How long to wait for each answer. Default 5 s (the platform's USSD limit). */
  timeoutMs?: number;
  /**
   * Check each answer against the contract (echoed SessionId, every field present, `Data` and
   * `Item` per `DataType`/`Type`) and throw a HubtelValidationError listing what is wrong.
   * Default true; with false the issues are only recorded on the exchange.
   */
  strict?: boolean;
}

export interface ServicePayOptions {
  /** `paid` (default) sends the fulfillment request; `failed` records a failed payment and sends nothing. */
  outcome?: 'paid' | 'failed';
  /**
   * `OrderInfo` of the fulfillment request: null by default (as in the contract's sample);
   * `true` builds one in the platform's 2026 shape (`CustomerMobileNumber`, ..., `Subtotal`,
   * `Items`, `Payment` with `AmountPaid` and `AmountAfterCharges`); an object is sent as given.
   */
  orderInfo?: boolean | Record<string, unknown>;
  /** `ExtraData` of the fulfillment request. Default `{}`. */
  extraData?: Record<string, unknown>;
  /** Order id to use. Default: a fresh random one. */
  orderId?: string;
  /** A fault for this fulfillment request only (instead of `sandbox.faults`). */
  fault?: CallbackFaultSpec;
  /**
   * The price the payer paid for, before charges (with a merchant-borne charge, the status
   * check's `amount`). Default: the cart's total (`Qty × Price`). Another amount plays a platform
   * (or an attacker) that charged the wrong sum.
   */
  amount?: number;
  /** Who bears the charge of this payment. Default the account's `chargeBearer`. */
  chargeBearer?: SandboxChargeBearer;
  /** Currency the platform reports (status check `currencyCode`, `OrderInfo.Currency`). Default `GHS`. */
  currency?: string;
  /**
   * `false`: the fulfillment request is sent, but the status check does not know the payment
   * until `recordPayment()` is called (the platform recording it late). Default true.
   */
  recordPayment?: boolean;
}

/** A fulfillment request nobody paid for: what a forger sends to the Service Fulfillment URL. */
export interface ForgedFulfillmentOptions {
  /** Order id to claim. Default: a fresh random one. */
  orderId?: string;
  /** `OrderInfo` to claim (a forger may claim `{Status: 'Paid', ...}`). Default null. */
  orderInfo?: Record<string, unknown> | null;
  extraData?: Record<string, unknown>;
}

export interface ServicePayResult {
  order: SandboxServiceOrder;
  /** Deliveries of the fulfillment request (empty when the payment failed). */
  deliveries: SandboxDelivery[];
}
