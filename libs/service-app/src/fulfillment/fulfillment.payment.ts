// The payment check (when `statusCheck` is set): each run asks the status check, then submits the
// fulfillment job, defers to the next check, or refuses the order.
import { HubtelStatusCheckBudgetError, type PaymentAmounts, type HubtelLogger } from 'nestjs-hubtel';
import { describeError } from '#internal';
import type { InboundPipeline, JobDeferral, JobRecord, JobRunContext, TransactionStatus } from '#internal';
import { PaymentPendingError } from './fulfillment.errors.js';
import type { FulfillmentOutcomes } from './fulfillment.outcomes.js';
import { namedAccount, type CheckState, type PaymentSummary } from './fulfillment.records.js';
import { cartTotal, judgePayment } from './fulfillment.verifier.js';
import type { FulfillmentAccountView } from './fulfillment.types.js';
import { SERVICE_APP_DEFAULTS, SERVICE_APP_JOBS } from '../service-app.constants.js';
import type {
  FulfillmentAttention,
  FulfillmentPayment,
  FulfillmentRejection,
  FulfillmentRequestedEvent,
} from '../service-app.events.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';

/** Most status checks one order costs the platform, over its whole re-check window. */
export const MAX_STATUS_CHECKS = SERVICE_APP_DEFAULTS.verification.checks;
/** Runs of the payment job that may fail (each may be a check) before it is dead-lettered. */
export const PAYMENT_ATTEMPTS = SERVICE_APP_DEFAULTS.verification.attempts;

export class FulfillmentPaymentCheck {
  /** Refusals of the attempt that just ran, read by `compactWhenDone`, dropped by `doneTtlMs` right after. */
  private readonly refusals = new Map<string, FulfillmentRejection>();

  constructor(
    private readonly pipeline: InboundPipeline,
    private readonly logger: HubtelLogger,
    /** The order's account: its status check (keys, POS Sales ID) and verification options. */
    private readonly accountOf: (order: FulfillmentRequestedEvent) => Promise<FulfillmentAccountView>,
    /** Refuses, holds or expires the order (emits `rejected`, `attention`, reports `failed`). */
    private readonly outcomes: Pick<FulfillmentOutcomes, 'refuse' | 'hold' | 'expire'>,
  ) {}

  summary(order: FulfillmentRequestedEvent, record?: JobRecord<FulfillmentRequestedEvent>): PaymentSummary {
    const summary: PaymentSummary = { sessionId: order.sessionId, serviceCode: order.serviceCode };
    if (namedAccount(order.account) !== undefined) summary.account = order.account;
    const refused = this.refusals.get(order.orderId);
    if (refused) summary.refused = refused;
    const attention = (record?.state as CheckState | undefined)?.attention;
    if (attention) summary.attention = attention;
    return summary;
  }

  /** How long a done payment record is kept: a refused one for hours (its only use is re-sends). */
  doneTtlMs(record: JobRecord<FulfillmentRequestedEvent>): number | undefined {
    const refused = this.refusals.delete(record.payload.orderId);
    return refused ? SERVICE_APP_DEFAULTS.verification.refusedTtlMs : undefined;
  }

  /**
   * One status check: paid → the fulfillment job is recorded; not yet (or the check failed) → deferred
   * to the next check; at the last one refused (`NOT_PAID`) or, still failing, dead-lettered.
   */
  async run(order: FulfillmentRequestedEvent, context: JobRunContext): Promise<void | JobDeferral> {
    // Unknown account (a resolver that no longer knows it): this run fails, retried as a failure.
    const account = await this.accountOf(order);
    const options = account.options;
    // Recorded while verification was on, recovered after it was turned off: trusted, as configured.
    if (!account.verifying)
      return void (await this.pipeline.submit(SERVICE_APP_JOBS.fulfillment, order.orderId, order));
    const { attempt, record } = context;
    const held = record.state as CheckState | undefined;
    // Waiting for a person: this run is the deadline (or a replay). Resolved → nothing left to do.
    if (held?.attention) return this.outcomes.expire(order, held.attention);
    // A run past the attempts the policy allows is a replay of a dead letter: one more check, final.
    const replayed = attempt > PAYMENT_ATTEMPTS;
    // Failed runs count as checks (they may have made one): the bound holds whatever failed.
    const check = (held?.checks ?? 0) + attempt;
    if (!replayed && check > MAX_STATUS_CHECKS)
      throw new PaymentPendingError(
        `Payment of order ${order.orderId} not confirmed after ${MAX_STATUS_CHECKS} status checks`,
      );
    const final = replayed || check >= MAX_STATUS_CHECKS;
    // The next run's attempt number is this one's (a deferral is no failed attempt).
    const next = (): JobDeferral =>
      context.defer(this.nextCheckAt(options, record.receivedAt, check), {
        checks: check + 1 - attempt,
      } satisfies CheckState);
    let status: TransactionStatus | undefined;
    try {
      status = await account.checkPayment!(order.sessionId);
    } catch (error) {
      // Over the status-check budget: nothing reached the platform, so this is no check of the order's.
      if (error instanceof HubtelStatusCheckBudgetError)
        return context.defer(Date.now() + (error.retryAfterMs ?? 1_000), {
          checks: check - attempt,
        } satisfies CheckState);
      if (final) throw error;
      this.logger.warn(
        `Status check for order ${order.orderId} failed (check ${check}/${MAX_STATUS_CHECKS}): ${describeError(error)}; checking again later`,
      );
      return next();
    }
    const verdict = judgePayment(order.sessionId, status, order.item, options.verification.amountTolerance);
    if (verdict.kind === 'attention') {
      // Kept (never lost, never delivered by itself) until a person resolves it or the deadline comes:
      // 3/4 of the callback deadline (the rest: `failed` retries).
      const now = Date.now();
      const decideBy = Math.max(now, record.receivedAt + Math.round(options.callbackRetry.deadlineMs * 0.75));
      const attention: FulfillmentAttention = {
        reason: verdict.reason,
        message: verdict.message,
        at: new Date(now).toISOString(),
        decideBy: new Date(decideBy).toISOString(),
      };
      if (verdict.amounts) attention.amounts = verdict.amounts;
      if (order.item) attention.amountExpected = cartTotal(order.item);
      const payment = paymentOf(status!, verdict.amounts);
      await this.outcomes.hold(order, attention, payment, check, status!);
      return context.defer(decideBy, {
        checks: check + 1 - attempt,
        attention,
        payment,
      } satisfies CheckState);
    }
    if (verdict.kind === 'paid') {
      const confirmed: FulfillmentRequestedEvent = { ...order, payment: paymentOf(status!, verdict.amounts) };
      await this.pipeline.submit(SERVICE_APP_JOBS.fulfillment, order.orderId, confirmed);
      if (this.logger.isLevelEnabled('log'))
        this.logger.log(
          `Payment of order ${order.orderId} confirmed by the status check (${status!.amount?.toFixed(2) ?? '?'} paid, session ${order.sessionId})`,
        );
      return;
    }
    if (verdict.kind === 'pending' && !final) return next();
    const reason = verdict.kind === 'refused' ? verdict.reason : 'NOT_PAID';
    const message =
      verdict.kind === 'refused'
        ? verdict.message
        : `${verdict.message}, still after ${check} status checks over ${Math.round(options.verification.recheckForMs / 1000)} s`;
    this.refusals.set(order.orderId, reason);
    await this.outcomes.refuse(order, reason, message, check, status);
  }

  /** When check `made + 1` is due: gaps grow geometrically from `recheckDelay.baseDelayMs` to the window. */
  private nextCheckAt(options: ResolvedServiceAppOptions, receivedAt: number, made: number): number {
    const window = options.verification.recheckForMs;
    const first = Math.min(options.verification.recheckDelay.baseDelayMs, window);
    const gaps = MAX_STATUS_CHECKS - 2;
    const offset =
      gaps <= 0 || first >= window
        ? (window * made) / (MAX_STATUS_CHECKS - 1)
        : first * (window / first) ** ((made - 1) / gaps);
    return Math.max(Date.now(), receivedAt + Math.round(offset));
  }
}

function paymentOf(status: TransactionStatus, amounts: PaymentAmounts | undefined): FulfillmentPayment {
  const payment: FulfillmentPayment = { confirmedByStatusCheck: true, amount: status.amount ?? 0 };
  if (amounts) payment.amounts = amounts;
  for (const key of ['currencyCode', 'transactionId', 'externalTransactionId', 'paymentMethod'] as const)
    if (status[key] !== undefined) payment[key] = status[key];
  return payment;
}
