/**
 * What verified claims tell the settlement: the evidence of a paid, failed or attention outcome
 * and the payment details, from a callback or a status check. Shared by the direct path
 * (callback.handler.ts), the status-check confirmation and the reconciler, so it is built one way.
 */
import type { PaymentAmounts } from 'nestjs-hubtel';
import { dropUndefined } from '#internal';
import type {
  CheckoutAttention,
  CheckoutEvidenceSource,
  CheckoutPaymentInfo,
  CheckoutRejectionReason,
} from '../checkout.events.js';
import type { CheckoutTransactionStatus } from '../invoices/invoice.dto.js';
import type { CheckoutInvoice } from '../invoices/invoice.store.js';
import type { CheckoutCallbackDto } from './callback.dto.js';

/** Keeps a payment detail only when it says something (not undefined, null or ""). */
function given(value: string | null | undefined): value is string {
  return value !== undefined && value !== null && value !== '';
}

export function paymentFromCallback(callback: CheckoutCallbackDto): CheckoutPaymentInfo {
  // Field by field (once per callback): the same keys, in the same order, as filtering the entries.
  const data = callback.Data;
  const details = data.PaymentDetails ?? undefined;
  const payment: CheckoutPaymentInfo = {};
  if (given(details?.PaymentType)) payment.paymentType = details.PaymentType;
  if (given(details?.Channel)) payment.channel = details.Channel;
  if (given(details?.MobileMoneyNumber)) payment.mobileMoneyNumber = details.MobileMoneyNumber;
  if (given(data.CustomerPhoneNumber)) payment.customerPhoneNumber = data.CustomerPhoneNumber;
  if (given(data.SalesInvoiceId)) payment.salesInvoiceId = data.SalesInvoiceId;
  return payment;
}

/**
 * A paid callback's evidence. Its phone numbers are left out: nothing verifies them (the callback
 * is unsigned; a copy with the right reference, CheckoutId and amount may carry anyone's number),
 * and a paid event's details must be facts. With the status check, the caller replaces `payment`
 * with what the check said.
 */
export function paidFromCallback(callback: CheckoutCallbackDto, confirmed: boolean): PaidEvidence {
  const payment = paymentFromCallback(callback);
  delete payment.customerPhoneNumber;
  delete payment.mobileMoneyNumber;
  return {
    clientReference: callback.Data.ClientReference,
    checkoutId: callback.Data.CheckoutId,
    amountPaid: callback.Data.Amount as number,
    source: 'callback',
    confirmedByStatusCheck: confirmed,
    payment,
  };
}

export function failedFromCallback(callback: CheckoutCallbackDto): FailedEvidence {
  const evidence: FailedEvidence = {
    clientReference: callback.Data.ClientReference,
    checkoutId: callback.Data.CheckoutId,
    source: 'callback',
    responseCode: callback.ResponseCode,
    status: callback.Data.Status,
    payment: paymentFromCallback(callback),
  };
  if (typeof callback.Data.Description === 'string' && callback.Data.Description !== '')
    evidence.reason = callback.Data.Description;
  return evidence;
}

/** A verified claim that an invoice was paid. */
export interface PaidEvidence {
  clientReference: string;
  checkoutId?: string;
  amountPaid: number;
  source: CheckoutEvidenceSource;
  confirmedByStatusCheck: boolean;
  payment: CheckoutPaymentInfo;
  /** The status check's verified figures, when it confirmed the payment. */
  amounts?: PaymentAmounts;
  /** A payment that needed attention, delivered anyway by the merchant. */
  attention?: CheckoutAttention;
}

/** A verified payment that matches the invoice on neither count (amount, currency). */
export interface AttentionEvidence {
  reason: CheckoutRejectionReason;
  message: string;
  amounts?: PaymentAmounts;
  status: CheckoutTransactionStatus;
  sourceAddress?: string;
}

/** A verified claim that a payment attempt failed. */
export interface FailedEvidence {
  clientReference: string;
  checkoutId?: string;
  source: CheckoutEvidenceSource;
  responseCode?: string;
  status: string;
  reason?: string;
  payment: CheckoutPaymentInfo;
}

/** A claim that failed verification, and what it was based on. */
export interface RejectedClaim {
  reason: CheckoutRejectionReason;
  message: string;
  /** As claimed. */
  clientReference: string;
  /** The invoice of that reference, when this app has one. */
  invoice?: CheckoutInvoice;
  /** Without an invoice: the account whose path the callback came on (default: `default`). */
  account?: string;
  /** The callback that made the claim (absent: the status check made it). */
  callback?: CheckoutCallbackDto;
  /** The status-check answer involved, if any. */
  status?: CheckoutTransactionStatus;
  sourceAddress?: string;
}

/** The payment details a status-check answer gives. */
export function paymentFromStatus(status: CheckoutTransactionStatus): CheckoutPaymentInfo {
  return dropUndefined({
    paymentType: status.paymentMethod,
    transactionId: status.transactionId,
    externalTransactionId: status.externalTransactionId,
    charges: status.charges,
    amountAfterCharges: status.amountAfterCharges,
    currencyCode: status.currencyCode,
  });
}

/**
 * `settled`: this call recorded the outcome (its event will run once);
 * `duplicate`: the same outcome was already recorded;
 * `superseded`: a stronger outcome is already recorded (a failure after the invoice was paid);
 * `unknown`: no such invoice.
 */
export type SettleResult = 'settled' | 'duplicate' | 'superseded' | 'unknown';
