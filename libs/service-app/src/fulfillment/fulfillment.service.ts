import { Inject, Injectable, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import {
  HUBTEL_TELEMETRY,
  HubtelError,
  HubtelValidationError,
  type DeadLetter,
  type HubtelStore,
  type HubtelTelemetry,
  HubtelLogger,
} from 'nestjs-hubtel';
import { describeError, parseInbound, type InboundPipeline } from '#internal';
import {
  SERVICE_APP_ACCOUNTS,
  SERVICE_APP_JOBS,
  SERVICE_APP_OPTIONS,
  SERVICE_APP_PIPELINE,
  SERVICE_APP_STORE,
  accountOf,
  cartKey,
} from '../service-app.constants.js';
import { validateFulfillmentRequest } from '../service-app.dto.js';
import { ServiceAppWrongAccountError } from '../service-app.errors.js';
import {
  ServiceAppEvents,
  combineOutcomes,
  fulfillmentEventFor,
  type FulfillmentRequestedEvent,
} from '../service-app.events.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { FulfillmentServiceStatus } from '../service-app.types.js';
import type { StoredCart } from '../service-flow.types.js';
import { FulfillmentCallbacks } from './fulfillment.callbacks.js';
import { FulfillmentDeliveries } from './fulfillment.delivery.js';
import { FulfillmentRejectedError } from './fulfillment.errors.js';
import { FulfillmentIntake } from './fulfillment.intake.js';
import { FulfillmentOutcomes, type GateRead } from './fulfillment.outcomes.js';
import { FulfillmentPaymentCheck, PAYMENT_ATTEMPTS } from './fulfillment.payment.js';
import {
  assertJson,
  namedAccount,
  orderStatus,
  type FulfillmentOrderStatus,
  type FulfillmentReceipt,
  type OrderSummary,
  type PaymentSummary,
  type StoredCallback,
} from './fulfillment.records.js';
import type { FulfillmentAccountView } from './fulfillment.types.js';

const EVENT_LISTS_LIMIT = 256;

/**
 * Fulfillment of paid orders, exactly once per OrderId: request → record (set-if-absent) → 200, then
 * the payment's status check (when `statusCheck` is set), the @OnFulfillment handlers and the callback.
 * Inject it to report deferred deliveries: `complete(orderId, 'success')`.
 */
@Injectable()
export class FulfillmentService implements OnApplicationBootstrap {
  private readonly logger = new HubtelLogger('HubtelServiceApp');
  private readonly eventLists = new Map<string, readonly string[]>();
  private readonly deliveries: FulfillmentDeliveries;
  private readonly payment: FulfillmentPaymentCheck;
  private readonly intake: FulfillmentIntake;
  private readonly outcomes: FulfillmentOutcomes;
  private static readonly catchAllEvents: readonly string[] = Object.freeze([ServiceAppEvents.Fulfillment]);

  constructor(
    @Inject(SERVICE_APP_PIPELINE) private readonly pipeline: InboundPipeline,
    @Inject(SERVICE_APP_STORE) private readonly store: HubtelStore,
    @Inject(SERVICE_APP_OPTIONS) private readonly options: ResolvedServiceAppOptions,
    @Inject(SERVICE_APP_ACCOUNTS) private readonly accounts: FulfillmentAccounts,
    @Optional() @Inject(HUBTEL_TELEMETRY) telemetry?: HubtelTelemetry,
  ) {
    accounts.attachFulfillment(this);
    this.deliveries = new FulfillmentDeliveries(store, this.logger);
    this.intake = new FulfillmentIntake(pipeline, store, this.logger);
    // A job's own account, whichever replica runs it: its keys, POS Sales ID, callback credentials.
    const own = (job: { account?: string }) => accounts.get(accountOf(job));
    const callbacks = new FulfillmentCallbacks(pipeline, options, own, this.logger, telemetry);
    this.outcomes = new FulfillmentOutcomes(pipeline, this.logger, callbacks, this.deliveries, telemetry);
    this.payment = new FulfillmentPaymentCheck(pipeline, this.logger, own, this.outcomes);
    // The attention event: a recorded job, so its handlers run once whichever replica found it.
    pipeline.define(ServiceAppEvents.Attention, { compactWhenDone: () => undefined });
    pipeline.define<FulfillmentRequestedEvent>(SERVICE_APP_JOBS.fulfillment, {
      events: (order) => this.eventsOf(order.serviceCode),
      // Asked before every run (retry, takeover, replay): the one place that decides whether goods go out.
      gate: (order, _record, read) => this.outcomes.admit(order, read as Promise<GateRead>),
      // Read with the order's record in one round trip (at a first start: the session's delivery claim).
      gateRead: (orderId, record) => this.outcomes.readGate(orderId, record?.payload),
      // No handler at all must not be reported as a success: retried, then `failed`.
      requireListener: true,
      keepResults: true,
      retry: options.fulfillmentRetry,
      // Kept 7 days once done so a re-sent OrderId stays a duplicate; only what getOrder reads is kept.
      compactWhenDone: (order, record): OrderSummary => {
        const summary: OrderSummary = { sessionId: order.sessionId, serviceCode: order.serviceCode };
        if (combineOutcomes(record.results).kind === 'deferred') summary.deferred = true;
        if (namedAccount(order.account) !== undefined) summary.account = order.account;
        return summary;
      },
      // A callback that could not be recorded or queued keeps the job pending (retried for that alone).
      beforeSettled: (record, outcome, followUps) => this.outcomes.settleHandlers(record, outcome, followUps),
    });
    pipeline.define<FulfillmentRequestedEvent>(SERVICE_APP_JOBS.payment, {
      // Re-checks are deferrals on a fixed schedule; the retry policy covers only runs that fail.
      run: (order, context) => this.payment.run(order, context),
      retry: { maxAttempts: PAYMENT_ATTEMPTS, ...options.verification.recheckDelay },
      compactWhenDone: (order, record): PaymentSummary => this.payment.summary(order, record),
      doneTtlMs: (record) => this.payment.doneTtlMs(record),
      onSettled: async (record, outcome, error) => {
        if (outcome === 'done') return;
        const why = `the status check could not confirm it: ${describeError(error)}`;
        await this.outcomes.refuse(record.payload, 'NOT_CONFIRMED', why, record.attempts);
      },
    });
  }

  /** Said at start-up (once the app's logger is in place), not per request. */
  onApplicationBootstrap(): void {
    if (this.accounts.default.verifying) return;
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

  /** The orders of account `name` (another's: HUBTEL_WRONG_ACCOUNT; unknown name: HUBTEL_UNKNOWN_ACCOUNT). */
  forAccount(name: string): FulfillmentAccount {
    return new FulfillmentAccount(name, this.accounts);
  }

  /**
   * Takes one fulfillment request (the body as received): validates, checks its cart, records it and
   * returns; handlers run after; a duplicate OrderId runs nothing. Throws HubtelValidationError or
   * FulfillmentRejectedError. `account`: whose endpoint it came to (default: the default account).
   */
  async receive(body: unknown, account?: string): Promise<FulfillmentReceipt>;
  /** @internal The controller passes the account it routed the request to. */
  async receive(body: unknown, account?: string | FulfillmentAccountView): Promise<FulfillmentReceipt>;
  async receive(body: unknown, to?: string | FulfillmentAccountView): Promise<FulfillmentReceipt> {
    // Once the app shuts down nothing new is recorded (HubtelShuttingDownError: answer 503).
    this.pipeline.assertAcceptingInbound('fulfillment request');
    const account =
      to === undefined ? this.accounts.default : typeof to === 'string' ? await this.accounts.get(to) : to;
    const request = parseInbound(validateFulfillmentRequest, body, 'fulfillment request');
    try {
      return await this.intake.accept(request, account);
    } catch (error) {
      // Refused at once (unknown session, a cart or OrderId taken): an alert, as a refused payment is.
      if (error instanceof FulfillmentRejectedError) {
        const { OrderId: orderId, SessionId: sessionId } = request;
        const order = { orderId, sessionId, serviceCode: null, item: null, account: account.name };
        void this.outcomes.alert(order, error.reason, error.message, 0);
      }
      throw error;
    }
  }

  /** Reports an order's outcome yourself (same status again: no-op; another: HUBTEL_STORE_CONFLICT). */
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
    if (status !== 'success' && status !== 'failed')
      throw new HubtelValidationError(
        `complete(): status must be "success" or "failed", got ${JSON.stringify(status)}`,
        [{ field: 'status', message: 'must be "success" or "failed"' }],
      );
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
    const ref = { orderId: delivering, sessionId, account: order.payload.account };
    const accepted = await this.outcomes.reportOutcome(ref, status, metaData, 'app');
    if (!accepted.ok) {
      if (accepted.existing.ServiceStatus === status) return;
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `complete(): order ${orderId} was already reported as "${accepted.existing.ServiceStatus}"; it cannot be reported as "${status}"`,
      );
    }
  }

  /** Jobs of this module that gave up, oldest first (payment checks, handlers, callbacks). */
  listDeadLetters(): Promise<DeadLetter[]> {
    return this.pipeline.listDeadLetters();
  }

  /**
   * Runs a dead letter again, now (only the handlers that failed). The order's gate still decides:
   * an order reported `failed` is never delivered; a refused replay throws JobRefusedError.
   * @throws HubtelDeadLetterNotFoundError (`HUBTEL_NOT_FOUND`: unknown id),
   *   HubtelNotDeadLetterError (`HUBTEL_STORE_CONFLICT`: not dead).
   */
  async replayDeadLetter(id: string): Promise<void> {
    await this.pipeline.replayDeadLetter(id);
  }

  /**
   * Resolves an order whose payment needs attention, before `attention.decideBy`: `deliver` runs its
   * handlers, `refund` reports `failed` now (refund in Hubtel's dashboard). The same way again: no-op.
   * @throws HubtelError `HUBTEL_NOT_FOUND` (unknown order), `HUBTEL_STORE_CONFLICT` (decided otherwise).
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
    if (!order && !payment) return undefined;
    const callback = order && (await this.pipeline.get<StoredCallback>(SERVICE_APP_JOBS.callback, orderId));
    return orderStatus(orderId, order, payment, callback);
  }

  /** Resolves when the rejected events emitted so far have been handled (tests, shutdown). */
  async drainRejections(): Promise<void> {
    return this.pipeline.drainAlerts();
  }

  /** The cart a session ended with, while it is kept (`cartTtlMs`). */
  async getCart(sessionId: string): Promise<StoredCart | undefined> {
    return (await this.store.get<StoredCart>(cartKey(sessionId)))?.value;
  }

  /** Its ServiceCode's event, then the catch-all: one frozen list per ServiceCode, not one per order. */
  private eventsOf(serviceCode: string | null): readonly string[] {
    if (!serviceCode) return FulfillmentService.catchAllEvents;
    const known = this.eventLists.get(serviceCode);
    if (known) return known;
    const events = Object.freeze([fulfillmentEventFor(serviceCode), ServiceAppEvents.Fulfillment]);
    if (this.eventLists.size < EVENT_LISTS_LIMIT) this.eventLists.set(serviceCode, events);
    return events;
  }
}

function assertOrderId(method: string, orderId: unknown): void {
  if (typeof orderId !== 'string' || orderId === '')
    throw new HubtelValidationError(`${method}(): orderId must be a non-empty string`, [
      { field: 'orderId', message: 'must be a non-empty string' },
    ]);
}

/** The application's accounts, as fulfillment uses them (service-app.accounts.ts's ServiceAppAccounts). */
export interface FulfillmentAccounts {
  readonly default: FulfillmentAccountView;
  /** Rejects with ServiceAppUnknownAccountError when no account has this name. */
  get(name: string): Promise<FulfillmentAccountView>;
  attachFulfillment(service: FulfillmentService): void;
  readonly fulfillment: FulfillmentService;
}

/** The orders of one account (`forAccount(name)`, `@InjectFulfillment(name)`); another's are refused. */
export class FulfillmentAccount {
  /** @internal Made by the module (`forAccount`, `@InjectFulfillment(name)`). */
  constructor(
    readonly account: string,
    private readonly accounts: FulfillmentAccounts,
  ) {}

  /** FulfillmentService.complete() for an order of this account (another's: HUBTEL_WRONG_ACCOUNT). */
  async complete(orderId: string, status: FulfillmentServiceStatus, metaData: unknown = null): Promise<void> {
    await this.accounts.get(this.account); // an unknown name: ServiceAppUnknownAccountError
    return this.accounts.fulfillment.completeFor(this.account, orderId, status, metaData);
  }

  /** Where an order of this account stands (undefined when unknown, expired, or another account's). */
  async getOrder(orderId: string): Promise<FulfillmentOrderStatus | undefined> {
    await this.accounts.get(this.account); // an unknown name: ServiceAppUnknownAccountError
    const order = await this.accounts.fulfillment.getOrder(orderId);
    return order && accountOf(order) === this.account ? order : undefined;
  }

  /** The cart a session of this account ended with, while it is kept (another account's: undefined). */
  async getCart(sessionId: string): Promise<StoredCart | undefined> {
    await this.accounts.get(this.account); // an unknown name: ServiceAppUnknownAccountError
    const cart = await this.accounts.fulfillment.getCart(sessionId);
    return cart && accountOf(cart) === this.account ? cart : undefined;
  }
}
