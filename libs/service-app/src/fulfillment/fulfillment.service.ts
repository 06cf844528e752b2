import { Inject, Injectable, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import {
  HUBTEL_TELEMETRY,
  HubtelError,
  HubtelValidationError,
  type DeadLetter,
  type HubtelStore,
  type HubtelTelemetry,
} from 'nestjs-hubtel';
import type { InboundPipeline } from '#internal';
import {
  SERVICE_APP_ACCOUNTS,
  SERVICE_APP_JOBS,
  SERVICE_APP_OPTIONS,
  SERVICE_APP_PIPELINE,
  SERVICE_APP_STORE,
  accountOf,
} from '../service-app.constants.js';
import { parseRequest, validateFulfillmentRequest } from '../service-app.dto.js';
import { ServiceAppWrongAccountError } from '../service-app.errors.js';
import {
  ServiceAppEvents,
  combineOutcomes,
  fulfillmentEventFor,
  type FulfillmentRequestedEvent,
} from '../service-app.events.js';
import { ServiceAppLogger, describe } from '../service-app.logger.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import { isoNow } from '../service-app.time.js';
import type { FulfillmentServiceStatus } from '../service-app.types.js';
import type { StoredCart } from '../service-flow.types.js';
import { FulfillmentAccount } from './fulfillment.account.js';
import { FulfillmentCallbacks } from './fulfillment.callbacks.js';
import { FulfillmentCarts } from './fulfillment.cart.js';
import { FulfillmentDeliveries } from './fulfillment.delivery.js';
import { FulfillmentRejectedError } from './fulfillment.errors.js';
import { FulfillmentIntake } from './fulfillment.intake.js';
import { FulfillmentOutcomes, type GateRead } from './fulfillment.outcomes.js';
import { FulfillmentPaymentCheck, PAYMENT_ATTEMPTS } from './fulfillment.payment.js';
import {
  assertJson,
  namedAccount,
  orderStatus,
  unconfirmedOrder,
  type FulfillmentOrderStatus,
  type FulfillmentReceipt,
  type OrderSummary,
  type PaymentSummary,
  type StoredCallback,
} from './fulfillment.records.js';
import type { FulfillmentAccounts, FulfillmentAccountView } from './fulfillment.types.js';

/** Most ServiceCodes whose event lists are kept (see `eventsOf`). */
const EVENT_LISTS_LIMIT = 256;

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
  private readonly carts: FulfillmentCarts;
  private readonly deliveries: FulfillmentDeliveries;
  private readonly payment: FulfillmentPaymentCheck;
  private readonly intake: FulfillmentIntake;
  private readonly outcomes: FulfillmentOutcomes;
  private static readonly catchAllEvents: readonly string[] = Object.freeze([ServiceAppEvents.Fulfillment]);

  constructor(
    @Inject(SERVICE_APP_PIPELINE) private readonly pipeline: InboundPipeline,
    @Inject(SERVICE_APP_STORE) store: HubtelStore,
    @Inject(SERVICE_APP_OPTIONS) private readonly options: ResolvedServiceAppOptions,
    @Inject(SERVICE_APP_ACCOUNTS) private readonly accounts: FulfillmentAccounts,
    @Optional() @Inject(HUBTEL_TELEMETRY) telemetry?: HubtelTelemetry,
  ) {
    // What a registered account's FulfillmentAccount (@InjectFulfillment) calls.
    accounts.attachFulfillment(this);
    this.carts = new FulfillmentCarts(store, this.logger);
    this.deliveries = new FulfillmentDeliveries(store, this.logger);
    this.intake = new FulfillmentIntake(pipeline, this.carts, this.logger);
    const callbacks = new FulfillmentCallbacks(
      pipeline,
      options,
      (job) => accounts.get(accountOf(job)),
      this.logger,
      // The pipeline's emitter: the app's, checked once where the pipeline is made (inboundKit).
      pipeline.emitter,
      telemetry,
    );
    const outcomes = new FulfillmentOutcomes(
      pipeline,
      this.logger,
      pipeline.emitter,
      callbacks,
      this.deliveries,
      telemetry,
    );
    this.outcomes = outcomes;
    this.payment = new FulfillmentPaymentCheck(
      pipeline,
      this.logger,
      // The order's own account, whichever replica runs the job: its keys and POS Sales ID.
      (order) => accounts.get(accountOf(order)),
      (order, reason, message, checks, paid) => outcomes.refuse(order, reason, message, checks, paid),
      (order, attention, payment, checks, status) => outcomes.hold(order, attention, payment, checks, status),
      (order, attention) => outcomes.expire(order, attention),
    );
    // The attention event: a recorded job, so its handlers run once whichever replica found it.
    pipeline.define(ServiceAppEvents.Attention, { compactWhenDone: () => undefined });
    const handlerRetry = options.fulfillmentRetry;
    pipeline.define<FulfillmentRequestedEvent>(SERVICE_APP_JOBS.fulfillment, {
      // Handlers of the order's ServiceCode first, then the catch-all ones.
      events: (order) => this.eventsOf(order.serviceCode),
      // Asked before every run, whatever led to it (retry, takeover, replay from a service method
      // or the command line): the one place that decides whether this order's goods may go out.
      gate: (order, _record, read) => this.outcomes.admit(order, read as Promise<GateRead>),
      // Whether its outcome was reported, read with the order's record (one round trip); at a first
      // start, with the session's delivery claimed instead of the record read.
      gateRead: (orderId, record) => this.outcomes.readGate(orderId, record?.payload),
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
      beforeSettled: (record, outcome, followUps) => this.outcomes.settleHandlers(record, outcome, followUps),
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
        await this.outcomes.refuse(
          order,
          'NOT_CONFIRMED',
          `the status check could not confirm it: ${describe(error)}`,
          record.attempts,
        );
      },
    });
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
  async receive(body: unknown, account?: string | FulfillmentAccountView): Promise<FulfillmentReceipt>;
  async receive(body: unknown, to?: string | FulfillmentAccountView): Promise<FulfillmentReceipt> {
    // Once the app shuts down nothing new is recorded (HubtelShuttingDownError: answer 503).
    this.pipeline.assertAcceptingInbound('fulfillment request');
    const account =
      to === undefined ? this.accounts.default : typeof to === 'string' ? await this.accounts.get(to) : to;
    const request = parseRequest(validateFulfillmentRequest, body, 'fulfillment request');
    try {
      return await this.intake.accept(request, account);
    } catch (error) {
      // Refused at once (unknown session, a cart or OrderId taken): an alert, as a refused payment is.
      if (error instanceof FulfillmentRejectedError) {
        this.outcomes.emitRejected({
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
    assertOrderId('complete', orderId);
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
    const accepted = await this.outcomes.reportOutcome(
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
    assertOrderId('resolveAttention', orderId);
    if (action !== 'deliver' && action !== 'refund')
      throw new HubtelValidationError('resolveAttention(): action must be "deliver" or "refund"', [
        { field: 'action', message: 'must be "deliver" or "refund"', value: action },
      ]);
    await this.outcomes.resolveAttention(orderId, action);
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
    return this.outcomes.drain();
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
}

function assertOrderId(method: string, orderId: unknown): void {
  if (typeof orderId !== 'string' || orderId === '')
    throw new HubtelValidationError(`${method}(): orderId must be a non-empty string`, [
      { field: 'orderId', message: 'must be a non-empty string' },
    ]);
}
