/* The options of a sandbox (HubtelSandbox.start, SandboxModule.forRoot) and what they name. */

export interface SandboxCredentialPair {
  clientId: string;
  clientSecret: string;
}

/** One named account of a sandbox serving several (`accounts` option). */
export interface SandboxAccountOptions {
  /** Lower-case letters, digits, `-` and `_`, starting with a letter (`north`); not `default`. */
  name: string;
  /**
   * Its key pairs. Default `sandbox-<name>-api` / `sandbox-<name>-api-secret` and
   * `sandbox-<name>-sms` / `sandbox-<name>-sms-secret`; `callback` as on the default account.
   */
  credentials?: {
    sms?: SandboxCredentialPair;
    api?: SandboxCredentialPair;
    callback?: SandboxCredentialPair;
  };
  /** Its POS Sales ID (merchant account number). Default `2000000` + its 1-based place in `accounts`. */
  posSalesId?: string;
  /** Sender ids its SMS keys may send from. Default none: any sender that no other account declares. */
  senderIds?: string[];
  /** Name on its payment page. Default the top-level `checkout.merchantName`. */
  merchantName?: string;
  /** Who bears the platform's charge on its payments. Default the top-level `checkout.chargeBearer`. */
  chargeBearer?: SandboxChargeBearer;
}

/**
 * Who bears the platform's charge on a payment (both happen, per merchant account):
 * - `merchant`: the payer pays the price; the charge is deducted (status check `amount` = the
 *   price, `amountAfterCharges` = price − charges);
 * - `payer`: the charge is added to what the payer pays (`amount` = price + charges,
 *   `amountAfterCharges` = the price), as in Hubtel's 2026 fulfillment-request sample.
 */
export type SandboxChargeBearer = 'merchant' | 'payer';

/** An account the sandbox serves, as `sandbox.accounts()` reports it. */
export interface SandboxAccount {
  /** `default` for the top-level options' account. */
  name: string;
  credentials: { sms: SandboxCredentialPair; api: SandboxCredentialPair; callback?: SandboxCredentialPair };
  posSalesId: string;
  /** Empty: any sender that no other account declares. */
  senderIds: string[];
  merchantName: string;
  /** Who bears the charge on its payments (`sandbox.setChargeBearer()` changes it). */
  chargeBearer: SandboxChargeBearer;
}

/** Picks the records of one account (`sandbox.messages({ account: 'north' })`). */
export interface SandboxAccountFilter {
  /** Account name (`default` for the top-level options' account). */
  account?: string;
}

/** Anything with Nest's `Logger` methods (a Nest `Logger`, `console`). */
export interface SandboxLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug?(message: string): void;
}

export interface SandboxSmsOptions {
  /** Most recipients accepted in one batch (400, sub-code 7, beyond). Default 10,000. */
  maxRecipients?: number;
  /** Longest `Content` accepted (400, sub-code 3, beyond). Default 1530. */
  maxContentLength?: number;
  /** Longest `From` accepted (400, sub-code 2, beyond). Default 11. */
  maxSenderLength?: number;
  /** Value of the `rate` fields. Default 0.0309. */
  rate?: number;
  /** Milliseconds before a message reads `Delivered` (until then `Submitted`). Default 0. */
  deliveryDelayMs?: number;
  /**
   * Sender ids (`From`) the default account's SMS keys may send from; any other is refused (400,
   * sub-code 2). Default none: any sender that no other account declares.
   */
  senderIds?: string[];
}

export interface SandboxCheckoutOptions {
  /** Name shown on the hosted payment page. Default `Sandbox Merchant`. */
  merchantName?: string;
  /** Fee rate used for `charges` in the status check. Default 0.01. */
  chargeRate?: number;
  /** Who bears the charge (see SandboxChargeBearer), for every account that does not say. Default `merchant`. */
  chargeBearer?: SandboxChargeBearer;
  /** Smallest `totalAmount` accepted; below it `4070` (fees not set / amount below minimum). Default none. */
  minAmount?: number;
  /** Fail payments (2001) of invoices whose description contains `& * ! % @`, like the platform. Default true. */
  rejectSpecialCharacters?: boolean;
  /** Phone pre-filled on the payment page when the invoice names none. */
  defaultPhone?: string;
}

export interface HubtelSandboxOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  /**
   * Origin the sandbox tells others to use (`checkoutUrl`, base URLs), when it differs from the
   * bound address (a container, a tunnel). Default `http://<host>:<port>`.
   */
  publicUrl?: string;
  /**
   * Host names (the `Host` header) the admin API (`/_sandbox`) and the dashboard answer, besides
   * loopback ones (`localhost`, `127.0.0.1`, `::1`), the bound `host` and `publicUrl`'s host.
   * Any other is refused 403, so a web page cannot reach them by re-pointing its own DNS name at
   * the sandbox (DNS rebinding). `['*']` allows any. Default none.
   */
  allowedHosts?: string[];
  /**
   * Credentials the sandbox accepts (the default account's). Default
   * {@link SANDBOX_DEFAULT_CREDENTIALS}. `callback`: a Basic-auth pair the fulfillment callbacks of
   * this account's sessions must carry (the contract shows none, so by default none is asked).
   */
  credentials?: {
    sms?: SandboxCredentialPair;
    api?: SandboxCredentialPair;
    callback?: SandboxCredentialPair;
  };
  /** POS Sales ID (merchant account number) of the sandbox merchant. Default `2000000`. */
  posSalesId?: string;
  /**
   * Further Hubtel accounts served at once, each with its own keys, POS Sales ID and sender ids.
   * The options above are the default account (named `default`). One account's keys on another
   * account's POS Sales ID are refused as the platform does (`4101`, `4105` for programmable
   * services), and every record names its account.
   */
  accounts?: SandboxAccountOptions[];
  /** Records kept per kind before the oldest are dropped (counters stay exact). Default 10,000. */
  recordLimit?: number;
  /** Largest request body read, in bytes (413 beyond). Default 1 MiB. */
  maxBodyBytes?: number;
  /** Time-out of the sandbox's own outbound calls (checkout callbacks, fulfillment requests). Default 10 s. */
  outboundTimeoutMs?: number;
  sms?: SandboxSmsOptions;
  checkout?: SandboxCheckoutOptions;
  /**
   * Serve the dashboard at `/_dashboard` (`GET /` redirects there). Default true; false leaves
   * the page out and `GET /` lists the base URLs instead.
   */
  dashboard?: boolean;
  /** Where the sandbox reports problems (a callback that failed, a listener that threw). Default silent. */
  logger?: SandboxLogger;
}

/** The base URLs to plug into the modules' options: all the sandbox's origin. */
export interface SandboxBaseUrls {
  /** `{sms_url}`: SmsModule's base URL. */
  sms: string;
  /** `{checkout_url}`: CheckoutModule's base URL for `/items/initiate`. */
  checkout: string;
  /** Transaction status check base URL (`/transactions/{posSalesId}/status`). */
  status: string;
  /** `{callback_url}`: programmable-services fulfillment callbacks go to `<this>/callback`. */
  fulfillmentCallback: string;
}
