// What fulfillment needs of the app's accounts, here: importing service-app.accounts.ts makes a circle.
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { FulfillmentServiceStatus } from '../service-app.types.js';
import type { StoredCart } from '../service-flow.types.js';
import type { FulfillmentCallbackClient } from './fulfillment.callback-client.js';
import type { FulfillmentOrderStatus } from './fulfillment.records.js';
import type { PaymentStatusClient } from './fulfillment.status-client.js';

/** What fulfillment reads of one account (service-app.accounts.ts's ServiceAppAccount). */
export interface FulfillmentAccountView {
  readonly name: string;
  readonly options: ResolvedServiceAppOptions;
  readonly status: PaymentStatusClient | undefined;
  readonly callback: FulfillmentCallbackClient;
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
