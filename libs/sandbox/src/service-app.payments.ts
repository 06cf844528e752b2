import type { ValidationIssue } from 'nestjs-hubtel';
import { checkPayment, SandboxServicePaymentBodyDto } from './admin.dto.js';
import { paymentMoney, type SandboxChargeOptions } from './payment.charges.js';
import { hexId, isoNow, networkTransactionId, round2 } from './sandbox.http.js';
import type { SandboxState } from './sandbox.state.js';
import type { CartItem, SandboxServiceOrder, SandboxSession } from './sandbox.types.js';

export interface RecordServicePaymentOptions extends SandboxServicePaymentBodyDto {}

export function recordServicePayment(
  state: SandboxState,
  sessionId: string,
  options: RecordServicePaymentOptions = {},
): SandboxSession {
  const issues: ValidationIssue[] = [];
  if (typeof sessionId !== 'string' || sessionId.trim() === '' || sessionId.length > 256)
    issues.push({
      field: 'sessionId',
      message: 'sessionId must be a non-empty string of at most 256 characters',
    });
  let session = state.sessions.get(sessionId);
  const cart = session?.cart;
  const { account } = options;
  if (typeof account === 'string' && !state.accounts.get(account))
    issues.push({ field: 'account', message: 'account is not an account of this sandbox', value: account });
  else if (session && typeof account === 'string' && session.account !== account)
    issues.push({ field: 'account', message: `the session belongs to account "${session.account}"` });
  if (options.amount == null && !cart)
    issues.push({
      field: 'amount',
      message: 'amount is required: the sandbox knows no cart for this session',
    });
  checkPayment(SandboxServicePaymentBodyDto, options, 'service payment', issues);
  const now = isoNow();
  if (!session) {
    session = newSessionRecord({
      sessionId,
      account: account ?? state.accounts.default.name,
      serviceAppUrl: '',
      serviceCode: 'external',
      mobile: '',
      operator: '',
      channel: null,
      state: 'cart',
    });
    state.sessions.push(session, [sessionId]);
  }
  recordServiceOrder(state, session, {
    orderId: options.orderId ?? session.order?.orderId ?? hexId(),
    price: round2(options.amount ?? cart!.Qty * cart!.Price),
    outcome: 'paid',
    paidAt: now,
    recorded: true,
    chargeBearer: options.chargeBearer,
    currency: options.currency,
  });
  session.state = 'paid';
  session.updatedAt = now;
  state.emit('session', session);
  return session;
}

/** A session's record before its first exchange: no cart, no order. */
export function newSessionRecord(
  fields: Omit<SandboxSession, 'exchanges' | 'cart' | 'order' | 'createdAt' | 'updatedAt'>,
): SandboxSession {
  const now = isoNow();
  return { ...fields, exchanges: [], cart: null, order: null, createdAt: now, updatedAt: now };
}

/** Gives a session its order as the platform records a payment of `price` (found by its ids). */
export function recordServiceOrder(
  state: SandboxState,
  session: SandboxSession,
  fields: Pick<SandboxServiceOrder, 'orderId' | 'outcome' | 'paidAt' | 'recorded'> &
    SandboxChargeOptions & { price: number },
): SandboxServiceOrder {
  const order: SandboxServiceOrder = {
    orderId: fields.orderId,
    ...paymentMoney(state, session.account, fields.price, fields),
    outcome: fields.outcome,
    paidAt: fields.paidAt,
    transactionId: hexId(),
    externalTransactionId: networkTransactionId(),
    isFulfilled: false,
    serviceStatus: null,
    recorded: fields.recorded,
  };
  session.order = order;
  if (order.outcome === 'paid') {
    state.payments++;
    state.sessions.addKey(session, `tx:${order.transactionId}`);
    state.sessions.addKey(session, `ext:${order.externalTransactionId}`);
  }
  return order;
}

/** `OrderInfo` in the platform's 2026 shape: `Subtotal` and `AmountPaid` are what the payer paid. */
export function fulfillmentOrderInfo(
  mobile: string,
  cart: CartItem,
  order: SandboxServiceOrder,
): Record<string, unknown> {
  return {
    CustomerMobileNumber: mobile,
    CustomerEmail: null,
    CustomerName: null,
    Status: 'Paid',
    OrderDate: order.paidAt,
    Currency: order.currency,
    BranchName: 'Main Branch',
    IsRecurring: false,
    RecurringInvoiceId: null,
    Subtotal: order.amount,
    Items: [{ ItemId: hexId(), Name: cart.ItemName, Quantity: cart.Qty, UnitPrice: cart.Price }],
    Payment: {
      PaymentType: 'mobilemoney',
      AmountPaid: order.amount,
      AmountAfterCharges: order.amountAfterCharges,
      PaymentDate: order.paidAt,
      PaymentDescription: 'The mobile money payment has been approved and processed successfully.',
      IsSuccessful: true,
    },
  };
}
