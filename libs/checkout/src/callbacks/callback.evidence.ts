/**
 * What a verified checkout callback tells the settlement: the payment details it carries and the
 * evidence of a paid or failed claim. Shared by the direct path (CheckoutService.handleCallback)
 * and the status-check confirmation (checkout.confirmation.ts), so it is built one way.
 */
import type { CheckoutSettlement } from './payment.settlement.js';
import type { CheckoutPaymentInfo } from '../checkout.events.js';
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
export function paidFromCallback(
  callback: CheckoutCallbackDto,
  confirmed: boolean,
): Parameters<CheckoutSettlement['paid']>[0] {
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

export function failedFromCallback(
  callback: CheckoutCallbackDto,
): Parameters<CheckoutSettlement['failed']>[0] {
  const evidence: Parameters<CheckoutSettlement['failed']>[0] = {
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
