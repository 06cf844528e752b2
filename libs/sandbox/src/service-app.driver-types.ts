import type { ServiceAppChannel, UssdScreenLimits } from '#internal';
import type { CallbackFaultSpec } from './sandbox.faults.js';
import type { SandboxPaymentOutcomeDto } from './admin.dto.js';
import type { SandboxDelivery, SandboxServiceOrder } from './sandbox.types.js';

export interface ServiceAppDriverOptions {
  /** The account whose programmable service this is. Default `default`. */
  account?: string;
  /** `ServiceCode` sent on every call. Default `sandbox-service`. */
  serviceCode?: string;
  /** `Mobile`: the user's MSISDN. Default `233241234567`. */
  mobile?: string;
  /** `Operator`: the user's channel (`mtn`, `vodafone`, `Hubtel-Android`, ...). Default `mtn`. */
  operator?: string;
  /**
   * `ussd` plays a USSD phone (`Message` only, measured against the screen size; `choose()` types menu
   * numbers; a `Release` with an `Item` is the cart); `app` plays the Hubtel app. Default: by the platform's
   * rule (`ussd` for a telco operator). `ussd` for another operator sends `Platform: 'USSD'`.
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
  /** Throw a HubtelValidationError when an answer breaks the contract (else only record it). Default true. */
  strict?: boolean;
}

/** A fulfillment request nobody paid for: what a forger sends to the Service Fulfillment URL. */
export interface ForgedFulfillmentOptions {
  /** `OrderId`. Default: a fresh random one. */
  orderId?: string;
  /** `OrderInfo` to claim (a forger may claim `{Status: 'Paid', ...}`). Default null. */
  orderInfo?: Record<string, unknown> | null;
  /** `ExtraData` of the fulfillment request. Default `{}`. */
  extraData?: Record<string, unknown>;
}

export interface ServicePayOptions
  extends SandboxPaymentOutcomeDto, Omit<ForgedFulfillmentOptions, 'orderInfo'> {
  /** `OrderInfo`: null (default, as the contract), `true` builds the platform's 2026 shape, an object as given. */
  orderInfo?: boolean | Record<string, unknown>;
  /** A fault for this fulfillment request only (instead of `sandbox.faults`). */
  fault?: CallbackFaultSpec;
  /** `false`: the status check knows the payment only after `recordPayment()`. Default true. */
  recordPayment?: boolean;
}

export interface ServicePayResult {
  order: SandboxServiceOrder;
  /** Deliveries of the fulfillment request (empty when the payment failed). */
  deliveries: SandboxDelivery[];
}
