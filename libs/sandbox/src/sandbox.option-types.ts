export interface SandboxCredentialPair {
  clientId: string;
  clientSecret: string;
}

/** One named account of a sandbox serving several (`accounts` option). */
export interface SandboxAccountOptions {
  /** Lower-case letters, digits, `-` and `_`, starting with a letter (`north`); not `default`. */
  name: string;
  /** Its key pairs. Default `sandbox-<name>-api` / `-api-secret`, `sandbox-<name>-sms` / `-sms-secret`. */
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
 * Who bears the platform's charge: `merchant` (deducted: `amount` = price, `amountAfterCharges` =
 * price − charges) or `payer` (added: `amount` = price + charges, `amountAfterCharges` = price).
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
  /** Sender ids (`From`) the default account may send from (others: 400, sub-code 2). Default any. */
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
  /** Origin to announce (`checkoutUrl`, base URLs) behind a container or tunnel. Default `http://<host>:<port>`. */
  publicUrl?: string;
  /**
   * `Host` names the admin API and dashboard answer besides loopback, `host` and `publicUrl`'s;
   * others get 403 (against DNS rebinding). `['*']` allows any. Default none.
   */
  allowedHosts?: string[];
  /**
   * The default account's credentials. Default {@link SANDBOX_DEFAULT_CREDENTIALS}. `callback`: a
   * Basic-auth pair its fulfillment callbacks must carry (default none).
   */
  credentials?: {
    sms?: SandboxCredentialPair;
    api?: SandboxCredentialPair;
    callback?: SandboxCredentialPair;
  };
  /** POS Sales ID (merchant account number) of the sandbox merchant. Default `2000000`. */
  posSalesId?: string;
  /**
   * Further accounts served at once (the options above are `default`'s); one account's keys on
   * another's POS Sales ID are refused (`4101`, `4105`), and every record names its account.
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
  /** Serve the dashboard at `/_dashboard` (`GET /` redirects there). Default true. */
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
