/** `ctx.addToCart()`: the cart written under the SessionId for its fulfillment request. */
import { maskMsisdn, type HubtelStore } from 'nestjs-hubtel';
import { accountOf, cartKey } from '../service-app.constants.js';
import type { ServiceAppLogger } from '../service-app.logger.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { ServiceFlowResponse } from '../service-app.types.js';
import type { ServiceFlowDefinition } from '../service-flow.context.js';
import type { AddToCartReply, StoredCart } from '../service-flow.types.js';
import { cartResponse, checkCartItem, releaseResponse } from './service-flow.responses.js';
import type { SessionRecord } from './service-flow.session.js';
import type { UssdScreens } from './service-flow.ussd.js';

export class FlowCart {
  constructor(
    private readonly store: HubtelStore,
    private readonly ussd: UssdScreens,
    private readonly options: ResolvedServiceAppOptions,
    private readonly logger: ServiceAppLogger,
  ) {}

  async add(
    flow: ServiceFlowDefinition,
    sessionId: string,
    session: SessionRecord,
    step: string,
    reply: AddToCartReply,
    data: Record<string, unknown>,
    finish: () => Promise<void>,
  ): Promise<ServiceFlowResponse> {
    const item = checkCartItem(step, reply?.message, reply?.item);
    // A session's goods go out once whatever its carts: fulfillment.delivery.ts keeps that.
    const cart: StoredCart = {
      sessionId,
      flow: flow.name,
      serviceCode: session.serviceCode,
      mobile: session.mobile,
      item,
      data,
      createdAt: new Date().toISOString(),
    };
    if (session.operator !== undefined) cart.operator = session.operator;
    if (session.account !== undefined) cart.account = session.account;
    const written = await this.store.setIfAbsent(cartKey(sessionId), cart, { ttlMs: this.options.cartTtlMs });
    await finish();
    if (!written && !(await this.same(cartKey(sessionId), cart))) {
      // The SessionId was started again while its cart stood: the cart it has is the one paid for.
      this.logger.warn(
        `Session ${sessionId} already has a cart; another one (for ${maskMsisdn(session.mobile)}) was not written`,
      );
      return releaseResponse(sessionId, this.options.messages.sessionExpired);
    }
    if (this.logger.isLevelEnabled('debug')) {
      this.logger.debug(
        `Session ${sessionId} added "${item.ItemName}" x${item.Qty} at ${item.Price} to the cart`,
      );
    }
    const label = reply.label ?? reply.message;
    if (!session.ussd) return cartResponse(sessionId, reply.message, label, item);
    const shown = this.ussd.shownText(true, session.flow, step, reply.message);
    return cartResponse(sessionId, shown, label, item, 'Release');
  }

  /** Whether the cart stored under `key` is `cart` again (a repeated answer), not another one. */
  private async same(key: string, cart: StoredCart): Promise<boolean> {
    const kept = (await this.store.get<StoredCart | null>(key))?.value;
    return (
      !!kept &&
      kept.mobile === cart.mobile &&
      accountOf(kept) === accountOf(cart) &&
      JSON.stringify(kept.item) === JSON.stringify(cart.item)
    );
  }
}
