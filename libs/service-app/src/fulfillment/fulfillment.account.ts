import { accountOf } from '../service-app.constants.js';
import { HUBTEL_DEFAULT_ACCOUNT } from 'nestjs-hubtel';
import type { FulfillmentServiceStatus } from '../service-app.types.js';
import type { StoredCart } from '../service-flow.types.js';
import type { FulfillmentOrderStatus } from './fulfillment.records.js';
import type { FulfillmentAccounts, FulfillmentOrders } from './fulfillment.types.js';

/** The orders of one account (`forAccount(name)`, `@InjectFulfillment(name)`); another's are refused. */
export class FulfillmentAccount {
  /** @internal Made by the module (`forAccount`, `@InjectFulfillment(name)`). */
  constructor(
    /** The account's name. */
    readonly account: string,
    private readonly accounts: FulfillmentAccounts,
  ) {}

  private get fulfillment(): FulfillmentOrders {
    return this.accounts.fulfillment;
  }

  /** FulfillmentService.complete() for an order of this account (another's: HUBTEL_WRONG_ACCOUNT). */
  async complete(orderId: string, status: FulfillmentServiceStatus, metaData: unknown = null): Promise<void> {
    await this.known();
    return this.fulfillment.completeFor(this.account, orderId, status, metaData);
  }

  /** Where an order of this account stands (undefined when unknown, expired, or another account's). */
  async getOrder(orderId: string): Promise<FulfillmentOrderStatus | undefined> {
    await this.known();
    const order = await this.fulfillment.getOrder(orderId);
    return order && (order.account ?? HUBTEL_DEFAULT_ACCOUNT) === this.account ? order : undefined;
  }

  /** The cart a session of this account ended with, while it is kept (another account's: undefined). */
  async getCart(sessionId: string): Promise<StoredCart | undefined> {
    await this.known();
    const cart = await this.fulfillment.getCart(sessionId);
    return cart && accountOf(cart) === this.account ? cart : undefined;
  }

  /** Rejects with ServiceAppUnknownAccountError when no account has this name. */
  private async known(): Promise<void> {
    await this.accounts.get(this.account);
  }
}
