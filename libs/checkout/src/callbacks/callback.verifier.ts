import type { PaymentAmounts } from 'nestjs-hubtel';
import { amountMatches, cents, judgeAmounts, money, type AmountRule } from '#internal';
import type { CheckoutRejectionReason } from '../checkout.events.js';
import type { CheckoutInvoice } from '../invoices/invoice.store.js';
import type { CheckoutTransactionStatus } from '../invoices/invoice.dto.js';
import type { CheckoutCallbackDto } from './callback.dto.js';
import { CHECKOUT_CURRENCY } from '../checkout.constants.js';

/** What a callback claims happened. */
export type CallbackClaim = 'paid' | 'failed' | 'pending';

/** What the checks need of the verification options. */
export type AmountVerification = AmountRule & { confirmWithStatusCheck?: boolean };

export type Verdict = { ok: true } | { ok: false; reason: CheckoutRejectionReason; message: string };

/** A status check's verdict on a paid invoice, with its verified figures. */
export type PaidStatusVerdict =
  | { ok: true; amounts: PaymentAmounts }
  | { ok: false; reason: CheckoutRejectionReason; message: string; amounts?: PaymentAmounts };

const SUCCESS = /^(success|successful|paid|completed)$/i;
const NOT_FINAL = /^(pending|processing|initiated)$/i;

/**
 * The outcome a callback claims. Paid needs both `ResponseCode` `0000` and a successful `Data.Status`
 * (a contradiction is never money received); pending-like statuses are ignored; else failed.
 */
export function classifyCallback(callback: CheckoutCallbackDto): CallbackClaim {
  const status = callback.Data.Status.trim();
  if (NOT_FINAL.test(status)) return 'pending';
  if (callback.ResponseCode.trim() === '0000' && SUCCESS.test(status)) return 'paid';
  return 'failed';
}

function refused(reason: CheckoutRejectionReason, message: string, more: { amounts?: PaymentAmounts } = {}) {
  return { ok: false as const, reason, message, ...more };
}

/** "Verified before believed": the checks every claim passes before it can count. */
export class CheckoutVerifier {
  constructor(private readonly verification: AmountVerification) {}

  /** Checks a callback against the invoice this app recorded for its `ClientReference`. */
  verifyCallback(
    callback: CheckoutCallbackDto,
    claim: CallbackClaim,
    invoice: CheckoutInvoice | undefined,
  ): Verdict {
    const data = callback.Data;
    if (!invoice)
      return refused(
        'UNKNOWN_REFERENCE',
        `No invoice with clientReference "${data.ClientReference}" was created by this app`,
      );
    const ref = invoice.clientReference;
    if (invoice.checkoutId !== undefined && invoice.checkoutId !== data.CheckoutId)
      return refused(
        'CHECKOUT_ID_MISMATCH',
        `CheckoutId "${data.CheckoutId}" is not the checkout id of invoice ${ref}`,
      );
    // Only a payment's amount must match. With a payer-borne charge it is above the total: the
    // status check's figures judge that when it confirms; else it passes only with `allowOverpayment`.
    if (claim !== 'paid') return { ok: true };
    const amount = data.Amount;
    if (typeof amount === 'number') {
      const above =
        this.verification.confirmWithStatusCheck === true && cents(amount) > cents(invoice.amount);
      if (above || amountMatches(amount, invoice.amount, this.verification)) return { ok: true };
    }
    const paid = typeof amount === 'number' ? money(amount) : 'missing';
    return refused(
      'AMOUNT_MISMATCH',
      `Amount ${paid} does not match the ${money(invoice.amount)} invoiced for ${ref}`,
    );
  }

  /**
   * A Paid status answer matches when `amount` (merchant bore the charge) or `amountAfterCharges`
   * (payer bore it) is the total within the tolerance, or both exceed it and overpayment is allowed.
   */
  verifyPaidStatus(status: CheckoutTransactionStatus, invoice: CheckoutInvoice): PaidStatusVerdict {
    const ref = invoice.clientReference;
    if (status.clientReference !== ref)
      return refused(
        'NOT_CONFIRMED',
        `The status check answered for clientReference "${status.clientReference}", not "${ref}"`,
      );
    const verdict = judgeAmounts(status, invoice.amount, CHECKOUT_CURRENCY, this.verification);
    if (verdict.kind === 'paid') return { ok: true, amounts: verdict.amounts };
    const amounts = verdict.amounts === undefined ? {} : { amounts: verdict.amounts };
    // An answer without a currency is judged on its amount; one that names another is not this invoice's.
    if (verdict.kind === 'currency') {
      const currency = status.currencyCode!.trim().slice(0, 8);
      const message = `The status check reports a payment in ${currency}, not in the ${CHECKOUT_CURRENCY} invoiced for ${ref}`;
      return refused('CURRENCY_MISMATCH', message, amounts);
    }
    const message =
      status.amount === undefined
        ? `The status check reports no amount paid for ${ref}`
        : `The status check reports ${money(status.amount)} paid (${money(verdict.amounts!.net)} after charges of ${money(verdict.amounts!.charges)}): neither is the ${money(invoice.amount)} invoiced for ${ref}`;
    return refused('AMOUNT_MISMATCH', message, amounts);
  }
}
