import type { HubtelApi } from '../options/hubtel-options.types.js';

/**
 * What the suite reports as it works, for metrics or your own observer. No phone number, reference,
 * key or amount is in a signal, and every label-like field is bounded by the code, never by traffic.
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
  /** `accepted` (its work runs once), `duplicate`, `ignored` (a non-final status), `rejected`. */
  outcome: 'accepted' | 'duplicate' | 'ignored' | 'rejected';
  /** With `rejected`: the error code answered, or a failed checkout verification's (`AMOUNT_MISMATCH`). */
  reason?: string;
  /** The account routed to, once known; never a name taken from a request no account matched. */
  account?: string;
}

/** One call of one handler of a pipeline job. */
export interface HubtelHandlerSignal {
  kind: 'handler';
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

/** A transaction status check refused (not sent) by the instance's `statusCheckBudget`. */
export interface HubtelStatusCheckBudgetSignal {
  kind: 'status-check-budget';
  /** The check's short name (`checkout.getStatus`, `serviceApp.paymentStatus`). */
  operation: string;
}

/** A verified payment that does not match its invoice or cart: held (`opened`), then resolved. */
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

/** The one instrumentation seam, under `HUBTEL_TELEMETRY`; `record` must not throw nor block. */
export interface HubtelTelemetry {
  record(signal: HubtelSignal): void;
}

/** Injection token of the app's HubtelTelemetry (optional: nothing is reported without one). */
export const HUBTEL_TELEMETRY = Symbol.for('nestjs-hubtel:telemetry');
