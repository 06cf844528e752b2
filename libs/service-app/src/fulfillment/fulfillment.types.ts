/**
 * What fulfillment answers and shows, and what it needs of an account. The account shape is
 * declared here, not imported from service-app.accounts.ts: that file builds accounts from
 * fulfillment's clients, and an import back would make a circle.
 */
import type { JobStatus } from '#internal';
import type { FulfillmentAttention, FulfillmentRejection } from '../service-app.events.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { FulfillmentServiceStatus } from '../service-app.types.js';
import type { StoredCart } from '../service-flow.types.js';
import type { FulfillmentCallbackClient } from './fulfillment.callback-client.js';
import type { PaymentStatusClient } from './fulfillment.status-client.js';

/** What fulfillment reads of one account (service-app.accounts.ts's ServiceAppAccount). */
export interface FulfillmentAccountView {
  readonly name: string;
  readonly options: ResolvedServiceAppOptions;
  /** The account's status check (its key pair and POS Sales ID); undefined without `statusCheck`. */
  readonly status: PaymentStatusClient | undefined;
  /** Posts the fulfillment callback with the account's callback credentials. */
  readonly callback: FulfillmentCallbackClient;
  /** Whether its orders are confirmed with the status check before any handler runs. */
  readonly verifying: boolean;
}

/** What FulfillmentAccount calls on forRoot's FulfillmentService. */
export interface FulfillmentOrders {
  completeFor(
    account: string | undefined,
    orderId: string,
    status: FulfillmentServiceStatus,
    metaData?: unknown,
  ): Promise<void>;
  getOrder(orderId: string): Promise<FulfillmentOrderStatus | undefined>;
  getCart(sessionId: string): Promise<StoredCart | undefined>;
}

/** The application's accounts, as fulfillment uses them (service-app.accounts.ts's ServiceAppAccounts). */
export interface FulfillmentAccounts {
  readonly default: FulfillmentAccountView;
  /** Rejects with ServiceAppUnknownAccountError when no account has this name. */
  get(name: string): Promise<FulfillmentAccountView>;
  attachFulfillment(service: FulfillmentOrders): void;
  readonly fulfillment: FulfillmentOrders;
}

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
