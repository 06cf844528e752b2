import { classifyCallback, CheckoutVerifier } from './callback.verifier.js';
import type { CheckoutCallbackDto } from './callback.dto.js';
import type { CheckoutInvoice } from '../invoices/invoice.store.js';

const exact = {
  amountTolerance: { absolute: 0, percent: 0 },
  allowOverpayment: false,
  confirmWithStatusCheck: false,
};

function callback(
  responseCode: string,
  status: string,
  amount?: number,
  ref = 'r1',
  checkoutId = 'c1',
): CheckoutCallbackDto {
  return {
    ResponseCode: responseCode,
    Status: status,
    Data: { CheckoutId: checkoutId, ClientReference: ref, Status: status, Amount: amount },
  } as CheckoutCallbackDto;
}

const invoice: CheckoutInvoice = {
  clientReference: 'r1',
  checkoutId: 'c1',
  amount: 10.1,
  description: 'x',
  status: 'pending',
  creation: 'created',
  createdAt: '',
  updatedAt: '',
};

describe('classifyCallback', () => {
  it('reads paid only from ResponseCode 0000 with a successful status', () => {
    expect(classifyCallback(callback('0000', 'Success'))).toBe('paid');
    expect(classifyCallback(callback('0000', 'success'))).toBe('paid');
    expect(classifyCallback(callback('0000', 'Paid'))).toBe('paid');
    expect(classifyCallback(callback('2001', 'Success'))).toBe('failed');
    expect(classifyCallback(callback('0000', 'Failed'))).toBe('failed');
    expect(classifyCallback(callback('2001', 'Failed'))).toBe('failed');
    expect(classifyCallback(callback('0000', 'Cancelled'))).toBe('failed');
  });

  it('ignores non-final statuses', () => {
    expect(classifyCallback(callback('0001', 'Pending'))).toBe('pending');
    expect(classifyCallback(callback('0000', 'processing'))).toBe('pending');
  });
});

describe('CheckoutVerifier', () => {
  const verifier = new CheckoutVerifier(exact);

  it('rejects an unknown reference, a foreign checkout id and a wrong or missing amount', () => {
    expect(verifier.verifyCallback(callback('0000', 'Success', 10.1), 'paid', undefined)).toMatchObject({
      ok: false,
      reason: 'UNKNOWN_REFERENCE',
    });
    expect(
      verifier.verifyCallback(callback('0000', 'Success', 10.1, 'r1', 'other'), 'paid', invoice),
    ).toMatchObject({ ok: false, reason: 'CHECKOUT_ID_MISMATCH' });
    expect(verifier.verifyCallback(callback('0000', 'Success', 1), 'paid', invoice)).toMatchObject({
      ok: false,
      reason: 'AMOUNT_MISMATCH',
    });
    expect(verifier.verifyCallback(callback('0000', 'Success'), 'paid', invoice)).toMatchObject({
      ok: false,
      reason: 'AMOUNT_MISMATCH',
    });
    expect(verifier.verifyCallback(callback('0000', 'Success', 10.1), 'paid', invoice)).toEqual({ ok: true });
  });

  it('does not check the amount of a failed attempt, and skips the checkout id when it is not known yet', () => {
    expect(verifier.verifyCallback(callback('2001', 'Failed', 0), 'failed', invoice)).toEqual({ ok: true });
    const { checkoutId: _unused, ...noId } = invoice;
    expect(
      verifier.verifyCallback(callback('0000', 'Success', 10.1, 'r1', 'anything'), 'paid', noId),
    ).toEqual({ ok: true });
  });

  it('checks a paid status answer: same reference, matching amount', () => {
    const status = { clientReference: 'r1', status: 'Paid', paid: true, amount: 10.1 };
    expect(verifier.verifyPaidStatus(status, invoice)).toMatchObject({ ok: true });
    expect(verifier.verifyPaidStatus({ ...status, amount: 5 }, invoice)).toMatchObject({
      ok: false,
      reason: 'AMOUNT_MISMATCH',
    });
    expect(verifier.verifyPaidStatus({ ...status, amount: undefined }, invoice)).toMatchObject({
      ok: false,
      reason: 'AMOUNT_MISMATCH',
    });
    expect(verifier.verifyPaidStatus({ ...status, clientReference: 'r2' }, invoice)).toMatchObject({
      ok: false,
      reason: 'NOT_CONFIRMED',
    });
  });

  it('checks a paid status answer is in the invoice currency (GHS); one that names none is judged on its amount', () => {
    const status = { clientReference: 'r1', status: 'Paid', paid: true, amount: 10.1 };
    expect(verifier.verifyPaidStatus({ ...status, currencyCode: 'GHS' }, invoice)).toMatchObject({
      ok: true,
    });
    expect(verifier.verifyPaidStatus({ ...status, currencyCode: ' ghs ' }, invoice)).toMatchObject({
      ok: true,
    });
    expect(verifier.verifyPaidStatus({ ...status, currencyCode: '' }, invoice)).toMatchObject({ ok: true });
    expect(verifier.verifyPaidStatus({ ...status, currencyCode: 'USD' }, invoice)).toMatchObject({
      ok: false,
      reason: 'CURRENCY_MISMATCH',
    });
  });

  it('matches a payment whichever side bore the charge: amount (merchant) or amountAfterCharges (payer); neither is a mismatch', () => {
    const one = { ...invoice, amount: 1 };
    const paid = { clientReference: 'r1', status: 'Paid', paid: true };
    // Hubtel's status-check sample (merchant-borne) and a 2025 production request (payer-borne).
    expect(
      verifier.verifyPaidStatus(
        { ...paid, amount: 0.1, charges: 0.02, amountAfterCharges: 0.08 },
        { ...one, amount: 0.1 },
      ),
    ).toEqual({ ok: true, amounts: { gross: 0.1, charges: 0.02, net: 0.08, chargesBorneBy: 'merchant' } });
    expect(
      verifier.verifyPaidStatus(
        { ...paid, amount: 1.02, charges: 0.02, amountAfterCharges: 1, currencyCode: 'GHS' },
        one,
      ),
    ).toEqual({
      ok: true,
      amounts: { gross: 1.02, charges: 0.02, net: 1, chargesBorneBy: 'payer', currency: 'GHS' },
    });
    // An underpayment on both counts.
    expect(
      verifier.verifyPaidStatus({ ...paid, amount: 0.5, charges: 0.01, amountAfterCharges: 0.49 }, one),
    ).toMatchObject({ ok: false, reason: 'AMOUNT_MISMATCH', amounts: { gross: 0.5, net: 0.49 } });
    // Above on both counts: an overpayment, accepted only when allowed.
    const over = { ...paid, amount: 2.04, charges: 0.04, amountAfterCharges: 2 };
    expect(verifier.verifyPaidStatus(over, one)).toMatchObject({ ok: false, reason: 'AMOUNT_MISMATCH' });
    expect(new CheckoutVerifier({ ...exact, allowOverpayment: true }).verifyPaidStatus(over, one)).toEqual({
      ok: true,
      amounts: { gross: 2.04, charges: 0.04, net: 2 },
    });
  });

  it('lets a callback claiming more than the total (a payer-borne charge) through to the status check, and refuses one claiming less', () => {
    const confirming = new CheckoutVerifier({ ...exact, confirmWithStatusCheck: true });
    expect(confirming.verifyCallback(callback('0000', 'Success', 10.2), 'paid', invoice)).toEqual({
      ok: true,
    });
    expect(confirming.verifyCallback(callback('0000', 'Success', 10), 'paid', invoice)).toMatchObject({
      ok: false,
      reason: 'AMOUNT_MISMATCH',
    });
    // Without the status check the callback is all there is: only an allowed overpayment passes.
    expect(verifier.verifyCallback(callback('0000', 'Success', 10.2), 'paid', invoice)).toMatchObject({
      ok: false,
      reason: 'AMOUNT_MISMATCH',
    });
  });
});
