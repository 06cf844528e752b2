// What becomes of a recorded order: refused, held for attention, let through its session's one
// delivery (the gate), and its outcome reported for it and the session's other OrderIds.
import {
  describeError,
  type InboundPipeline,
  type JobFollowUps,
  type JobRecord,
  type JobRefusal,
  type TransactionStatus,
} from '#internal';
import { HubtelError, type HubtelTelemetry, type HubtelLogger } from 'nestjs-hubtel';
import { SERVICE_APP_JOBS, accountOf } from '../service-app.constants.js';
import {
  FulfillmentAttentionEvent,
  FulfillmentRejectedEvent,
  ServiceAppEvents,
  combineOutcomes,
  type FulfillmentAttention,
  type FulfillmentPayment,
  type FulfillmentRejection,
  type FulfillmentRequestedEvent,
} from '../service-app.events.js';
import { isoNow } from '../service-app.time.js';
import type { FulfillmentServiceStatus } from '../service-app.types.js';
import type { FulfillmentCallbacks, OrderRef } from './fulfillment.callbacks.js';
import type { DeliveryOutcome, DeliveryTurn, FulfillmentDeliveries } from './fulfillment.delivery.js';
import { assertJson, callbackOf, type StoredCallback } from './fulfillment.records.js';
import type { CheckState, PaymentSummary } from './fulfillment.records.js';
import { cartTotal } from './fulfillment.verifier.js';

/** What the fulfillment job's gate reads (see FulfillmentOutcomes.readGate). */
export interface GateRead {
  reported: JobRecord<StoredCallback> | undefined;
  /** The session's delivery, claimed at the run's first start. */
  claim?: Promise<DeliveryTurn>;
}

export class FulfillmentOutcomes {
  constructor(
    private readonly pipeline: InboundPipeline,
    private readonly logger: HubtelLogger,
    private readonly callbacks: FulfillmentCallbacks,
    private readonly deliveries: FulfillmentDeliveries,
    private readonly telemetry: HubtelTelemetry | undefined,
  ) {}

  /** FulfillmentService.resolveAttention(), its arguments checked. */
  async resolveAttention(orderId: string, action: 'deliver' | 'refund'): Promise<void> {
    const record = await this.pipeline.get<FulfillmentRequestedEvent>(SERVICE_APP_JOBS.payment, orderId);
    if (!record)
      throw new HubtelError(
        'HUBTEL_NOT_FOUND',
        `resolveAttention(): no order ${orderId} is known (or its record expired)`,
      );
    const conflict = (why: string) =>
      new HubtelError('HUBTEL_STORE_CONFLICT', `resolveAttention(): order ${orderId} ${why}`);
    const held = record.compacted ? undefined : (record.state as CheckState | undefined);
    const attention = held?.attention ?? (record.payload as unknown as PaymentSummary).attention;
    if (!attention) throw conflict('does not need attention');
    const delivered = await this.pipeline.get(SERVICE_APP_JOBS.fulfillment, orderId);
    const reported = await this.pipeline.get<StoredCallback>(SERVICE_APP_JOBS.callback, orderId);
    const wanted = action === 'deliver' ? 'delivered' : 'refunded';
    if (delivered || reported) {
      const done = delivered ? 'delivered' : 'reported "failed"';
      if ((action === 'deliver') === !!delivered) return;
      throw conflict(`was already ${done}; it cannot be ${wanted} too`);
    }
    if (!held?.payment || record.status !== 'pending') throw conflict('can no longer be resolved');
    const order = record.payload;
    const resolved: FulfillmentAttention = { ...attention, resolution: { action: wanted, at: isoNow() } };
    if (action === 'deliver') {
      // Its handlers run once, as any order's; the waiting payment job, woken below, finds it delivered.
      const deliver: FulfillmentRequestedEvent = { ...order, payment: held.payment, attention: resolved };
      await this.pipeline.submit(SERVICE_APP_JOBS.fulfillment, orderId, deliver);
    } else await this.reportOutcome(order, 'failed', null, 'app');
    // Its deadline run settles now (the resolution is recorded: a failed wake leaves it to `decideBy`).
    await this.pipeline
      .wake(record)
      .catch((error: unknown) =>
        this.logger.warn(
          `Order ${orderId} settles at its deadline (waking it failed: ${describeError(error)})`,
        ),
      );
    this.countAttention(order, attention, wanted);
    this.logger.log(`Order ${orderId} that needed attention was resolved: ${wanted}`);
  }

  /** Refuses an order: nothing runs or is sent, `rejected` is emitted; another paid OrderId may deliver. */
  async refuse(
    order: FulfillmentRequestedEvent,
    reason: FulfillmentRejection,
    message: string,
    checks: number,
    status?: TransactionStatus,
  ): Promise<void> {
    this.logger.warn(`Fulfillment request for order ${order.orderId} refused: ${reason} — ${message}`);
    this.alert(order, reason, message, checks, status);
  }

  /** Emits `rejected` for an order (at intake: no cart, no check yet); nothing is logged here. */
  alert(
    order: Pick<FulfillmentRequestedEvent, 'orderId' | 'sessionId' | 'serviceCode' | 'item' | 'account'>,
    reason: FulfillmentRejection,
    message: string,
    checks: number,
    status?: TransactionStatus,
  ): Promise<unknown> {
    const event = new FulfillmentRejectedEvent({
      reason,
      message,
      orderId: order.orderId,
      sessionId: order.sessionId,
      serviceCode: order.serviceCode,
      amountExpected: order.item ? cartTotal(order.item) : undefined,
      amountPaid: status?.amount,
      paymentStatus: status?.status,
      checks,
      rejectedAt: isoNow(),
      account: accountOf(order),
    });
    return this.pipeline.alert(ServiceAppEvents.Rejected, event);
  }

  /** Keeps an order paid on neither count: its `attention` event recorded, nothing delivered or reported. */
  async hold(
    order: FulfillmentRequestedEvent,
    attention: FulfillmentAttention,
    payment: FulfillmentPayment,
    checks: number,
    status: TransactionStatus,
  ): Promise<void> {
    const event = new FulfillmentAttentionEvent({
      orderId: order.orderId,
      sessionId: order.sessionId,
      serviceCode: order.serviceCode,
      attention,
      payment,
      claims: order.claims,
      account: accountOf(order),
    });
    const { duplicate } = await this.pipeline.submit(ServiceAppEvents.Attention, order.orderId, event);
    if (duplicate) return;
    this.alert(order, attention.reason, attention.message, checks, status);
    this.countAttention(order, attention, 'opened');
    this.logger.error(
      `Order ${order.orderId} was paid but needs attention (${attention.reason}): ${attention.message}. Resolve it with resolveAttention() before ${attention.decideBy}, or it is reported "failed"`,
    );
  }

  /** The deadline of an order that needs attention: nobody resolved it → `failed` is reported. */
  async expire(order: FulfillmentRequestedEvent, attention: FulfillmentAttention): Promise<void> {
    const delivered = await this.pipeline.get(SERVICE_APP_JOBS.fulfillment, order.orderId);
    const reported = await this.pipeline.get(SERVICE_APP_JOBS.callback, order.orderId);
    if (delivered || reported) return;
    this.logger.error(
      `Order ${order.orderId} needed attention (${attention.reason}) and nobody resolved it by ${attention.decideBy}: reporting "failed" to the platform`,
    );
    await this.reportOutcome(order, 'failed', null, 'app');
  }

  private countAttention(
    order: FulfillmentRequestedEvent,
    { reason }: FulfillmentAttention,
    outcome: 'opened' | 'delivered' | 'refunded',
  ): void {
    const account = accountOf(order);
    this.telemetry?.record({ kind: 'payment-attention', source: 'fulfillment', outcome, reason, account });
  }

  async settleHandlers(
    record: JobRecord<FulfillmentRequestedEvent>,
    outcome: 'done' | 'dead',
    followUps: JobFollowUps,
  ): Promise<void> {
    const order = record.payload;
    if (outcome === 'dead') {
      this.logger.error(
        `Fulfillment of order ${order.orderId} gave up after ${record.attempts} attempt(s); reporting "failed"`,
      );
      return void (await this.reportOutcome(order, 'failed', null, 'handler', followUps));
    }
    const combined = combineOutcomes(record.results);
    if (combined.kind === 'deferred') {
      if (this.logger.isLevelEnabled('log'))
        this.logger.log(
          `Fulfillment of order ${order.orderId} deferred by its handler; waiting for FulfillmentService.complete()`,
        );
      return;
    }
    let metaData = combined.metaData;
    try {
      assertJson(metaData);
    } catch {
      this.logger.error(
        `The handler of order ${order.orderId} returned metadata that is not JSON; MetaData sent as null`,
      );
      metaData = null;
    }
    await this.reportOutcome(order, combined.status, metaData, 'handler', followUps);
  }

  /** The order's reported outcome and, at a first start, its session's delivery claim, in one round trip. */
  readGate(orderId: string, order: FulfillmentRequestedEvent | undefined): Promise<GateRead> {
    const claim = order && this.deliveries.enter(order.sessionId, orderId);
    claim?.catch(() => undefined); // awaited by the gate
    // A recorded callback never queued (the queue was down when it was reported) is queued now.
    return this.pipeline
      .resend<StoredCallback>(SERVICE_APP_JOBS.callback, orderId)
      .then((reported) => ({ reported, claim }));
  }

  /**
   * The fulfillment job's gate: an order whose outcome was reported never runs again. Otherwise it claims
   * its session's one delivery; if another OrderId has it, this one only gets that order's outcome.
   */
  async admit(
    order: FulfillmentRequestedEvent,
    read?: Promise<GateRead>, // absent for a replay's check
  ): Promise<JobRefusal | undefined> {
    const { reported, claim } = await (read ?? this.readGate(order.orderId, undefined));
    if (reported) {
      const { ServiceStatus, MetaData } = callbackOf(reported);
      const turn = await claim?.catch(() => undefined);
      const outcome = { ServiceStatus, MetaData };
      const fresh = turn?.deliver === true && turn.fresh;
      const others = await this.deliveries.release(order.sessionId, order.orderId, outcome, fresh);
      await this.mirror(others, order, outcome, 'handler');
      return {
        outcome: ServiceStatus === 'failed' ? 'dead' : 'done',
        reason: `order ${order.orderId} was already reported "${ServiceStatus}" to the platform: its handlers do not run again`,
      };
    }
    const turn = await (claim ?? this.deliveries.enter(order.sessionId, order.orderId));
    if (turn.deliver) return undefined;
    if (turn.outcome) {
      const { ServiceStatus, MetaData } = turn.outcome;
      await this.callbacks.report(order, ServiceStatus, MetaData, 'handler');
    }
    return {
      outcome: 'done',
      reason: `session ${order.sessionId} is delivered under order ${turn.delivering}: order ${order.orderId} gets its outcome, not a second delivery`,
    };
  }

  /** Reports an order's outcome (first wins) and the same for its session's other OrderIds. */
  async reportOutcome(
    order: OrderRef,
    status: FulfillmentServiceStatus,
    metaData: unknown,
    by: 'handler' | 'app',
    follow?: JobFollowUps, // from `beforeSettled`: the callbacks are sent once it is settled
  ): ReturnType<FulfillmentCallbacks['report']> {
    const reported = await this.callbacks.report(order, status, metaData, by, follow);
    const outcome = reported.ok ? { ServiceStatus: status, MetaData: metaData ?? null } : reported.existing;
    const others = await this.deliveries.settle(order.sessionId, order.orderId, outcome);
    await this.mirror(others, order, outcome, by, follow);
    return reported;
  }

  /** The delivering order's outcome, for the session's other OrderIds (one account's: its cart's). */
  private async mirror(
    others: string[],
    order: OrderRef,
    { ServiceStatus, MetaData }: DeliveryOutcome,
    by: 'handler' | 'app',
    follow?: JobFollowUps,
  ): Promise<void> {
    for (const orderId of others)
      await this.callbacks.report({ ...order, orderId }, ServiceStatus, MetaData, by, follow);
  }
}
