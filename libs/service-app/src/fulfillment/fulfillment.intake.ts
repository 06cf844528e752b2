// A fulfillment request taken in: checked against its cart and account, recorded once per OrderId.
// The cart is not claimed per OrderId: the delivering OrderId is decided once paid
// (fulfillment.delivery.ts), so a made-up one cannot lock out the real one.
import { HUBTEL_DEFAULT_ACCOUNT, maskMsisdn, type HubtelStore, type HubtelLogger } from 'nestjs-hubtel';
import type { InboundPipeline } from '#internal';
import { SERVICE_APP_JOBS, accountOf, cartKey } from '../service-app.constants.js';
import type { FulfillmentRequestDto } from '../service-app.dto.js';
import { ServiceAppWrongAccountError } from '../service-app.errors.js';
import type { FulfillmentRequestedEvent } from '../service-app.events.js';
import { isoNow } from '../service-app.time.js';
import { readOrderClaims } from '../fulfillment.claims.js';
import { FulfillmentRejectedError } from './fulfillment.errors.js';
import type { FulfillmentReceipt, OrderSummary } from './fulfillment.records.js';
import type { FulfillmentAccountView } from './fulfillment.types.js';
import type { StoredCart } from '../service-flow.types.js';

export class FulfillmentIntake {
  constructor(
    private readonly pipeline: InboundPipeline,
    private readonly store: HubtelStore,
    private readonly logger: HubtelLogger,
  ) {}

  async accept(request: FulfillmentRequestDto, account: FulfillmentAccountView): Promise<FulfillmentReceipt> {
    const { OrderId: orderId, SessionId: sessionId } = request;
    // Verified first when it can be: the payment job submits the fulfillment job once confirmed.
    const job = account.verifying ? SERVICE_APP_JOBS.payment : SERVICE_APP_JOBS.fulfillment;
    // A new OrderId costs the cart's read and the set-if-absent, which finds a duplicate. Read first
    // only when that cannot: a verifying account's order known as its fulfillment job, and a known
    // order its cart would refuse. Through the pipeline (`resend`): a job that never ran is asked again.
    const cartRead = this.store.get<StoredCart>(cartKey(sessionId));
    const delivered = account.verifying
      ? this.pipeline.resend<OrderSummary>(SERVICE_APP_JOBS.fulfillment, orderId)
      : undefined;
    cartRead.catch(() => undefined); // awaited below; not left unhandled while the other is awaited
    let known = await delivered;
    const entry = await cartRead;
    const refused = entry ? accountOf(entry.value) !== account.name : account.options.requireCart;
    if (!known && refused) known = await this.pipeline.resend<OrderSummary>(job, orderId);
    if (known) return this.duplicate(orderId, sessionId, known.payload, account);
    const cart = entry?.value;
    if (cart) this.assertOwn('session', sessionId, cart, account);
    else if (account.options.requireCart) {
      this.logger.warn(
        `Fulfillment request for order ${orderId} refused: session ${sessionId} did not end in an AddToCart of this app`,
      );
      throw new FulfillmentRejectedError(
        'UNKNOWN_SESSION',
        `SessionId ${sessionId} did not end in an AddToCart answered by this app (or its cart expired)`,
        404,
      );
    }

    // A literal (one shape for every order), the optional fields added after.
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
    if (result.duplicate) return this.duplicate(orderId, sessionId, result.record.payload, account);
    if (this.logger.isLevelEnabled('log')) {
      const who = order.mobile ? ` for ${maskMsisdn(order.mobile)}` : '';
      const named = account.name === HUBTEL_DEFAULT_ACCOUNT ? '' : ` (account ${account.name})`;
      this.logger.log(
        `Fulfillment request for order ${orderId} (session ${sessionId}, ServiceCode ${order.serviceCode ?? 'unknown'})${who}${named} recorded${account.verifying ? '; confirming its payment' : ''}`,
      );
    }
    return { OrderId: orderId, SessionId: sessionId, Status: 'received' };
  }

  /** An order or cart of another account is refused: 409 HUBTEL_WRONG_ACCOUNT, nothing recorded or run. */
  private assertOwn(
    subject: 'order' | 'session',
    id: string,
    stored: { account?: string | undefined },
    account: FulfillmentAccountView,
  ): void {
    const owner = accountOf(stored);
    if (owner === account.name) return;
    this.logger.warn(
      `Fulfillment request for ${subject} ${id} refused: it belongs to another account than "${account.name}" (the path it came on)`,
    );
    throw new ServiceAppWrongAccountError(subject, id, account.name, owner);
  }

  /** A known OrderId: acknowledged when it is this account's and session's, refused otherwise. */
  private duplicate(
    orderId: string,
    sessionId: string,
    recorded: OrderSummary,
    account: FulfillmentAccountView,
  ): FulfillmentReceipt {
    this.assertOwn('order', orderId, recorded, account);
    if (recorded.sessionId !== sessionId) {
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
}
