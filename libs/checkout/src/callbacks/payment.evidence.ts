/** The evidence verified claims give the settlement, built one way for every path. */
import { dropUndefined } from '#internal';
import type {
  CheckoutAttention,
  CheckoutFailedEvent,
  CheckoutPaidEvent,
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

/** A paid callback's evidence, without its phone numbers: unsigned, a copy may carry anyone's. */
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
  if (given(callback.Data.Description)) evidence.reason = callback.Data.Description;
  return evidence;
}

/** What an event takes from the invoice rather than from the evidence. */
type FromInvoice = 'account' | 'amount' | 'description' | 'metadata' | 'payee';

/** A verified claim that an invoice was paid (`amounts`: the status check's figures, when it confirmed). */
export type PaidEvidence = Omit<CheckoutPaidEvent, FromInvoice | 'paidAt'>;

/** A verified payment that matches the invoice on neither count (amount, currency). */
export interface AttentionEvidence extends Pick<CheckoutAttention, 'reason' | 'message' | 'amounts'> {
  status: CheckoutTransactionStatus;
  sourceAddress?: string;
}

/** A verified claim that a payment attempt failed. */
export type FailedEvidence = Omit<CheckoutFailedEvent, FromInvoice | 'failedAt'>;

/** A claim that failed verification, and what it was based on. */
export interface RejectedClaim {
  reason: CheckoutRejectionReason;
  message: string;
  clientReference: string;
  invoice?: CheckoutInvoice;
  /** Without an invoice: the account whose path the callback came on. */
  account?: string;
  /** Absent: the status check made the claim. */
  callback?: CheckoutCallbackDto;
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

/** `settled`: recorded by this call; `superseded`: a stronger outcome is (paid before a failure). */
export type SettleResult = 'settled' | 'duplicate' | 'superseded' | 'unknown';
