import { maskMsisdn } from 'nestjs-hubtel';
import { invalidArgument, SandboxNotFoundError, SandboxStateError } from './sandbox.errors.js';
import type { CallbackFaultSpec } from './sandbox.faults.js';
import {
  ghanaNetwork,
  hexId,
  isoNow,
  networkTransactionId,
  paymentDescription,
  platformMsisdn,
} from './sandbox.http.js';
import type { SandboxState } from './sandbox.state.js';
import { checkPayment, SandboxPayBodyDto } from './admin.dto.js';
import { paymentMoney } from './payment.charges.js';
import type {
  CheckoutCallbackBody,
  SandboxDelivery,
  SandboxInvoice,
  SandboxServiceOrder,
  SandboxSession,
} from './sandbox.types.js';

export interface PayOptions extends Omit<SandboxPayBodyDto, 'fault'> {
  /** A fault for this payment's callback only (instead of `sandbox.faults`). */
  fault?: CallbackFaultSpec;
}

export interface PaymentResult {
  invoice: SandboxInvoice;
  /** What happened (`failed` also when the description made the processor refuse it). */
  outcome: 'paid' | 'failed';
  /** Deliveries of the web callback (none sent yet when delayed; one `dropped` when dropped). */
  deliveries: SandboxDelivery[];
}

/** Characters in a description that make the mobile-money processor fail a payment (platform facts, H). */
const PROCESSOR_HOSTILE = /[&*!%@]/;

export function findInvoice(state: SandboxState, checkoutIdOrReference: string): SandboxInvoice | undefined {
  return state.invoices.get(checkoutIdOrReference) ?? state.invoices.get(`ref:${checkoutIdOrReference}`);
}

export function requireInvoice(state: SandboxState, checkoutIdOrReference: string): SandboxInvoice {
  const invoice = findInvoice(state, checkoutIdOrReference);
  if (!invoice) throw new SandboxNotFoundError('invoice', checkoutIdOrReference);
  return invoice;
}

function requireOpen(invoice: SandboxInvoice, action: 'paid' | 'cancelled'): void {
  if (invoice.state === 'paid' || invoice.state === 'cancelled')
    throw new SandboxStateError(
      `Invoice ${invoice.clientReference} is already ${invoice.state}; only pending or failed invoices can be ${action}`,
      invoice.state,
    );
}

function payerPhone(state: SandboxState, invoice: SandboxInvoice, phone: string | undefined): string {
  const given = phone ?? invoice.payeeMobileNumber ?? state.options.checkout.defaultPhone;
  const msisdn = platformMsisdn(given);
  if (msisdn) return msisdn;
  const summary = `Invalid mobile money number "${String(given).slice(0, 20)}"`;
  throw invalidArgument(
    'phone',
    'must be a phone number with its country code (233241234567) or 0241234567',
    undefined,
    summary,
  );
}

export async function payInvoice(
  state: SandboxState,
  invoice: SandboxInvoice,
  options: PayOptions = {},
): Promise<PaymentResult> {
  checkPayment(SandboxPayBodyDto, options);
  if (options.deliver === false && options.fault !== undefined) {
    const summary = 'deliver: false sends no callback, so a callback fault cannot apply';
    throw invalidArgument('fault', 'must be left out when deliver is false', undefined, summary);
  }
  // Checked (and computed) before anything changes: a bad bearer or currency records nothing.
  const money = paymentMoney(state, invoice.account, options.amount ?? invoice.totalAmount, options);
  // Not delivering is a drop that was asked for: the payment is recorded the same way.
  const fault: CallbackFaultSpec | undefined = options.deliver === false ? { drop: true } : options.fault;
  requireOpen(invoice, 'paid');
  const phone = payerPhone(state, invoice, options.phone);
  const channel = options.channel ?? ghanaNetwork(phone).channel;
  const hostile =
    state.options.checkout.rejectSpecialCharacters && PROCESSOR_HOSTILE.test(invoice.description);
  const outcome = options.outcome !== 'failed' && !hostile ? 'paid' : 'failed';
  const description = paymentDescription(channel, outcome === 'failed' && hostile ? 'refused' : outcome);

  const now = isoNow();
  invoice.salesInvoiceId ??= hexId();
  invoice.customerPhoneNumber = phone;
  invoice.channel = channel;
  invoice.updatedAt = now;
  const responseCode = outcome === 'paid' ? '0000' : '2001';
  invoice.attempts.push({ outcome, at: now, phone, channel, responseCode, description });
  if (outcome === 'paid') {
    invoice.state = 'paid';
    invoice.paidAt = now;
    invoice.transactionId = hexId();
    invoice.externalTransactionId = networkTransactionId();
    const { amount: amountPaid, charges, amountAfterCharges, chargeBearer, currency } = money;
    Object.assign(invoice, { amountPaid, charges, amountAfterCharges, chargeBearer, currency });
    state.invoices.addKey(invoice, `tx:${invoice.transactionId}`);
    state.invoices.addKey(invoice, `ext:${invoice.externalTransactionId}`);
    state.payments++;
  } else {
    invoice.state = 'failed';
  }
  state.emit('invoice', invoice);
  state.options.logger?.debug?.(`Invoice ${invoice.clientReference} ${outcome} by ${maskMsisdn(phone)}`);

  const body: CheckoutCallbackBody = {
    ResponseCode: responseCode,
    Status: outcome === 'paid' ? 'Success' : 'Failed',
    Data: {
      CheckoutId: invoice.checkoutId,
      SalesInvoiceId: invoice.salesInvoiceId,
      ClientReference: invoice.clientReference,
      Status: outcome === 'paid' ? 'Success' : 'Failed',
      // What the payer paid: with a payer-borne charge, more than the invoice's total.
      Amount: outcome === 'paid' ? money.amount : invoice.totalAmount,
      CustomerPhoneNumber: phone,
      PaymentDetails: { MobileMoneyNumber: phone, PaymentType: 'mobilemoney', Channel: channel },
      Description: description,
    },
  };
  const { deliveries, sent } = state.dispatch({
    kind: 'checkout-callback',
    account: invoice.account,
    url: invoice.callbackUrl,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' },
    body: body as unknown as Record<string, unknown>,
    checkoutId: invoice.checkoutId,
    clientReference: invoice.clientReference,
    fault,
  });
  invoice.deliveryIds.push(...deliveries.map((d) => d.id));
  await sent;
  return { invoice, outcome, deliveries };
}

export function cancelInvoice(state: SandboxState, invoice: SandboxInvoice): SandboxInvoice {
  requireOpen(invoice, 'cancelled');
  invoice.state = 'cancelled';
  invoice.updatedAt = isoNow();
  state.emit('invoice', invoice);
  return invoice;
}

export function refundInvoice(state: SandboxState, invoice: SandboxInvoice): SandboxInvoice {
  if (invoice.state !== 'paid')
    throw new SandboxStateError(
      `Invoice ${invoice.clientReference} is ${invoice.state}; only a paid invoice can be refunded`,
      invoice.state,
    );
  invoice.refunded = true;
  invoice.updatedAt = isoNow();
  state.emit('invoice', invoice);
  return invoice;
}

export function invoiceStatusData(invoice: SandboxInvoice): Record<string, unknown> {
  const paid = invoice.state === 'paid';
  return {
    date: paid ? invoice.paidAt : invoice.createdAt,
    status: paid ? (invoice.refunded ? 'Refunded' : 'Paid') : 'Unpaid',
    transactionId: invoice.transactionId,
    externalTransactionId: invoice.externalTransactionId,
    paymentMethod: paid ? 'mobilemoney' : null,
    clientReference: invoice.clientReference,
    currencyCode: invoice.currency,
    amount: paid ? invoice.amountPaid : invoice.totalAmount,
    charges: paid ? invoice.charges : 0,
    amountAfterCharges: paid ? invoice.amountAfterCharges : 0,
    isFulfilled: false,
  };
}

export function orderStatusData(
  session: SandboxSession,
  order: SandboxServiceOrder,
): Record<string, unknown> {
  const paid = order.outcome === 'paid';
  return {
    date: order.paidAt,
    status: paid ? 'Paid' : 'Unpaid',
    transactionId: paid ? order.transactionId : null,
    externalTransactionId: paid ? order.externalTransactionId : null,
    paymentMethod: paid ? 'mobilemoney' : null,
    clientReference: session.sessionId,
    currencyCode: order.currency,
    amount: order.amount,
    charges: paid ? order.charges : 0,
    amountAfterCharges: paid ? order.amountAfterCharges : 0,
    isFulfilled: order.isFulfilled,
  };
}
