import { HUBTEL_DEFAULT_ACCOUNT } from 'nestjs-hubtel';

/** Injection tokens (the route extras are known before async options resolve). */
export const CHECKOUT_RESOLVED_OPTIONS = Symbol('HUBTEL_CHECKOUT_RESOLVED_OPTIONS');
export const CHECKOUT_STORE = Symbol('HUBTEL_CHECKOUT_STORE');
export const CHECKOUT_PIPELINE = Symbol('HUBTEL_CHECKOUT_PIPELINE');
export const CHECKOUT_TRANSPORT = Symbol('HUBTEL_CHECKOUT_TRANSPORT');
export const CHECKOUT_ACCESS_POLICY = Symbol('HUBTEL_CHECKOUT_ACCESS_POLICY');
export const CHECKOUT_ACCOUNTS = Symbol('HUBTEL_CHECKOUT_ACCOUNTS');

/** Name of the account `forRoot` / `forRootAsync` configure (an invoice without `account` is its). */
export const CHECKOUT_DEFAULT_ACCOUNT = HUBTEL_DEFAULT_ACCOUNT;

/** `@InjectCheckout(name)`'s token. */
export function getCheckoutAccountToken(name: string): symbol {
  return Symbol.for(`nestjs-hubtel:checkout-account:${name}`);
}

export const CHECKOUT_PIPELINE_NAME = 'checkout';
/** A callback waiting for the status check to confirm it. */
export const CHECKOUT_CONFIRM_JOB = 'hubtel.checkout.confirm';
export const CHECKOUT_KEY_PREFIX = 'hubtel:checkout:';
export const CHECKOUT_INVOICE_PREFIX = `${CHECKOUT_KEY_PREFIX}invoice:`;
export const CHECKOUT_WATCH_PREFIX = `${CHECKOUT_KEY_PREFIX}watch:`;

export const CHECKOUT_DEFAULT_CALLBACK_PATH = 'hubtel/checkout/callback';

/** Every invoice's currency (platform facts): a payment in another is not this invoice's. */
export const CHECKOUT_CURRENCY = 'GHS';

export const CLIENT_REFERENCE_MAX_LENGTH = 32;
/** `clientReference`: printable ASCII, no spaces (the platform's references are such). */
export const PRINTABLE_REFERENCE = /^[\x21-\x7e]+$/;
export const NOT_BLANK = /\S/;

/** Characters of a description that make the platform fail the payment (2001, platform facts). */
export const DESCRIPTION_FORBIDDEN_CHARACTERS = ['&', '*', '!', '%', '@'] as const;

export const CHECKOUT_DEFAULTS = Object.freeze({
  /** Hubtel asks merchants to check the status when no callback came within 5 minutes. */
  reconcileDelayMs: 5 * 60_000,
  /** How often the reconciler looks for invoices due for a check; also the first re-check spacing. */
  reconcileIntervalMs: 60_000,
  /** Re-checks of one invoice back off (doubling) up to this spacing. */
  reconcileMaxIntervalMs: 60 * 60_000,
  /** After this long an unpaid invoice is given up on (`expired` event) and no longer checked. */
  reconcileGiveUpAfterMs: 24 * 3600_000,
  /** Checks of one unpaid invoice (anyone can create invoices): 5, 6, 8, 12, 20, 36, 68 min, 24 h. */
  reconcileMaxChecks: 8,
  /** Re-checks of a callback's payment the status check does not show yet (it can lag): 2 s, 4 s, 8 s. */
  recheckAttempts: 3,
  recheckDelayMs: 2_000,
  recheckMaxDelayMs: 10_000,
  /** One invoice's paid callbacks are checked at most this often, however many copies a forger sends. */
  recheckMinIntervalMs: 10_000,
  /** A finished confirmation round's record (not 7 days: forged rounds must not hold keys for days). */
  confirmRecordTtlMs: 2 * 3600_000,
  /** Status checks run at once by one reconciliation pass. */
  reconcileConcurrency: 4,
  /** Invoices are kept this long (they are what verifies a callback). */
  invoiceTtlMs: 30 * 24 * 3600_000,
  /** Callback bodies are a few hundred bytes; anything far larger is not the platform. */
  maxCallbackBodyBytes: 64 * 1024,
});
