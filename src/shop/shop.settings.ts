import { HUBTEL_DEFAULT_ACCOUNT } from 'nestjs-hubtel';

/** One shop of the app: a Hubtel account of its own (its checkout and its SMS sender). */
export interface Shop {
  /** The Hubtel account it sells through: `default`, or a named account. */
  account: string;
  name: string;
  /** Its page: `/` for the default account's shop, `/shops/<account>` for the others. */
  path: string;
}

/** Shop-wide settings the controllers and listeners read (provided from the app's configuration). */
export class ShopSettings {
  /** The default account's shop first, then one per further account. */
  readonly shops: readonly Shop[];

  constructor(
    readonly shopName: string,
    /** `sandbox` or `hubtel`: the pages say when no real money moves. */
    readonly mode: 'sandbox' | 'hubtel',
    others: ReadonlyArray<{ account: string; name: string }> = [],
  ) {
    this.shops = [
      { account: HUBTEL_DEFAULT_ACCOUNT, name: shopName, path: '/' },
      ...others.map((shop) => ({ ...shop, path: `/shops/${shop.account}` })),
    ];
  }

  /** The shop of an account (an order without one is the default account's). */
  shop(account: string | undefined): Shop | undefined {
    return this.shops.find((shop) => shop.account === (account ?? HUBTEL_DEFAULT_ACCOUNT));
  }

  /** The shop of an account the app knows to have one (an order's). */
  shopOf(account: string | undefined): Shop {
    return this.shop(account) ?? this.shops[0]!;
  }
}
