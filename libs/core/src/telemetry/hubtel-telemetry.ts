import type { HubtelApi } from '../options/hubtel-options.types.js';

/**
 * What the suite reports as it works, for metrics (`nestjs-hubtel/metrics`) or your own observer.
 *
 * Every label-like field is bounded by the code, never by traffic: a source, a job type, a handler
 * identity (`Class.method@event`), an error code, an HTTP status. No phone number, reference, key
 * or amount is ever in a signal, so each can become a metric label as it is.
 */
export type HubtelSignal =
  | HubtelInboundSignal
  | HubtelHandlerSignal
  | HubtelJobSignal
  | HubtelSmsSignal
  | HubtelFulfillmentCallbackSignal
  | HubtelServiceFlowSignal
  | HubtelOutboundSignal
  | HubtelStatusCheckBudgetSignal
  | HubtelPaymentAttentionSignal;

/** Endpoints the platform calls. */
export type HubtelInboundSource = 'checkout' | 'fulfillment' | 'service-flow';

/** One request to an inbound endpoint, once its outcome is known (one signal per request). */
export interface HubtelInboundSignal {
  kind: 'inbound';
  source: HubtelInboundSource;
  /**
   * `accepted`: recorded, its work runs once. `duplicate`: already recorded, nothing new runs.
   * `ignored`: nothing to do (a non-final checkout status). `rejected`: refused (see `reason`).
   */
  outcome: 'accepted' | 'duplicate' | 'ignored' | 'rejected';
  /**
   * With `rejected`: the error code answered (`HUBTEL_INVALID_BODY`, `HUBTEL_NOT_FOUND`,
   * `HUBTEL_SOURCE_NOT_ALLOWED`, `HUBTEL_BODY_TOO_LARGE`, `HUBTEL_UNAVAILABLE`, ...) or, for a
   * checkout callback that failed verification, its reason (`AMOUNT_MISMATCH`, ...).
   */
  reason?: string;
  /**
   * The account the request was routed to (`default`, or a configured name), once known; for a
   * refusal before routing, the account the path names when it is a known one (configured, or
   * found by the resolver): never a name taken from a request no account matched.
   */
  account?: string;
}

/** One call of one handler of a pipeline job. */
export interface HubtelHandlerSignal {
  kind: 'handler';
  /** `checkout` or `service-app`. */
  pipeline: string;
  /** The job type (the event dispatched). */
  job: string;
  /** The handler's stable identity (`Class.method@event`). */
  handler: string;
  ok: boolean;
}

/** The outcome of one attempt of a pipeline job. */
export interface HubtelJobSignal {
  kind: 'job';
  pipeline: string;
  job: string;
  /** `done`, `retry` (failed; runs again after its backoff) or `dead` (gave up: dead-lettered). */
  outcome: 'done' | 'retry' | 'dead';
  /** Which attempt this was (1 for the first). */
  attempt: number;
}

/** Recipients of one SMS request (`send`: one; `sendBatch`: one signal per batch). */
export interface HubtelSmsSignal {
  kind: 'sms';
  sent: number;
  /** Failed recipients, those of `unknownOutcome` included. */
  failed: number;
  /** Failed recipients whose message may have gone out (the platform's answer was lost). */
  unknownOutcome: number;
  /** A named SMS account's name (from configuration or the app's resolver); absent: the default. */
  account?: string;
}

/** One attempt to post a fulfillment callback to the platform. */
export interface HubtelFulfillmentCallbackSignal {
  kind: 'fulfillment-callback';
  /** The reported ServiceStatus (`success` or `failed`). */
  status: string;
  ok: boolean;
  /** Which attempt this was (1 for the first: more is a retry). */
  attempt: number;
}

/** One step of a service-flow (USSD / service app) session. */
export interface HubtelServiceFlowSignal {
  kind: 'service-flow';
  /** The request's Type, lower-cased (`initiation`, `response`, `timeout`), or `invalid`. */
  request: string;
  /** The answer's Type, lower-cased (`response`, `release`, `addtocart`), or `invalid`. */
  response: string;
  durationMs: number;
}

/** One HTTP exchange with the platform (each attempt of a call). */
export interface HubtelOutboundSignal {
  kind: 'outbound';
  api: HubtelApi;
  /** The call's short name (`checkout.initiate`, `sms.sendBatch`, ...). */
  operation: string;
  /** The HTTP status answered, or `timeout` / `network` when no answer came. */
  status: string;
  durationMs: number;
}

/**
 * A transaction status check refused by the instance's budget (`statusCheckBudget.perMinute`):
 * not sent to the platform. One signal per refused check.
 */
export interface HubtelStatusCheckBudgetSignal {
  kind: 'status-check-budget';
  /** The check's short name (`checkout.getStatus`, `serviceApp.paymentStatus`). */
  operation: string;
}

/**
 * A payment the status check verified that matches its invoice or cart on neither count (amount
 * or currency): kept in its own state for a person (`opened`), then resolved from code
 * (`delivered` anyway, or `refunded`). One signal per change, whichever replica made it.
 */
export interface HubtelPaymentAttentionSignal {
  kind: 'payment-attention';
  /** `checkout` (an invoice) or `fulfillment` (a programmable-services order). */
  source: 'checkout' | 'fulfillment';
  outcome: 'opened' | 'delivered' | 'refunded';
  /** `AMOUNT_MISMATCH` or `CURRENCY_MISMATCH`. */
  reason: string;
  /** The account of the invoice or order (`default`, or a configured name). */
  account: string;
}

/**
 * The suite's one instrumentation seam: provide it under `HUBTEL_TELEMETRY` (HubtelMetricsModule of
 * `nestjs-hubtel/metrics` does) and every module reports to it. Without one, each hook is an
 * optional call on `undefined`: its signal is not even built. `record` must not throw nor block.
 */
export interface HubtelTelemetry {
  record(signal: HubtelSignal): void;
}

/** Injection token of the app's HubtelTelemetry (optional: nothing is reported without one). */
export const HUBTEL_TELEMETRY = Symbol.for('nestjs-hubtel:telemetry');
