import type { CheckoutRejectionReason } from './checkout.events.js';
import type { CheckoutInvoice } from './checkout-invoice.store.js';
import type { CheckoutTransactionStatus } from './dto/transaction-status.dto.js';
import type { CheckoutCallbackDto } from './dto/checkout-callback.dto.js';
import type { ResolvedCheckoutOptions } from './checkout.options.js';
import { CHECKOUT_CURRENCY } from './checkout.constants.js';

/** What a callback claims happened. */
export type CallbackClaim = 'paid' | 'failed' | 'pending';

/** What the checks need of the verification options. */
export type AmountVerification = Pick<
  ResolvedCheckoutOptions['verification'],
  'amountTolerance' | 'allowOverpayment'
>;

export type Verdict = { ok: true } | { ok: false; reason: CheckoutRejectionReason; message: string };

const SUCCESS = /^(success|successful|paid|completed)$/i;
const NOT_FINAL = /^(pending|processing|initiated)$/i;

/**
 * Reads the outcome a callback claims. Paid needs both the envelope's `ResponseCode` `0000` and a
 * successful `Data.Status`: a contradiction is never read as money received. `Pending`-like
 * statuses are not final and are ignored; anything else is a failed attempt.
 */
export function classifyCallback(callback: CheckoutCallbackDto): CallbackClaim {
  const status = callback.Data.Status.trim();
  if (NOT_FINAL.test(status)) return 'pending';
  if (callback.ResponseCode.trim() === '0000' && SUCCESS.test(status)) return 'paid';
  return 'failed';
}

/** Money in pesewas (cents), so comparisons are exact. */
function cents(value: number): number {
  return Math.round(value * 100);
}

/**
 * True when `paid` is close enough to `expected`: the larger of the absolute and percent
 * tolerances, both ways; any excess when over-payment is allowed.
 */
export function amountMatches(paid: number, expected: number, verification: AmountVerification): boolean {
  const difference = cents(paid) - cents(expected);
  const { absolute, percent } = verification.amountTolerance;
  const allowed = Math.max(cents(absolute), Math.floor((cents(expected) * percent) / 100 + 1e-9));
  if (difference < -allowed) return false;
  return verification.allowOverpayment || difference <= allowed;
}

function money(value: number): string {
  return value.toFixed(2);
}

/**
 * "Verified before believed": the checks every claim passes before it can count.
 */
export class CheckoutVerifier {
  constructor(private readonly verification: AmountVerification) {}

  /** Checks a callback against the invoice this app recorded for its `ClientReference`. */
  verifyCallback(
    callback: CheckoutCallbackDto,
    claim: CallbackClaim,
    invoice: CheckoutInvoice | undefined,
  ): Verdict {
    const data = callback.Data;
    if (!invoice) {
      return {
        ok: false,
        reason: 'UNKNOWN_REFERENCE',
        message: `No invoice with clientReference "${data.ClientReference}" was created by this app`,
      };
    }
    if (invoice.checkoutId !== undefined && invoice.checkoutId !== data.CheckoutId) {
      return {
        ok: false,
        reason: 'CHECKOUT_ID_MISMATCH',
        message: `CheckoutId "${data.CheckoutId}" is not the checkout id of invoice ${invoice.clientReference}`,
      };
    }
    // A failed attempt may carry no amount (or 0): only a payment's amount must match.
    if (claim === 'paid') {
      if (typeof data.Amount !== 'number' || !amountMatches(data.Amount, invoice.amount, this.verification)) {
        return {
          ok: false,
          reason: 'AMOUNT_MISMATCH',
          message: `Amount ${typeof data.Amount === 'number' ? money(data.Amount) : 'missing'} does not match the ${money(invoice.amount)} invoiced for ${invoice.clientReference}`,
        };
      }
    }
    return { ok: true };
  }

  /** Checks a status-check answer that says Paid against the invoice. */
  verifyPaidStatus(status: CheckoutTransactionStatus, invoice: CheckoutInvoice): Verdict {
    if (status.clientReference !== invoice.clientReference) {
      return {
        ok: false,
        reason: 'NOT_CONFIRMED',
        message: `The status check answered for clientReference "${status.clientReference}", not "${invoice.clientReference}"`,
      };
    }
    // An answer without a currency is judged on its amount; one that names another is not this invoice's.
    const currency = status.currencyCode?.trim();
    if (currency && currency.toUpperCase() !== CHECKOUT_CURRENCY) {
      return {
        ok: false,
        reason: 'CURRENCY_MISMATCH',
        message: `The status check reports a payment in ${currency.slice(0, 8)}, not in the ${CHECKOUT_CURRENCY} invoiced for ${invoice.clientReference}`,
      };
    }
    if (status.amount === undefined || !amountMatches(status.amount, invoice.amount, this.verification)) {
      return {
        ok: false,
        reason: 'AMOUNT_MISMATCH',
        message: `The status check reports ${status.amount === undefined ? 'no amount' : money(status.amount)} paid, not the ${money(invoice.amount)} invoiced for ${invoice.clientReference}`,
      };
    }
    return { ok: true };
  }
}
