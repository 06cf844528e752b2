/*
 * Tokens, store keys and defaults of the CheckoutModule, in one place.
 */
import { HUBTEL_DEFAULT_ACCOUNT } from 'nestjs-hubtel';

/** The module's options after validation (`ResolvedCheckoutOptions`). */
export const CHECKOUT_RESOLVED_OPTIONS = Symbol('HUBTEL_CHECKOUT_RESOLVED_OPTIONS');
/** The HubtelStore the module keeps invoices and callback records in. */
export const CHECKOUT_STORE = Symbol('HUBTEL_CHECKOUT_STORE');
/** The module's InboundPipeline (record → de-duplicate → dispatch → retry → dead letter). */
export const CHECKOUT_PIPELINE = Symbol('HUBTEL_CHECKOUT_PIPELINE');
/** The HttpTransport that calls the checkout and status-check APIs. */
export const CHECKOUT_TRANSPORT = Symbol('HUBTEL_CHECKOUT_TRANSPORT');
/** The InboundAccessPolicy guarding the callback route (path secret, IP allow-list). */
export const CHECKOUT_ACCESS_POLICY = Symbol('HUBTEL_CHECKOUT_ACCESS_POLICY');
/** The route extras (`callback: { path, disabled }`), known before async options resolve. */
export const CHECKOUT_ROUTE = Symbol('HUBTEL_CHECKOUT_ROUTE');

/** The application's CheckoutAccounts, once `forRoot` has attached the default account. */
export const CHECKOUT_ACCOUNTS = Symbol('HUBTEL_CHECKOUT_ACCOUNTS');

/** Name of the account `forRoot` / `forRootAsync` configure (an invoice without `account` is its). */
export const CHECKOUT_DEFAULT_ACCOUNT = HUBTEL_DEFAULT_ACCOUNT;

/** Injection token of the service bound to account `name` (`@InjectCheckout(name)` uses it). */
export function getCheckoutAccountToken(name: string): symbol {
  return Symbol.for(`nestjs-hubtel:checkout-account:${name}`);
}

/** Logger context of an account's transport: `HubtelCheckout` / `HubtelCheckout[north]`. */
export function checkoutLoggerContext(account: string): string {
  return account === CHECKOUT_DEFAULT_ACCOUNT ? 'HubtelCheckout' : `HubtelCheckout[${account}]`;
}

/** Name of the module's pipeline: store keys of its jobs start with `hubtel:checkout:job:`. */
export const CHECKOUT_PIPELINE_NAME = 'checkout';
/** Job type of a callback waiting for the status check to confirm it (its dead letters carry this type). */
export const CHECKOUT_CONFIRM_JOB = 'hubtel.checkout.confirm';
/** Every key the module writes starts with this. */
export const CHECKOUT_KEY_PREFIX = 'hubtel:checkout:';
export const CHECKOUT_INVOICE_PREFIX = `${CHECKOUT_KEY_PREFIX}invoice:`;
/** Index of invoices the reconciler still watches (pending or failed). */
export const CHECKOUT_WATCH_PREFIX = `${CHECKOUT_KEY_PREFIX}watch:`;

/** Default route of the web callback (`POST /hubtel/checkout/callback`). */
export const CHECKOUT_DEFAULT_CALLBACK_PATH = 'hubtel/checkout/callback';

/**
 * The currency of every invoice: the initiate request carries none, and the platform's checkout is
 * in Ghana cedis (platform facts). A status check in another currency is not this invoice's payment.
 */
export const CHECKOUT_CURRENCY = 'GHS';

/** The contract's limit on `clientReference`. */
export const CLIENT_REFERENCE_MAX_LENGTH = 32;
/** `clientReference`: printable ASCII, no spaces (the platform's references are such). */
export const PRINTABLE_REFERENCE = /^[\x21-\x7e]+$/;
/** A text option or field that must not be blank. */
export const NOT_BLANK = /\S/;

/**
 * Characters that make the platform fail payments (code 2001) when they appear in an invoice's
 * description (platform facts).
 */
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
  /**
   * Status checks of one unpaid invoice, at most (the last one at `giveUpAfterMs`): each invoice
   * anyone can create costs the merchant's status-check budget a bounded amount. With the other
   * defaults: at 5, 6, 8, 12, 20, 36 and 68 minutes, then at 24 h.
   */
  reconcileMaxChecks: 8,
  /**
   * A status check that does not yet show a callback's payment (the platform's check can lag
   * behind its own callback) is asked again this many times, `recheckDelayMs` apart at first,
   * doubling up to `recheckMaxDelayMs`: 2 s, 4 s, 8 s.
   */
  recheckAttempts: 3,
  recheckDelayMs: 2_000,
  recheckMaxDelayMs: 10_000,
  /**
   * One invoice's paid callbacks are status-checked at most this often (6 a minute), however many
   * copies come: a flood for a reference anyone may forge costs the merchant's rate-limited check
   * little, and a genuine callback behind it waits at most this long for its check.
   */
  recheckMinIntervalMs: 10_000,
  /**
   * A finished confirmation round's record is kept this long (not the pipeline's 7 days): once
   * the round ended the invoice has moved past its key, so the record only serves a person
   * looking at recent rounds, and a flood of forged rounds must not hold keys for days.
   */
  confirmRecordTtlMs: 2 * 3600_000,
  /** Status checks run at once by one reconciliation pass. */
  reconcileConcurrency: 4,
  /** Invoices are kept this long (they are what verifies a callback). */
  invoiceTtlMs: 30 * 24 * 3600_000,
  /** Callback bodies are a few hundred bytes; anything far larger is not the platform. */
  maxCallbackBodyBytes: 64 * 1024,
});
