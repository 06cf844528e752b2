import { cartTotal, judgePayment } from './fulfillment.verifier.js';
import type { TransactionStatus as PaymentStatus } from '#internal';

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
    expect(judgePayment('s-1', paid(), ITEM, 0)).toEqual({
      kind: 'paid',
      amounts: { gross: 3.3, charges: 0, net: 3.3, chargesBorneBy: 'merchant' },
    });
    // Without a cart (requireCart: false) only the payment is checked.
    expect(judgePayment('s-1', paid({ amount: 99 }), null, 0)).toMatchObject({ kind: 'paid' });
  });

  it('accepts the cart total whichever side bore the charge: amount (merchant) or amountAfterCharges (payer)', () => {
    // A production request of 2025: a 1.00 item, 1.02 paid, 1.00 after charges.
    const one = { ItemName: 'Airtime', Qty: 1, Price: 1 };
    expect(
      judgePayment(
        's-1',
        paid({ amount: 1.02, charges: 0.02, amountAfterCharges: 1, currencyCode: 'GHS' }),
        one,
        0,
      ),
    ).toEqual({
      kind: 'paid',
      amounts: { gross: 1.02, charges: 0.02, net: 1, chargesBorneBy: 'payer', currency: 'GHS' },
    });
    expect(judgePayment('s-1', paid({ amount: 1, charges: 0.02, amountAfterCharges: 0.98 }), one, 0)).toEqual(
      {
        kind: 'paid',
        amounts: { gross: 1, charges: 0.02, net: 0.98, chargesBorneBy: 'merchant' },
      },
    );
  });

  it('re-checks a payment not recorded yet (no transaction, Unpaid, Pending)', () => {
    expect(judgePayment('s-1', undefined, ITEM, 0).kind).toBe('pending');
    for (const status of ['Unpaid', 'pending'])
      expect(judgePayment('s-1', paid({ status, paid: false }), ITEM, 0).kind).toBe('pending');
  });

  it('refuses for good: refunded, no amount, an answer about another reference; keeps another amount for a person', () => {
    expect(judgePayment('s-1', paid({ status: 'Refunded', paid: false }), ITEM, 0)).toMatchObject({
      kind: 'refused',
      reason: 'NOT_PAID',
    });
    expect(judgePayment('s-1', paid({ amount: 3.29 }), ITEM, 0)).toMatchObject({
      kind: 'attention',
      reason: 'AMOUNT_MISMATCH',
      amounts: { gross: 3.29 },
      message: expect.stringContaining(
        "3.29 paid (3.29 after charges of 0.00) for session s-1: neither is the cart's 3.30",
      ),
    });
    expect(judgePayment('s-1', paid({ amount: undefined }), ITEM, 0)).toMatchObject({
      kind: 'refused',
      reason: 'AMOUNT_MISMATCH',
    });
    expect(judgePayment('s-1', paid({ amount: 3.29 }), ITEM, 0.01)).toMatchObject({ kind: 'paid' });
    expect(judgePayment('s-1', paid({ clientReference: 's-2' }), ITEM, 0)).toMatchObject({
      kind: 'refused',
      reason: 'NOT_CONFIRMED',
    });
  });

  it('compares the currency as checkout does: another one needs attention, none or GHS in any case passes', () => {
    for (const currencyCode of ['USD', 'NGN', 'ghs1']) {
      expect(judgePayment('s-1', paid({ currencyCode }), ITEM, 0)).toMatchObject({
        kind: 'attention',
        reason: 'CURRENCY_MISMATCH',
        message: expect.stringContaining(`payment in ${currencyCode} for session s-1, not in the cart's GHS`),
      });
    }
    for (const currencyCode of ['GHS', 'ghs', ' GHS ', '', undefined])
      expect(judgePayment('s-1', paid({ currencyCode }), ITEM, 0)).toMatchObject({ kind: 'paid' });
  });
});
