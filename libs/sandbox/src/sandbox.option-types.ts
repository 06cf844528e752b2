import type {
  SandboxAccountDto,
  SandboxCheckoutOptionsDto,
  SandboxCredentialPairDto,
  SandboxOptionsDto,
  SandboxSmsOptionsDto,
} from './sandbox.options.dto.js';

export interface SandboxCredentialPair extends SandboxCredentialPairDto {}

/** One named account of a sandbox serving several (`accounts` option). */
export interface SandboxAccountOptions extends SandboxAccountDto {}

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

export interface SandboxSmsOptions extends Partial<SandboxSmsOptionsDto> {}

export interface SandboxCheckoutOptions extends Partial<SandboxCheckoutOptionsDto> {}

export interface HubtelSandboxOptions extends Partial<Omit<SandboxOptionsDto, 'sms' | 'checkout'>> {
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
   * Further accounts served at once (the options above are `default`'s); one account's keys on
   * another's POS Sales ID are refused (`4101`, `4105`), and every record names its account.
   */
  accounts?: SandboxAccountOptions[];
  sms?: SandboxSmsOptions;
  checkout?: SandboxCheckoutOptions;
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
