import type { PaymentAmounts } from 'nestjs-hubtel';
import { amountsOf, cents, judgeAmounts, money, type TransactionStatus } from '#internal';
import type { FulfillmentRejection } from '../service-app.events.js';
import type { CartItem } from '../service-app.types.js';

/** A status check's verdict: `paid`, `pending` (check again), `refused` (final), `attention` (a person's). */
export type PaymentVerdict =
  | { kind: 'paid'; amounts?: PaymentAmounts }
  | { kind: 'pending'; message: string }
  | { kind: 'refused'; reason: FulfillmentRejection; message: string }
  | {
      kind: 'attention';
      reason: 'AMOUNT_MISMATCH' | 'CURRENCY_MISMATCH';
      message: string;
      amounts?: PaymentAmounts;
    };

/** The cart's total: unit price × quantity, to the pesewa. */
export function cartTotal(item: CartItem): number {
  return cents(item.Price * item.Qty) / 100;
}

/** Every cart is priced and paid in Ghana cedis: a status check naming another is not its payment. */
const CART_CURRENCY = 'GHS';

/** A status-check answer judged against the cart (`OrderInfo.Payment` is the sender's claim, no evidence). */
export function judgePayment(
  sessionId: string,
  status: TransactionStatus | undefined,
  item: CartItem | null,
  tolerance: number,
): PaymentVerdict {
  if (!status)
    return { kind: 'pending', message: `the status check knows no transaction for session ${sessionId}` };
  if (status.clientReference !== sessionId)
    return {
      kind: 'refused',
      reason: 'NOT_CONFIRMED',
      message: `the status check answered for clientReference "${status.clientReference}", not session ${sessionId}`,
    };
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
    // Either bearer of the charge matches: `amount` (merchant-borne) or `amountAfterCharges` (payer).
    const verdict = judgeAmounts(status, expected, CART_CURRENCY, {
      amountTolerance: { absolute: tolerance, percent: 0 },
      allowOverpayment: false,
    });
    if (verdict.kind === 'paid') return { kind: 'paid', amounts: verdict.amounts };
    const amounts = verdict.amounts ? { amounts: verdict.amounts } : {};
    if (verdict.kind === 'currency')
      return {
        kind: 'attention',
        reason: 'CURRENCY_MISMATCH',
        message: `the status check reports a payment in ${status.currencyCode!.trim().slice(0, 8)} for session ${sessionId}, not in the cart's ${CART_CURRENCY}`,
        ...amounts,
      };
    if (!verdict.amounts)
      return {
        kind: 'refused',
        reason: 'AMOUNT_MISMATCH',
        message: `the status check reports no amount paid for session ${sessionId}`,
      };
    return {
      kind: 'attention',
      reason: 'AMOUNT_MISMATCH',
      message: `the status check reports ${money(verdict.amounts.gross)} paid (${money(verdict.amounts.net)} after charges of ${money(verdict.amounts.charges)}) for session ${sessionId}: neither is the cart's ${money(expected)}`,
      ...amounts,
    };
  }
  const amounts = amountsOf(status);
  return amounts ? { kind: 'paid', amounts } : { kind: 'paid' };
}
