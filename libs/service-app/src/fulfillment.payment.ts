/**
 * The payment check of a fulfillment request (when `statusCheck` is set): one attempt of the
 * payment job asks the status check, then submits the fulfillment job, throws to be re-checked,
 * or refuses the order. Apart from FulfillmentService, which records requests and reports
 * outcomes, so the verification rules read in one place.
 */
import type { InboundPipeline } from '#internal';
import { PaymentPendingError } from './fulfillment.errors.js';
import type { PaymentSummary } from './fulfillment.records.js';
import { judgePayment } from './fulfillment-verifier.js';
import type { PaymentStatus, PaymentStatusClient } from './payment-status.client.js';
import { SERVICE_APP_JOBS } from './service-app.constants.js';
import type {
  FulfillmentPayment,
  FulfillmentRejection,
  FulfillmentRequestedEvent,
} from './service-app.events.js';
import type { ServiceAppLogger } from './service-app.logger.js';
import type { ResolvedServiceAppOptions } from './service-app.options.js';

/** Refuses a recorded order (FulfillmentService: releases its cart, emits `rejected`). */
export type RefuseOrder = (
  order: FulfillmentRequestedEvent,
  reason: FulfillmentRejection,
  message: string,
  checks: number,
  status?: PaymentStatus,
) => Promise<void>;

export class FulfillmentPaymentCheck {
  /**
   * Refusals decided by the payment attempt that just ran, read (and dropped) by its
   * `compactWhenDone`, which the pipeline calls right after, in this process.
   */
  private readonly refusals = new Map<string, FulfillmentRejection>();

  constructor(
    private readonly pipeline: InboundPipeline,
    private readonly options: ResolvedServiceAppOptions,
    private readonly logger: ServiceAppLogger,
    /** False when verification is off or no status client is configured. */
    private readonly verifying: boolean,
    private readonly status: PaymentStatusClient | undefined,
    private readonly refuse: RefuseOrder,
  ) {}

  /** The payment record kept once the check is done (`compactWhenDone`): with the refusal, if any. */
  summary(order: FulfillmentRequestedEvent): PaymentSummary {
    const summary: PaymentSummary = { sessionId: order.sessionId, serviceCode: order.serviceCode };
    const refused = this.refusals.get(order.orderId);
    if (refused) {
      summary.refused = refused;
      this.refusals.delete(order.orderId);
    }
    return summary;
  }

  /**
   * One attempt of the payment job: asks the status check about the order's SessionId. Paid for
   * the cart's total → the fulfillment job is recorded (its handlers run next). Not recorded yet
   * → throws, and the pipeline checks again after a delay, until `recheckForMs` has passed since
   * the request came: then it is refused (`NOT_PAID`). A final refusal resolves (the job is done).
   */
  async run(order: FulfillmentRequestedEvent, attempt: number, receivedAt: number): Promise<void> {
    if (!this.verifying) {
      // Recorded while verification was on, recovered after it was turned off: trusted, as configured.
      await this.pipeline.submit(SERVICE_APP_JOBS.fulfillment, order.orderId, order);
      return;
    }
    const status = await this.status!.find(order.sessionId);
    const verdict = judgePayment(
      order.sessionId,
      status,
      order.item,
      this.options.verification.amountTolerance,
    );
    if (verdict.kind === 'paid') {
      const confirmed: FulfillmentRequestedEvent = { ...order, payment: paymentOf(status!) };
      await this.pipeline.submit(SERVICE_APP_JOBS.fulfillment, order.orderId, confirmed);
      if (this.logger.isLevelEnabled('log'))
        this.logger.log(
          `Payment of order ${order.orderId} confirmed by the status check (${status!.amount?.toFixed(2) ?? '?'} paid, session ${order.sessionId})`,
        );
      return;
    }
    if (verdict.kind === 'pending' && Date.now() - receivedAt < this.options.verification.recheckForMs) {
      throw new PaymentPendingError(
        `Payment of order ${order.orderId} not confirmed yet: ${verdict.message}`,
      );
    }
    const reason = verdict.kind === 'refused' ? verdict.reason : 'NOT_PAID';
    const message =
      verdict.kind === 'refused'
        ? verdict.message
        : `${verdict.message}, still after re-checking for ${Math.round(this.options.verification.recheckForMs / 1000)} s`;
    this.refusals.set(order.orderId, reason);
    await this.refuse(order, reason, message, attempt, status);
  }
}

function paymentOf(status: PaymentStatus): FulfillmentPayment {
  const payment: FulfillmentPayment = { confirmedByStatusCheck: true, amount: status.amount ?? 0 };
  for (const key of ['currencyCode', 'transactionId', 'externalTransactionId', 'paymentMethod'] as const) {
    if (status[key] !== undefined) payment[key] = status[key];
  }
  return payment;
}
