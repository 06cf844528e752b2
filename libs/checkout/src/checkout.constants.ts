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
