import { Inject, Injectable, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import {
  HUBTEL_DEFAULT_ACCOUNT,
  HUBTEL_TELEMETRY,
  HubtelError,
  HubtelValidationError,
  maskMsisdn,
  type HubtelStore,
  type HubtelTelemetry,
  type DeadLetter,
} from 'nestjs-hubtel';
import {
  type InboundPipeline,
  type JobFollowUps,
  type JobRecord,
  type JobRefusal,
  type JobStatus,
} from '#internal';
import { FulfillmentCallbacks } from './fulfillment.callbacks.js';
import { FulfillmentCarts } from './fulfillment.cart.js';
import { FulfillmentDeliveries } from './fulfillment.delivery.js';
import { FulfillmentRejectedError } from './fulfillment.errors.js';
import { FulfillmentPaymentCheck, PAYMENT_ATTEMPTS } from './fulfillment.payment.js';
import {
  assertJson,
  callbackOf,
  describe,
  namedAccount,
  orderStatus,
  unconfirmedOrder,
  type OrderSummary,
  type PaymentSummary,
  type StoredCallback,
} from './fulfillment.records.js';
import { cartTotal } from './fulfillment-verifier.js';
import type { PaymentStatus } from './payment-status.client.js';
import type { ServiceAppAccount, ServiceAppAccounts } from './service-app.accounts.js';
import {
  SERVICE_APP_ACCOUNTS,
  SERVICE_APP_JOBS,
  SERVICE_APP_OPTIONS,
  SERVICE_APP_PIPELINE,
  SERVICE_APP_STORE,
} from './service-app.constants.js';
import { ServiceAppWrongAccountError } from './service-app.errors.js';
import { accountOf } from './service-flow.session.js';
import { parseRequest, validateFulfillmentRequest, type FulfillmentRequestDto } from './service-app.dto.js';
import { readOrderClaims } from './fulfillment.claims.js';
import type { CheckState } from './fulfillment.payment.js';
import {
  FulfillmentAttentionEvent,
  FulfillmentRejectedEvent,
  ServiceAppEvents,
  combineOutcomes,
  fulfillmentEventFor,
  type FulfillmentAttention,
  type FulfillmentPayment,
  type FulfillmentRejection,
  type FulfillmentRequestedEvent,
} from './service-app.events.js';
import { ServiceAppLogger } from './service-app.logger.js';
import type { ResolvedServiceAppOptions } from './service-app.options.js';
import type { FulfillmentServiceStatus } from './service-app.types.js';
import { isoNow } from './service-app.time.js';
import type { StoredCart } from './service-flow.types.js';

// Declared in fulfillment.errors.ts (the cart claim throws it too); exported here, beside the service.
export { FulfillmentRejectedError };

/** Most ServiceCodes whose event lists are kept (see `eventsOf`). */
const EVENT_LISTS_LIMIT = 256;

/** What the fulfillment endpoint answers (status 200). */
export interface FulfillmentReceipt {
  OrderId: string;
  SessionId: string;
  /**
   * `received`: recorded; its payment is verified (when `statusCheck` is set), then handlers run.
   * `duplicate`: this OrderId was already recorded, nothing new runs. A request that fails
   * verification is answered `received` too (verification may take re-checks): a forger learns
   * nothing, and the refusal shows as a `rejected` event, in the logs and in `getOrder()`.
   */
  Status: 'received' | 'duplicate';
}

/** Where one order stands. */
export interface FulfillmentOrderStatus {
  orderId: string;
  sessionId: string;
  serviceCode: string | null;
  /**
   * The payment check (only when verification is on): `checking` (re-checking the status),
   * `confirmed`, `refused` (with the reason; no handler ran), `dead` (the status check kept
   * failing: nothing ran; replay by hand).
   */
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
  /**
   * True when the handlers deferred and no outcome was reported yet: call `complete()`.
   */
  awaitingCompletion: boolean;
  /** The named account of the order; absent for the default account. */
  account?: string;
  /** The callback, once an outcome was reported: `done` = accepted by the platform, `dead` = gave up at the deadline. */
  callback?: {
    serviceStatus: FulfillmentServiceStatus;
    metaData: unknown;
    status: JobStatus;
    attempts: number;
    lastError?: string;
  };
}

/**
 * Fulfillment of paid orders, exactly once per OrderId, on the core's inbound pipeline:
 *
 *   request → validate → cart check → record (set-if-absent on OrderId) → 200
 *           → payment confirmed by the status check (re-checked with backoff; refused → `rejected`
 *             event, nothing else)  [when `statusCheck` is set]
 *           → @OnFulfillment handlers (retried with backoff) → callback `success` / `failed`
 *           → POST {callback_url}/callback (retried until accepted or the deadline) → dead letter
 *
 * Inject it to report deferred deliveries: `complete(orderId, 'success')`.
 */
@Injectable()
export class FulfillmentService implements OnApplicationBootstrap {
  private readonly logger = new ServiceAppLogger();
  private readonly eventLists = new Map<string, readonly string[]>();
  private readonly emitting = new Set<Promise<unknown>>();
  private readonly emitter: EventEmitter2;
  private readonly carts: FulfillmentCarts;
  private readonly deliveries: FulfillmentDeliveries;
  private readonly payment: FulfillmentPaymentCheck;
  private readonly callbacks: FulfillmentCallbacks;
  private readonly telemetry: HubtelTelemetry | undefined;
  private static readonly catchAllEvents: readonly string[] = Object.freeze([ServiceAppEvents.Fulfillment]);

  constructor(
    @Inject(SERVICE_APP_PIPELINE) private readonly pipeline: InboundPipeline,
    @Inject(SERVICE_APP_STORE) store: HubtelStore,
    @Inject(SERVICE_APP_OPTIONS) private readonly options: ResolvedServiceAppOptions,
    @Inject(SERVICE_APP_ACCOUNTS) private readonly accounts: ServiceAppAccounts,
    @Optional() @Inject(HUBTEL_TELEMETRY) telemetry?: HubtelTelemetry,
  ) {
    this.telemetry = telemetry;
    // The pipeline's emitter: the app's, checked once where the pipeline is made (inboundKit).
    this.emitter = pipeline.emitter;
    // What a registered account's FulfillmentAccount (@InjectFulfillment) calls.
    accounts.attachFulfillment(this);
    this.carts = new FulfillmentCarts(store, this.logger);
    this.deliveries = new FulfillmentDeliveries(store, this.logger);
    this.payment = new FulfillmentPaymentCheck(
      pipeline,
      this.logger,
      // The order's own account, whichever replica runs the job: its keys and POS Sales ID.
      (order) => accounts.get(accountOf(order)),
      (order, reason, message, checks, paid) => this.refuse(order, reason, message, checks, paid),
      (order, attention, payment, checks, status) => this.hold(order, attention, payment, checks, status),
      (order, attention) => this.expire(order, attention),
    );
    // The attention event: a recorded job, so its handlers run once whichever replica found it.
    pipeline.define(ServiceAppEvents.Attention, { compactWhenDone: () => undefined });
    const handlerRetry = options.fulfillmentRetry;
    pipeline.define<FulfillmentRequestedEvent>(SERVICE_APP_JOBS.fulfillment, {
      // Handlers of the order's ServiceCode first, then the catch-all ones.
      events: (order) => this.eventsOf(order.serviceCode),
      // Asked before every run, whatever led to it (retry, takeover, replay from a service method
      // or the command line): the one place that decides whether this order's goods may go out.
      gate: (order, _record, reported) =>
        this.admit(order, reported as Promise<JobRecord<StoredCallback> | undefined>),
      // Whether its outcome was reported, read with the order's record (one round trip).
      gateRead: (orderId) => this.pipeline.resend<StoredCallback>(SERVICE_APP_JOBS.callback, orderId),
      // No handler at all must not be reported as a success: retried, then `failed`.
      requireListener: true,
      keepResults: true,
      retry: handlerRetry,
      // Kept for 7 days after it is done, so a re-sent OrderId stays a duplicate: only what is
      // read then is kept. The handlers' answers go too: once done, an order either has a
      // callback record (its outcome) or was deferred (see getOrder). A dead order keeps all.
      compactWhenDone: (order, record): OrderSummary => {
        const summary: OrderSummary = { sessionId: order.sessionId, serviceCode: order.serviceCode };
        if (combineOutcomes(record.results).kind === 'deferred') summary.deferred = true;
        if (namedAccount(order.account) !== undefined) summary.account = order.account;
        return summary;
      },
      // Before the job is settled: a callback that could not be recorded or queued keeps it
      // pending, retried for that alone, instead of losing it. A run its gate refused ran no
      // handler: its outcome, if any, was reported by the gate.
      beforeSettled: (record, outcome, followUps) => this.settleHandlers(record, outcome, followUps),
    });
    const recheck = options.verification;
    pipeline.define<FulfillmentRequestedEvent>(SERVICE_APP_JOBS.payment, {
      // Re-checks are deferrals on a fixed schedule (at most MAX_STATUS_CHECKS in all); the retry
      // policy only covers runs that fail, and a status check still failing at the last check
      // (then: dead-lettered, NOT_CONFIRMED).
      run: (order, context) => this.payment.run(order, context),
      retry: { maxAttempts: PAYMENT_ATTEMPTS, ...recheck.recheckDelay },
      compactWhenDone: (order, record): PaymentSummary => this.payment.summary(order, record),
      doneTtlMs: (record) => this.payment.doneTtlMs(record),
      onSettled: async (record, outcome, error) => {
        if (outcome === 'done') return;
        const order = record.payload;
        await this.refuse(
          order,
          'NOT_CONFIRMED',
          `the status check could not confirm it: ${describe(error)}`,
          record.attempts,
        );
      },
    });
    this.callbacks = new FulfillmentCallbacks(
      pipeline,
      options,
      (job) => accounts.get(accountOf(job)),
      this.logger,
      this.emitter,
      telemetry,
    );
  }

  /** Said at start-up (once the app's logger is in place), not per request. */
  onApplicationBootstrap(): void {
    if (!this.accounts.default.verifying) this.warnUnverified();
  }

  /**
   * The orders of account `name` (`default`, registered or found by the resolver): reporting
   * them, reading them. An order of another account is refused (HUBTEL_WRONG_ACCOUNT); an unknown
   * name rejects each call with ServiceAppUnknownAccountError (HUBTEL_UNKNOWN_ACCOUNT).
   */
  forAccount(name: string): FulfillmentAccount {
    return new FulfillmentAccount(name, this.accounts);
  }

  /**
   * Takes one fulfillment request (the body as received): validates it, checks its session ended
   * in an AddToCart of this app, records it and returns; handlers run after. Throws
   * HubtelValidationError (bad body) or FulfillmentRejectedError (unknown session, conflicts).
   * A duplicate OrderId is acknowledged again and runs nothing. `account`: the account whose
   * endpoint it came to (`north`, when you mount the endpoint yourself); an order or cart of another
   * account is refused (ServiceAppWrongAccountError), an unknown name rejects
   * (ServiceAppUnknownAccountError). Default: the default account.
   */
  async receive(body: unknown, account?: string): Promise<FulfillmentReceipt>;
  /** @internal The controller passes the account it routed the request to. */
  async receive(body: unknown, account?: string | ServiceAppAccount): Promise<FulfillmentReceipt>;
  async receive(body: unknown, to?: string | ServiceAppAccount): Promise<FulfillmentReceipt> {
    // Once the app shuts down nothing new is recorded (HubtelShuttingDownError: answer 503).
    this.pipeline.assertAcceptingInbound('fulfillment request');
    const account =
      to === undefined ? this.accounts.default : typeof to === 'string' ? await this.accounts.get(to) : to;
    const request = parseRequest(validateFulfillmentRequest, body, 'fulfillment request');
    try {
      return await this.accept(request, account);
    } catch (error) {
      // Refused at once (unknown session, a cart or OrderId taken): an alert, as a refused payment is.
      if (error instanceof FulfillmentRejectedError) {
        this.emitRejected({
          reason: error.reason,
          message: error.message,
          orderId: request.OrderId,
          sessionId: request.SessionId,
          serviceCode: null,
          checks: 0,
          rejectedAt: isoNow(),
          account: account.name,
        });
      }
      throw error;
    }
  }

  private async accept(
    request: FulfillmentRequestDto,
    account: ServiceAppAccount,
  ): Promise<FulfillmentReceipt> {
    const { OrderId: orderId, SessionId: sessionId } = request;
    // Verified first when it can be: the payment job submits the fulfillment job once confirmed.
    const job = account.verifying ? SERVICE_APP_JOBS.payment : SERVICE_APP_JOBS.fulfillment;
    // A new OrderId (the usual request) costs the cart's read and the record's set-if-absent, which
    // finds a known one (a duplicate). Read first only when that cannot: an order a verifying
    // account knows as its fulfillment job (recorded before verification was on, or an attention
    // resolved by delivering it), read along with the cart; and a known order whose cart would
    // refuse it (gone, with `requireCart`, or another account's): answered as the duplicate it is.
    // Through the pipeline, not a bare read: a known order whose job never ran (its first request
    // was answered 503 after the record) is asked for again by this retry.
    const cartRead = this.carts.read(sessionId);
    const delivered = account.verifying
      ? this.pipeline.resend<OrderSummary>(SERVICE_APP_JOBS.fulfillment, orderId)
      : undefined;
    cartRead.catch(() => undefined); // awaited below; not left unhandled while the other is awaited
    let known = await delivered;
    const entry = await cartRead;
    const refused = entry ? accountOf(entry.value) !== account.name : account.options.requireCart;
    if (!known && refused) known = await this.pipeline.resend<OrderSummary>(job, orderId);
    if (known) {
      this.assertOwn('order', orderId, known.payload, account);
      return this.duplicate(orderId, sessionId, known.payload.sessionId);
    }
    const cart = this.carts.find(orderId, sessionId, entry, account.options.requireCart);
    // A cart built on another account's path: that account's order, not this one's.
    if (cart) this.assertOwn('session', sessionId, cart, account);

    // A literal (one shape for every order), the optional field added after.
    const order: FulfillmentRequestedEvent = {
      orderId,
      sessionId,
      serviceCode: cart?.serviceCode ?? null,
      flow: cart?.flow ?? null,
      mobile: cart?.mobile ?? null,
      item: cart?.item ?? null,
      serviceData: cart?.item.ServiceData ?? {},
      data: cart?.data ?? {},
      extraData: request.ExtraData ?? {},
      orderInfo: request.OrderInfo ?? null,
      receivedAt: isoNow(),
      account: account.name,
    };
    const claims = readOrderClaims(request.OrderInfo);
    if (claims) (order as { claims?: typeof claims }).claims = claims;
    if (cart?.operator !== undefined) (order as { operator?: string }).operator = cart.operator;

    const result = await this.pipeline.submit<OrderSummary>(job, orderId, order);
    if (result.duplicate) {
      // A known OrderId (its record may be compacted); `submit` asked its runner again for a run
      // that never started.
      this.assertOwn('order', orderId, result.record.payload, account);
      return this.duplicate(orderId, sessionId, result.record.payload.sessionId);
    }
    if (this.logger.isLevelEnabled('log')) {
      const who = order.mobile ? ` for ${maskMsisdn(order.mobile)}` : '';
      this.logger.log(
        `Fulfillment request for order ${orderId} (session ${sessionId}, ServiceCode ${order.serviceCode ?? 'unknown'})${who}${accountLabel(order)} recorded${account.verifying ? '; confirming its payment' : ''}`,
      );
    }
    return { OrderId: orderId, SessionId: sessionId, Status: 'received' };
  }

  /**
   * Reports the outcome of an order yourself (deliveries your handler deferred with
   * `deferFulfillment()`, or orders you finish out of band): posts the fulfillment callback, retried
   * until the platform accepts it or the deadline passes. Reporting the same status twice is a
   * no-op; a different status than already reported throws (HUBTEL_STORE_CONFLICT).
   */
  async complete(orderId: string, status: FulfillmentServiceStatus, metaData: unknown = null): Promise<void> {
    return this.completeFor(undefined, orderId, status, metaData);
  }

  /** @internal `complete()`, with the order's account checked when `account` is given. */
  async completeFor(
    account: string | undefined,
    orderId: string,
    status: FulfillmentServiceStatus,
    metaData: unknown = null,
  ): Promise<void> {
    if (typeof orderId !== 'string' || orderId === '') {
      throw new HubtelValidationError('complete(): orderId must be a non-empty string', [
        { field: 'orderId', message: 'must be a non-empty string' },
      ]);
    }
    if (status !== 'success' && status !== 'failed') {
      throw new HubtelValidationError(
        `complete(): status must be "success" or "failed", got ${JSON.stringify(status)}`,
        [{ field: 'status', message: 'must be "success" or "failed"' }],
      );
    }
    assertJson(metaData);
    const order = await this.pipeline.get<OrderSummary>(SERVICE_APP_JOBS.fulfillment, orderId);
    if (!order)
      throw new HubtelError(
        'HUBTEL_NOT_FOUND',
        `complete(): no fulfillment request with OrderId ${orderId} is known (or its record expired)`,
      );
    if (account !== undefined && accountOf(order.payload) !== account)
      throw new ServiceAppWrongAccountError('order', orderId, account, accountOf(order.payload));
    // Another OrderId of the session delivers its goods: its outcome is this one's too.
    const sessionId = order.payload.sessionId;
    const delivering = (await this.deliveries.get(sessionId))?.orderId ?? orderId;
    const accepted = await this.reportOutcome(
      delivering,
      sessionId,
      status,
      metaData,
      'app',
      order.payload.account,
    );
    if (!accepted.ok) {
      if (accepted.existing.ServiceStatus === status) return;
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `complete(): order ${orderId} was already reported as "${accepted.existing.ServiceStatus}"; it cannot be reported as "${status}"`,
      );
    }
  }

  /**
   * Jobs of this module that gave up, oldest first: payment checks (`…payment:<OrderId>`),
   * handlers (`…fulfillment:<OrderId>`), fulfillment callbacks (`…callback:<OrderId>`).
   */
  listDeadLetters(): Promise<DeadLetter[]> {
    return this.pipeline.listDeadLetters();
  }

  /**
   * Runs a dead letter again, now (only the handlers that failed run again). The fulfillment job's
   * gate decides, here as on every other road to the handlers (`hubtel-trigger dead-letters
   * replay` included): an order reported `failed` is never delivered afterwards, and a session's
   * goods go out once; a refused replay throws JobRefusedError (`HUBTEL_STORE_CONFLICT`).
   *
   * @throws HubtelDeadLetterNotFoundError (`HUBTEL_NOT_FOUND`) for an unknown or expired id.
   * @throws HubtelNotDeadLetterError (`HUBTEL_STORE_CONFLICT`) for a job that is not dead.
   */
  async replayDeadLetter(id: string): Promise<void> {
    await this.pipeline.replayDeadLetter(id);
  }

  /**
   * Resolves an order whose verified payment matched the cart on neither count (its `attention`
   * event; `getOrder()` shows payment status `attention`): `deliver` runs its handlers with the
   * payment as verified (their outcome is reported to the platform as usual; the order carries
   * `attention`), `refund` reports `failed` to the platform now (give the money back in Hubtel's
   * merchant dashboard). Before `attention.decideBy`: after it the order was reported `failed`.
   * Resolving again the same way is a no-op.
   *
   * @throws HubtelError `HUBTEL_NOT_FOUND` for an unknown order; `HUBTEL_STORE_CONFLICT` when it
   *   does not need attention, or its outcome went the other way (resolved, or the deadline passed).
   */
  async resolveAttention(orderId: string, action: 'deliver' | 'refund'): Promise<FulfillmentOrderStatus> {
    if (typeof orderId !== 'string' || orderId === '')
      throw new HubtelValidationError('resolveAttention(): orderId must be a non-empty string', [
        { field: 'orderId', message: 'must be a non-empty string' },
      ]);
    if (action !== 'deliver' && action !== 'refund')
      throw new HubtelValidationError('resolveAttention(): action must be "deliver" or "refund"', [
        { field: 'action', message: 'must be "deliver" or "refund"', value: action },
      ]);
    const record = await this.pipeline.get<FulfillmentRequestedEvent>(SERVICE_APP_JOBS.payment, orderId);
    if (!record)
      throw new HubtelError(
        'HUBTEL_NOT_FOUND',
        `resolveAttention(): no order ${orderId} is known (or its record expired)`,
      );
    const held = record.compacted ? undefined : (record.state as CheckState | undefined);
    const attention = held?.attention ?? (record.payload as unknown as PaymentSummary).attention;
    if (!attention)
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `resolveAttention(): order ${orderId} does not need attention`,
      );
    const delivered = await this.pipeline.get(SERVICE_APP_JOBS.fulfillment, orderId);
    const reported = await this.pipeline.get<StoredCallback>(SERVICE_APP_JOBS.callback, orderId);
    const wanted = action === 'deliver' ? 'delivered' : 'refunded';
    if (delivered || reported) {
      const done = delivered ? 'delivered' : 'reported "failed"';
      if ((action === 'deliver') === !!delivered) return (await this.getOrder(orderId))!;
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `resolveAttention(): order ${orderId} was already ${done}; it cannot be ${wanted} too`,
      );
    }
    if (!held?.payment || record.status !== 'pending')
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `resolveAttention(): order ${orderId} can no longer be resolved`,
      );
    const order = record.payload;
    const resolved: FulfillmentAttention = { ...attention, resolution: { action: wanted, at: isoNow() } };
    if (action === 'deliver') {
      // Its handlers run once, as any order's; the waiting payment job finds it delivered at its deadline.
      await this.pipeline.submit(SERVICE_APP_JOBS.fulfillment, orderId, {
        ...order,
        payment: held.payment,
        attention: resolved,
      } satisfies FulfillmentRequestedEvent);
    } else {
      await this.reportOutcome(orderId, order.sessionId, 'failed', null, 'app', order.account);
    }
    this.telemetry?.record({
      kind: 'payment-attention',
      source: 'fulfillment',
      outcome: wanted,
      reason: attention.reason,
      account: accountOf(order),
    });
    this.logger.log(`Order ${orderId} that needed attention was resolved: ${wanted}`);
    return (await this.getOrder(orderId))!;
  }

  /** Where an order stands (undefined when unknown or expired from the store). */
  async getOrder(orderId: string): Promise<FulfillmentOrderStatus | undefined> {
    const payment = await this.pipeline.get<PaymentSummary>(SERVICE_APP_JOBS.payment, orderId);
    const order = await this.pipeline.get<OrderSummary>(SERVICE_APP_JOBS.fulfillment, orderId);
    if (!order) return payment && unconfirmedOrder(orderId, payment);
    const callback = await this.pipeline.get<StoredCallback>(SERVICE_APP_JOBS.callback, orderId);
    return orderStatus(orderId, order, payment, callback);
  }

  /**
   * Resolves when the rejected events emitted so far have been handled. With `pipeline.drain()`,
   * for tests and orderly shutdown.
   */
  async drainRejections(): Promise<void> {
    while (this.emitting.size > 0) await Promise.allSettled([...this.emitting]);
  }

  /** The cart a session ended with, while it is kept (`cartTtlMs`). */
  async getCart(sessionId: string): Promise<StoredCart | undefined> {
    return this.carts.get(sessionId);
  }

  /**
   * The events an order is delivered to: its ServiceCode's, then the catch-all one. One frozen
   * list per ServiceCode (bounded), not two new strings and an array per order.
   */
  private eventsOf(serviceCode: string | null): readonly string[] {
    if (!serviceCode) return FulfillmentService.catchAllEvents;
    const known = this.eventLists.get(serviceCode);
    if (known) return known;
    const events = Object.freeze([fulfillmentEventFor(serviceCode), ServiceAppEvents.Fulfillment]);
    if (this.eventLists.size < EVENT_LISTS_LIMIT) this.eventLists.set(serviceCode, events);
    return events;
  }

  /**
   * Refuses a recorded order: no handler runs, no callback is sent, a `rejected` event is emitted
   * (an alert, not a recorded job). Nothing is held for the session: another OrderId of it whose
   * payment is confirmed delivers (once: see fulfillment.delivery.ts).
   */
  private async refuse(
    order: FulfillmentRequestedEvent,
    reason: FulfillmentRejection,
    message: string,
    checks: number,
    status?: PaymentStatus,
  ): Promise<void> {
    this.logger.warn(`Fulfillment request for order ${order.orderId} refused: ${reason} — ${message}`);
    const fields: FulfillmentRejectedEvent = {
      reason,
      message,
      orderId: order.orderId,
      sessionId: order.sessionId,
      serviceCode: order.serviceCode,
      checks,
      rejectedAt: isoNow(),
      account: accountOf(order),
    };
    if (order.item) (fields as { amountExpected?: number }).amountExpected = cartTotal(order.item);
    if (status?.amount !== undefined) (fields as { amountPaid?: number }).amountPaid = status.amount;
    if (status) (fields as { paymentStatus?: string }).paymentStatus = status.status;
    this.emitRejected(fields);
  }

  /**
   * Keeps an order whose verified payment matches on neither count: its `attention` event is
   * recorded (handlers run once), counted and logged; nothing is delivered nor reported yet. The
   * `rejected` alert is emitted as for every payment that fails verification.
   */
  private async hold(
    order: FulfillmentRequestedEvent,
    attention: FulfillmentAttention,
    payment: FulfillmentPayment,
    checks: number,
    status: PaymentStatus,
  ): Promise<void> {
    const event = new FulfillmentAttentionEvent({
      orderId: order.orderId,
      sessionId: order.sessionId,
      serviceCode: order.serviceCode,
      attention,
      payment,
      ...(order.claims ? { claims: order.claims } : {}),
      account: accountOf(order),
    });
    const { duplicate } = await this.pipeline.submit(ServiceAppEvents.Attention, order.orderId, event);
    if (duplicate) return;
    const alert: FulfillmentRejectedEvent = {
      reason: attention.reason,
      message: attention.message,
      orderId: order.orderId,
      sessionId: order.sessionId,
      serviceCode: order.serviceCode,
      checks,
      rejectedAt: isoNow(),
      paymentStatus: status.status,
      account: accountOf(order),
    };
    if (attention.amountExpected !== undefined)
      (alert as { amountExpected?: number }).amountExpected = attention.amountExpected;
    if (status.amount !== undefined) (alert as { amountPaid?: number }).amountPaid = status.amount;
    this.emitRejected(alert);
    this.telemetry?.record({
      kind: 'payment-attention',
      source: 'fulfillment',
      outcome: 'opened',
      reason: attention.reason,
      account: accountOf(order),
    });
    this.logger.error(
      `Order ${order.orderId} was paid but needs attention (${attention.reason}): ${attention.message}. Resolve it with resolveAttention() before ${attention.decideBy}, or it is reported "failed"`,
    );
  }

  /** The deadline of an order that needs attention: nobody resolved it → `failed` is reported. */
  private async expire(order: FulfillmentRequestedEvent, attention: FulfillmentAttention): Promise<void> {
    const delivered = await this.pipeline.get(SERVICE_APP_JOBS.fulfillment, order.orderId);
    const reported = await this.pipeline.get(SERVICE_APP_JOBS.callback, order.orderId);
    if (delivered || reported) return;
    this.logger.error(
      `Order ${order.orderId} needed attention (${attention.reason}) and nobody resolved it by ${attention.decideBy}: reporting "failed" to the platform`,
    );
    await this.reportOutcome(order.orderId, order.sessionId, 'failed', null, 'app', order.account);
  }

  /** Emits a rejected event once (an alert, not a recorded job); a throwing listener is logged. */
  private emitRejected(fields: FulfillmentRejectedEvent): void {
    const emitting = this.emitter
      .emitAsync(ServiceAppEvents.Rejected, new FulfillmentRejectedEvent(fields))
      .catch((error: unknown) =>
        this.logger.error(`A ${ServiceAppEvents.Rejected} listener failed: ${describe(error)}`),
      );
    this.emitting.add(emitting);
    void emitting.finally(() => this.emitting.delete(emitting));
  }

  /** Said once, at start-up, when fulfillment requests cannot be verified. */
  private warnUnverified(): void {
    const why = this.options.statusCheck ? 'verification.enabled is false' : 'no statusCheck is configured';
    const guarded =
      (this.options.access.allowedIps?.length ?? 0) > 0 || this.options.access.pathSecret !== undefined;
    this.logger.warn(
      `Fulfillment requests are trusted unverified (${why}): any request for a cart this app built delivers it. ` +
        'Set serviceApp.statusCheck (the checkout key pair and POS Sales ID: HUBTEL_CLIENT_ID, HUBTEL_CLIENT_SECRET, HUBTEL_POS_SALES_ID) so each payment is confirmed' +
        (guarded
          ? '; the access guards you set still apply.'
          : ', or at least guard the endpoint with serviceApp.access (allowedIps, pathSecret).'),
    );
  }

  /**
   * A known order or cart of another account than the one the request came for is refused: the
   * request is answered 409 HUBTEL_WRONG_ACCOUNT, nothing recorded, run or emitted.
   */
  private assertOwn(
    subject: 'order' | 'session',
    id: string,
    stored: { account?: string | undefined },
    account: ServiceAppAccount,
  ): void {
    const owner = accountOf(stored);
    if (owner === account.name) return;
    this.logger.warn(
      `Fulfillment request for ${subject} ${id} refused: it belongs to another account than "${account.name}" (the path it came on)`,
    );
    throw new ServiceAppWrongAccountError(subject, id, account.name, owner);
  }

  private duplicate(orderId: string, sessionId: string, recordedSessionId: string): FulfillmentReceipt {
    if (recordedSessionId !== sessionId) {
      this.logger.warn(
        `Fulfillment request for order ${orderId} refused: that OrderId was received for another session`,
      );
      throw new FulfillmentRejectedError(
        'ORDER_CONFLICT',
        `OrderId ${orderId} was already received for another session`,
        409,
      );
    }
    this.logger.log(`Duplicate fulfillment request for order ${orderId} acknowledged; nothing new runs`);
    return { OrderId: orderId, SessionId: sessionId, Status: 'duplicate' };
  }

  private async settleHandlers(
    record: JobRecord<FulfillmentRequestedEvent>,
    outcome: 'done' | 'dead',
    followUps: JobFollowUps,
  ): Promise<void> {
    const order = record.payload;
    if (outcome === 'dead') {
      this.logger.error(
        `Fulfillment of order ${order.orderId} gave up after ${record.attempts} attempt(s); reporting "failed"`,
      );
      await this.reportOutcome(
        order.orderId,
        order.sessionId,
        'failed',
        null,
        'handler',
        order.account,
        followUps,
      );
      return;
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
    await this.reportOutcome(
      order.orderId,
      order.sessionId,
      combined.status,
      metaData,
      'handler',
      order.account,
      followUps,
    );
  }

  /**
   * The fulfillment job's gate, asked before every run of it. An order whose outcome was reported
   * (`failed` when its handlers gave up, or anything by `complete()`) never runs again: a replay
   * of it stays dead. Otherwise the order claims its session's one delivery; when another OrderId
   * has it, this one runs no handler and is told that order's outcome (now, or when reported).
   */
  private async admit(
    order: FulfillmentRequestedEvent,
    /** Read along with the job's record (gateRead); absent for a replay's check. */
    read?: Promise<JobRecord<StoredCallback> | undefined>,
  ): Promise<JobRefusal | undefined> {
    // A recorded callback never queued (the queue was down when it was reported) is queued now.
    const reported = await (read ??
      this.pipeline.resend<StoredCallback>(SERVICE_APP_JOBS.callback, order.orderId));
    if (reported) {
      const status = callbackOf(reported).ServiceStatus;
      return {
        outcome: status === 'failed' ? 'dead' : 'done',
        reason: `order ${order.orderId} was already reported "${status}" to the platform: its handlers do not run again`,
      };
    }
    const turn = await this.deliveries.enter(order.sessionId, order.orderId);
    if (turn.deliver) return undefined;
    if (turn.outcome) {
      const { ServiceStatus, MetaData } = turn.outcome;
      await this.callbacks.report(
        order.orderId,
        order.sessionId,
        ServiceStatus,
        MetaData,
        'handler',
        order.account,
      );
    }
    return {
      outcome: 'done',
      reason: `session ${order.sessionId} is delivered under order ${turn.delivering}: order ${order.orderId} gets its outcome, not a second delivery`,
    };
  }

  /**
   * Reports an order's outcome (first one wins) and, for the order delivering its session, the
   * same outcome for the session's other OrderIds. Repeated after a crash, it mirrors what was
   * recorded first.
   */
  private async reportOutcome(
    orderId: string,
    sessionId: string,
    status: FulfillmentServiceStatus,
    metaData: unknown,
    by: 'handler' | 'app',
    account: string | undefined,
    /** From the fulfillment job's `beforeSettled`: the callbacks are sent once it is settled. */
    follow?: JobFollowUps,
  ): ReturnType<FulfillmentCallbacks['report']> {
    const reported = await this.callbacks.report(orderId, sessionId, status, metaData, by, account, follow);
    const outcome = reported.ok ? { ServiceStatus: status, MetaData: metaData ?? null } : reported.existing;
    const others = await this.deliveries.settle(sessionId, orderId, outcome);
    // A session's orders are one account's (its cart's): each is reported with that account.
    for (const other of others)
      await this.callbacks.report(
        other,
        sessionId,
        outcome.ServiceStatus,
        outcome.MetaData,
        by,
        account,
        follow,
      );
    return reported;
  }
}

/** ` (account north)` in a log line of a named account's order. */
function accountLabel(order: { account?: string }): string {
  const account = accountOf(order);
  return account === HUBTEL_DEFAULT_ACCOUNT ? '' : ` (account ${account})`;
}

/**
 * The orders of one account (`fulfillment.forAccount(name)`, `@InjectFulfillment(name)`): the
 * same calls as FulfillmentService, refusing another account's orders.
 */
export class FulfillmentAccount {
  /** @internal Made by the module (`forAccount`, `@InjectFulfillment(name)`). */
  constructor(
    /** The account's name. */
    readonly account: string,
    private readonly accounts: ServiceAppAccounts,
  ) {}

  private get fulfillment(): FulfillmentService {
    return this.accounts.fulfillment;
  }

  /**
   * FulfillmentService.complete() for an order of this account; another account's order is
   * refused (ServiceAppWrongAccountError, HUBTEL_WRONG_ACCOUNT), nothing reported.
   */
  async complete(orderId: string, status: FulfillmentServiceStatus, metaData: unknown = null): Promise<void> {
    await this.known();
    return this.fulfillment.completeFor(this.account, orderId, status, metaData);
  }

  /** Where an order of this account stands (undefined when unknown, expired, or another account's). */
  async getOrder(orderId: string): Promise<FulfillmentOrderStatus | undefined> {
    await this.known();
    const order = await this.fulfillment.getOrder(orderId);
    return order && (order.account ?? HUBTEL_DEFAULT_ACCOUNT) === this.account ? order : undefined;
  }

  /** The cart a session of this account ended with, while it is kept (another account's: undefined). */
  async getCart(sessionId: string): Promise<StoredCart | undefined> {
    await this.known();
    const cart = await this.fulfillment.getCart(sessionId);
    return cart && accountOf(cart) === this.account ? cart : undefined;
  }

  /** Rejects with ServiceAppUnknownAccountError when no account has this name. */
  private async known(): Promise<void> {
    await this.accounts.get(this.account);
  }
}
