// The cart a fulfillment request names becomes the order. Not claimed per OrderId: the delivering
// OrderId is decided once paid (fulfillment.delivery.ts), so a made-up one cannot lock out the real one.
import type { HubtelStore, StoreEntry } from 'nestjs-hubtel';
import { FulfillmentRejectedError } from './fulfillment.errors.js';
import { cartKey } from '../service-app.constants.js';
import type { ServiceAppLogger } from '../service-app.logger.js';
import type { StoredCart } from '../service-flow.types.js';

export class FulfillmentCarts {
  constructor(
    private readonly store: HubtelStore,
    private readonly logger: ServiceAppLogger,
  ) {}

  /** The cart a session ended with, while it is kept (`cartTtlMs`). */
  async get(sessionId: string): Promise<StoredCart | undefined> {
    return (await this.store.get<StoredCart>(cartKey(sessionId)))?.value;
  }

  /** The session's cart entry (its account decides how a request for it is answered). */
  read(sessionId: string): Promise<StoreEntry<StoredCart> | undefined> {
    return this.store.get<StoredCart>(cartKey(sessionId));
  }

  /** The session's cart (as `read` found it), or a refusal. */
  find(
    orderId: string,
    sessionId: string,
    entry: StoreEntry<StoredCart> | undefined,
    requireCart: boolean,
  ): StoredCart | undefined {
    if (entry) return entry.value;
    if (!requireCart) return undefined;
    this.logger.warn(
      `Fulfillment request for order ${orderId} refused: session ${sessionId} did not end in an AddToCart of this app`,
    );
    throw new FulfillmentRejectedError(
      'UNKNOWN_SESSION',
      `SessionId ${sessionId} did not end in an AddToCart answered by this app (or its cart expired)`,
      404,
    );
  }
}
