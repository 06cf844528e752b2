// What fulfillment needs of the app's accounts, here: importing service-app.accounts.ts makes a circle.
import type { HttpTransport, TransactionStatus } from '#internal';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { FulfillmentServiceStatus } from '../service-app.types.js';
import type { StoredCart } from '../service-flow.types.js';
import type { FulfillmentOrderStatus } from './fulfillment.records.js';

/** What fulfillment reads of one account (ServiceAppAccount adds its flows and access policy). */
export interface FulfillmentAccountView {
  readonly name: string;
  readonly options: ResolvedServiceAppOptions;
  /** The status check of a SessionId's payment (its key pair, POS Sales ID); none without `statusCheck`. */
  readonly checkPayment: ((sessionId: string) => Promise<TransactionStatus | undefined>) | undefined;
  /** Whether its orders are confirmed with the status check before any handler runs. */
  readonly verifying: boolean;
  /** Its own keys and callback credentials: the status check and the fulfillment callback. */
  readonly transport: HttpTransport;
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
