import type { TransactionStatus } from './transaction-status.js';

/** Who bore the platform's charge on a payment, as its verified figures show. */
export type ChargeBearer = 'merchant' | 'payer';

/** A payment's figures as the status check reported them (the proof; a callback's are claims). */
export interface PaymentAmounts {
  /** What the payer paid (status check `amount`). */
  gross: number;
  /** The platform's charge (status check `charges`; 0 when it reported none). */
  charges: number;
  /** What reaches the merchant (`amountAfterCharges`; `gross − charges` when it reported none). */
  net: number;
  /** Whose figure matched the expected total (`amount`: merchant, `amountAfterCharges`: payer). */
  chargesBorneBy?: ChargeBearer;
  /** Status check `currencyCode`, when it gave one. */
  currency?: string;
}

/** A module's tolerance (the larger of `absolute` and `percent` of the total), and whether paying more is accepted. */
export interface AmountRule {
  amountTolerance: { absolute: number; percent: number };
  allowOverpayment: boolean;
}

/** Money in pesewas (cents), so comparisons are exact. */
export function cents(value: number): number {
  return Math.round(value * 100);
}

export function money(value: number): string {
  return value.toFixed(2);
}

/** The pesewas by which `paid` is beyond the tolerance around `expected`: 0 within it, negative below. */
function beyondTolerance(paid: number, expected: number, { amountTolerance }: AmountRule): number {
  const difference = cents(paid) - cents(expected);
  const { absolute, percent } = amountTolerance;
  const allowed = Math.max(cents(absolute), Math.floor((cents(expected) * percent) / 100 + 1e-9));
  return Math.abs(difference) <= allowed ? 0 : difference;
}

/** Within the tolerance, or any excess when over-payment is allowed. */
export function amountMatches(paid: number, expected: number, rule: AmountRule): boolean {
  const beyond = beyondTolerance(paid, expected, rule);
  return beyond === 0 || (beyond > 0 && rule.allowOverpayment);
}

/**
 * `paid`: `amount` or `amountAfterCharges` matches within the tolerance, or both are above and
 * overpayment is allowed; `currency`: another currency named; `amount`: neither figure matches.
 */
export type AmountVerdict =
  | { kind: 'paid'; amounts: PaymentAmounts }
  | { kind: 'currency' | 'amount'; amounts: PaymentAmounts | undefined };

export function judgeAmounts(
  status: Pick<TransactionStatus, 'amount' | 'charges' | 'amountAfterCharges' | 'currencyCode'>,
  expected: number,
  currency: string,
  rule: AmountRule,
): AmountVerdict {
  const amounts = amountsOf(status);
  const named = status.currencyCode?.trim();
  if (named && named.toUpperCase() !== currency) return { kind: 'currency', amounts };
  if (!amounts) return { kind: 'amount', amounts };
  if (beyondTolerance(amounts.gross, expected, rule) === 0)
    return { kind: 'paid', amounts: { ...amounts, chargesBorneBy: 'merchant' } };
  if (status.amountAfterCharges !== undefined && beyondTolerance(amounts.net, expected, rule) === 0)
    return { kind: 'paid', amounts: { ...amounts, chargesBorneBy: 'payer' } };
  // Above on both counts: more than the total reached the merchant whoever bore the charge.
  if (rule.allowOverpayment && amounts.gross > expected && amounts.net > expected)
    return { kind: 'paid', amounts };
  return { kind: 'amount', amounts };
}

/** The figures of a status answer; undefined without an `amount`. */
export function amountsOf(
  status: Pick<TransactionStatus, 'amount' | 'charges' | 'amountAfterCharges' | 'currencyCode'>,
): PaymentAmounts | undefined {
  if (status.amount === undefined) return undefined;
  const charges = status.charges ?? 0;
  const amounts: PaymentAmounts = {
    gross: status.amount,
    charges,
    net: status.amountAfterCharges ?? Math.round((status.amount - charges) * 100) / 100,
  };
  const currency = status.currencyCode?.trim();
  if (currency) amounts.currency = currency;
  return amounts;
}
