import { validateCheckoutCallback } from './callback.dto.js';

const valid = () => ({
  ResponseCode: '0000',
  Status: 'Success',
  Data: {
    CheckoutId: 'c1',
    SalesInvoiceId: 's1',
    ClientReference: 'r1',
    Status: 'Success',
    Amount: 0.8,
    CustomerPhoneNumber: '233241234567',
    PaymentDetails: { MobileMoneyNumber: '233241234567', PaymentType: 'mobilemoney', Channel: 'mtn-gh' },
    Description: 'ok',
  },
});

describe('validateCheckoutCallback', () => {
  it("accepts the contract's sample and returns only the contract's fields", () => {
    const body = { ...valid(), Unknown: 1, Data: { ...valid().Data, Extra: 'x' } };
    const result = validateCheckoutCallback(body);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toEqual(valid());
    expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype);
  });

  it('accepts null and missing optional fields (a failed attempt may carry few details)', () => {
    const body = {
      ResponseCode: '2001',
      Status: null,
      Data: {
        CheckoutId: 'c1',
        ClientReference: 'r1',
        Status: 'Failed',
        Amount: null,
        PaymentDetails: null,
        CustomerPhoneNumber: null,
      },
    };
    expect(validateCheckoutCallback(body).ok).toBe(true);
  });

  it('names every bad field', () => {
    const result = validateCheckoutCallback({
      ResponseCode: 1,
      Data: {
        CheckoutId: '',
        ClientReference: 'x'.repeat(33),
        Status: 5,
        Amount: '1',
        PaymentDetails: { Channel: 3 },
      },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => i.field)).toEqual(
      expect.arrayContaining([
        'ResponseCode',
        'Data.CheckoutId',
        'Data.ClientReference',
        'Data.Status',
        'Data.Amount',
        'Data.PaymentDetails.Channel',
      ]),
    );
  });

  it('refuses non-objects', () => {
    for (const body of [null, undefined, [], 'x', 7]) expect(validateCheckoutCallback(body).ok).toBe(false);
  });
});
