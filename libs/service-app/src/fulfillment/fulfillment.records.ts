// The stored shapes of an order's records (they outlive a deploy), and how `getOrder()` reads them.
import { HUBTEL_DEFAULT_ACCOUNT, HubtelValidationError } from 'nestjs-hubtel';
import type { JobRecord, JobStatus } from '#internal';
import {
  combineOutcomes,
  type FulfillmentAttention,
  type FulfillmentPayment,
  type FulfillmentRejection,
} from '../service-app.events.js';
import type { FulfillmentCallback, FulfillmentServiceStatus } from '../service-app.types.js';

/** What the fulfillment endpoint answers (status 200). */
export interface FulfillmentReceipt {
  OrderId: string;
  SessionId: string;
  /**
   * `received`: recorded (then verified, then handlers run); `duplicate`: nothing new runs. A request
   * failing verification is answered `received` too: a forger learns nothing (see `rejected` event).
   */
  Status: 'received' | 'duplicate';
}

export interface FulfillmentOrderStatus {
  orderId: string;
  sessionId: string;
  serviceCode: string | null;
  /** The payment check (when verification is on); `refused` and `dead`: no handler ran. */
  payment?: {
    /** `attention`: paid, but matching on neither count: see `attention`, and `resolveAttention()`. */
    status: 'checking' | 'confirmed' | 'refused' | 'dead' | 'attention';
    checks: number;
    reason?: FulfillmentRejection;
    /** Why the payment needs attention (status `attention`). */
    attention?: FulfillmentAttention;
    lastError?: string;
  };
  /** Your handlers: `pending`/`running` (retrying), `done`, `dead` (gave up: `failed` reported). */
  handler: { status: JobStatus; attempts: number; lastError?: string };
  /** True when the handlers deferred and no outcome was reported yet: call `complete()`. */
  awaitingCompletion: boolean;
  /** The named account of the order; absent for the default account. */
  account?: string;
  /** The callback, once an outcome was reported: `done` = accepted, `dead` = gave up at the deadline. */
  callback?: {
    serviceStatus: FulfillmentServiceStatus;
    metaData: unknown;
    status: JobStatus;
    attempts: number;
    lastError?: string;
  };
}

export interface CallbackJob {
  callback: FulfillmentCallback;
  reportedBy: 'handler' | 'app';
  /** The named account whose credentials send it; absent: the default account (and older jobs). */
  account?: string;
}

/** What an order's record keeps once done; every stored order payload has these fields, compacted or not. */
export interface OrderSummary {
  sessionId: string;
  serviceCode: string | null;
  /** Set when the handlers deferred (what `awaitingCompletion` needs once the answers are gone). */
  deferred?: true;
  /** The named account of the order; absent: the default account (and older records). */
  account?: string;
}

/** What the record of an accepted callback keeps once done: what a second report and `getOrder()` read. */
export interface CallbackSummary extends Pick<FulfillmentCallback, 'ServiceStatus' | 'MetaData'> {
  /** The named account that sent it; absent: the default account. */
  account?: string;
}

/** What a payment record keeps once verified: the order's ids, and the refusal if it was refused. */
export interface PaymentSummary extends OrderSummary {
  refused?: FulfillmentRejection;
  /** Set when the verified payment matched on neither count. */
  attention?: FulfillmentAttention;
}

/** What the payment job carries from one check to the next (its deferral state). */
export interface CheckState {
  /** Status checks made so far, less the failed runs (counted by the record's `attempts`). */
  checks: number;
  /** Set when the verified payment matches on neither count: the job waits for a person. */
  attention?: FulfillmentAttention;
  payment?: FulfillmentPayment;
}

/** A callback record's payload: the job while it may run, its summary once done (`compacted`). */
export type StoredCallback = CallbackJob | CallbackSummary;

export function callbackOf(record: JobRecord<StoredCallback>): CallbackSummary {
  return record.compacted ? (record.payload as CallbackSummary) : (record.payload as CallbackJob).callback;
}

/** Where an order stands: its handlers' record is absent while its payment is checked, or once refused. */
export function orderStatus(
  orderId: string,
  order: JobRecord<OrderSummary> | undefined,
  payment: JobRecord<PaymentSummary> | undefined,
  callback: JobRecord<StoredCallback> | undefined,
): FulfillmentOrderStatus {
  const awaitingCompletion =
    !!order &&
    !callback &&
    order.status === 'done' &&
    (order.compacted ? order.payload.deferred === true : combineOutcomes(order.results).kind === 'deferred');
  const handler: FulfillmentOrderStatus['handler'] = order
    ? { status: order.status, attempts: order.attempts }
    : { status: 'pending', attempts: 0 };
  if (order?.lastError) handler.lastError = order.lastError;
  const { sessionId, serviceCode, account } = (order ?? payment)!.payload;
  const status: FulfillmentOrderStatus = { orderId, sessionId, serviceCode, handler, awaitingCompletion };
  if (namedAccount(account) !== undefined) status.account = account;
  if (payment) status.payment = paymentView(payment, order === undefined);
  if (callback) {
    const { ServiceStatus: serviceStatus, MetaData: metaData } = callbackOf(callback);
    status.callback = { serviceStatus, metaData, status: callback.status, attempts: callback.attempts };
    if (callback.lastError) status.callback.lastError = callback.lastError;
  }
  return status;
}

/** An order's payment check: `confirmed` once its handlers were recorded; `attention` shows why. */
function paymentView(
  record: JobRecord<PaymentSummary>,
  unconfirmed: boolean,
): FulfillmentOrderStatus['payment'] {
  const refused = unconfirmed && record.compacted ? record.payload.refused : undefined;
  const done = refused ? 'refused' : 'confirmed';
  const state = record.state as CheckState | undefined;
  const payment: NonNullable<FulfillmentOrderStatus['payment']> = {
    status: !unconfirmed || record.status === 'done' ? done : record.status === 'dead' ? 'dead' : 'checking',
    checks: (state?.checks ?? 0) + record.attempts,
  };
  if (refused) payment.reason = refused;
  const attention = record.compacted ? record.payload.attention : state?.attention;
  if (attention) Object.assign(payment, { status: 'attention', attention });
  if (unconfirmed && record.lastError) payment.lastError = record.lastError;
  return payment;
}

export function assertJson(value: unknown): void {
  // Only objects (cycles, throwing toJSON) and bigints can fail: skip serialising the rest.
  if (value === null || (typeof value !== 'object' && typeof value !== 'bigint')) return;
  try {
    JSON.stringify(value);
  } catch {
    throw new HubtelValidationError('metaData must be JSON-serialisable', [
      { field: 'metaData', message: 'must be JSON-serialisable' },
    ]);
  }
}

/** The account as records keep it: nothing for the default one (as 0.1.0 wrote them). */
export function namedAccount(account: string | undefined): string | undefined {
  return account === HUBTEL_DEFAULT_ACCOUNT ? undefined : account;
}
