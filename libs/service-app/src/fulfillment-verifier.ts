import type { FulfillmentRejection } from './service-app.events.js';
import type { CartItem } from './service-app.types.js';
import type { PaymentStatus } from './payment-status.client.js';

/**
 * What one status check says of an order:
 * - `paid`: the SessionId's transaction is Paid, for the cart's total;
 * - `pending`: no transaction yet, or `Unpaid`: the platform may record it late, check again;
 * - `refused`: final (refunded, the wrong amount or currency, an answer about another reference).
 */
export type PaymentVerdict =
  | { kind: 'paid' }
  | { kind: 'pending'; message: string }
  | { kind: 'refused'; reason: FulfillmentRejection; message: string };

/** Money in pesewas, so comparisons are exact. */
function cents(value: number): number {
  return Math.round(value * 100);
}

/** The cart's total: unit price × quantity, to the pesewa. */
export function cartTotal(item: CartItem): number {
  return cents(item.Price * item.Qty) / 100;
}

/**
 * The currency of every cart: programmable services are priced and paid in Ghana cedis (as
 * checkout's invoices). A status check naming another currency is not this cart's payment.
 */
const CART_CURRENCY = 'GHS';

function money(value: number): string {
  return value.toFixed(2);
}

/**
 * Judges a status-check answer against the order's cart. `OrderInfo.Payment` of the request is a
 * claim made by whoever sent it, so it is never evidence: only the status check counts. Without a
 * cart (`requireCart: false`) the payment is checked but no amount can be compared.
 */
export function judgePayment(
  sessionId: string,
  status: PaymentStatus | undefined,
  item: CartItem | null,
  tolerance: number,
): PaymentVerdict {
  if (!status)
    return { kind: 'pending', message: `the status check knows no transaction for session ${sessionId}` };
  if (status.clientReference !== sessionId) {
    return {
      kind: 'refused',
      reason: 'NOT_CONFIRMED',
      message: `the status check answered for clientReference "${status.clientReference}", not session ${sessionId}`,
    };
  }
  if (!status.paid) {
    const state = status.status.trim().toLowerCase();
    if (state === 'unpaid' || state === 'pending')
      return { kind: 'pending', message: `the status check says session ${sessionId} is "${status.status}"` };
    return {
      kind: 'refused',
      reason: 'NOT_PAID',
      message: `the status check says session ${sessionId} is "${status.status}"`,
    };
  }
  if (item) {
    const expected = cartTotal(item);
    // As checkout: an answer without a currency is judged on its amount, one naming another is
    // refused (3.30 USD is not the cart's 3.30 GHS) with checkout's reason, CURRENCY_MISMATCH.
    const currency = status.currencyCode?.trim();
    if (currency && currency.toUpperCase() !== CART_CURRENCY) {
      return {
        kind: 'refused',
        reason: 'CURRENCY_MISMATCH',
        message: `the status check reports a payment in ${currency.slice(0, 8)} for session ${sessionId}, not in the cart's ${CART_CURRENCY}`,
      };
    }
    if (status.amount === undefined || Math.abs(cents(status.amount) - cents(expected)) > cents(tolerance)) {
      return {
        kind: 'refused',
        reason: 'AMOUNT_MISMATCH',
        message: `the status check reports ${status.amount === undefined ? 'no amount' : money(status.amount)} paid for session ${sessionId}, not the cart's ${money(expected)}`,
      };
    }
  }
  return { kind: 'paid' };
}
