/**
 * The cart a fulfillment request names: it must exist (`requireCart`), and what it holds (item,
 * flow, data) becomes the order. It is no longer claimed per OrderId: which OrderId delivers a
 * session's goods is decided once, when its payment is confirmed (fulfillment.delivery.ts), so a
 * made-up OrderId sent first can no longer lock the platform's own one out of its callback.
 */
import type { HubtelStore, StoreEntry } from 'nestjs-hubtel';
import { FulfillmentRejectedError } from './fulfillment.errors.js';
import type { ServiceAppLogger } from './service-app.logger.js';
import { cartKey } from './service-flow.session.js';
import type { StoredCart } from './service-flow.types.js';

export class FulfillmentCarts {
  constructor(
    private readonly store: HubtelStore,
    private readonly logger: ServiceAppLogger,
  ) {}

  /** The cart a session ended with, while it is kept (`cartTtlMs`). */
  async get(sessionId: string): Promise<StoredCart | undefined> {
    return (await this.store.get<StoredCart>(cartKey(sessionId)))?.value;
  }

  /** The first read of a session's cart, started before it is known to be needed. */
  read(sessionId: string): Promise<StoreEntry<StoredCart> | undefined> {
    return this.store.get<StoredCart>(cartKey(sessionId));
  }

  /** The session's cart (first read started before it is known to be needed), or a refusal. */
  async find(
    orderId: string,
    sessionId: string,
    firstRead: Promise<StoreEntry<StoredCart> | undefined>,
    /** The request's account's `requireCart`. */
    requireCart: boolean,
  ): Promise<StoredCart | undefined> {
    const entry = await firstRead;
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
