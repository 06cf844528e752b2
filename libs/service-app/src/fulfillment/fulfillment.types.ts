// What fulfillment needs of an account, here: importing service-app.accounts.ts makes a circle.
import type { HttpTransport, TransactionStatus } from '#internal';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';

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
