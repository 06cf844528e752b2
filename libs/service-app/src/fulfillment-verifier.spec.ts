import { cartTotal, judgePayment } from './fulfillment-verifier.js';
import type { PaymentStatus } from './payment-status.client.js';

const ITEM = { ItemName: '1GB', Qty: 3, Price: 1.1 };
const paid = (fields: Partial<PaymentStatus> = {}): PaymentStatus => ({
  status: 'Paid',
  paid: true,
  clientReference: 's-1',
  amount: 3.3,
  ...fields,
});

describe('judgePayment', () => {
  it('accepts Paid for the cart total to the pesewa', () => {
    expect(cartTotal(ITEM)).toBe(3.3);
    expect(judgePayment('s-1', paid(), ITEM, 0)).toEqual({ kind: 'paid' });
    // Without a cart (requireCart: false) only the payment is checked.
    expect(judgePayment('s-1', paid({ amount: 99 }), null, 0)).toEqual({ kind: 'paid' });
  });

  it('re-checks a payment not recorded yet (no transaction, Unpaid, Pending)', () => {
    expect(judgePayment('s-1', undefined, ITEM, 0).kind).toBe('pending');
    for (const status of ['Unpaid', 'pending'])
      expect(judgePayment('s-1', paid({ status, paid: false }), ITEM, 0).kind).toBe('pending');
  });

  it('refuses for good: refunded, another amount, an answer about another reference', () => {
    expect(judgePayment('s-1', paid({ status: 'Refunded', paid: false }), ITEM, 0)).toMatchObject({
      kind: 'refused',
      reason: 'NOT_PAID',
    });
    expect(judgePayment('s-1', paid({ amount: 3.29 }), ITEM, 0)).toMatchObject({
      kind: 'refused',
      reason: 'AMOUNT_MISMATCH',
      message: expect.stringContaining("3.29 paid for session s-1, not the cart's 3.30"),
    });
    expect(judgePayment('s-1', paid({ amount: undefined }), ITEM, 0)).toMatchObject({
      reason: 'AMOUNT_MISMATCH',
    });
    expect(judgePayment('s-1', paid({ amount: 3.29 }), ITEM, 0.01)).toEqual({ kind: 'paid' });
    expect(judgePayment('s-1', paid({ clientReference: 's-2' }), ITEM, 0)).toMatchObject({
      kind: 'refused',
      reason: 'NOT_CONFIRMED',
    });
  });

  it('compares the currency as checkout does: another one is refused, none or GHS in any case passes', () => {
    for (const currencyCode of ['USD', 'NGN', 'ghs1']) {
      expect(judgePayment('s-1', paid({ currencyCode }), ITEM, 0)).toMatchObject({
        kind: 'refused',
        reason: 'CURRENCY_MISMATCH',
        message: expect.stringContaining(`payment in ${currencyCode} for session s-1, not in the cart's GHS`),
      });
    }
    for (const currencyCode of ['GHS', 'ghs', ' GHS ', '', undefined])
      expect(judgePayment('s-1', paid({ currencyCode }), ITEM, 0)).toEqual({ kind: 'paid' });
  });
});
