/** Shop-wide settings the controllers and listeners read (provided from the app's configuration). */
export class ShopSettings {
  constructor(
    readonly shopName: string,
    /** `sandbox` or `hubtel`: the pages say when no real money moves. */
    readonly mode: 'sandbox' | 'hubtel',
  ) {}
}
