import { amountMatches } from './payment-amounts.js';

const exact = { amountTolerance: { absolute: 0, percent: 0 }, allowOverpayment: false };

describe('amountMatches', () => {
  it('compares to the pesewa, free of float noise', () => {
    expect(amountMatches(0.1 + 0.2, 0.3, exact)).toBe(true);
    expect(amountMatches(10.1, 10.1, exact)).toBe(true);
    expect(amountMatches(10.11, 10.1, exact)).toBe(false);
    expect(amountMatches(10.09, 10.1, exact)).toBe(false);
  });

  it('applies the larger of the absolute and percent tolerances, both ways', () => {
    const v = { ...exact, amountTolerance: { absolute: 0.5, percent: 2 } };
    expect(amountMatches(98, 100, v)).toBe(true); // 2 % of 100 = 2.00
    expect(amountMatches(97.99, 100, v)).toBe(false);
    expect(amountMatches(102, 100, v)).toBe(true);
    expect(amountMatches(102.01, 100, v)).toBe(false);
    expect(amountMatches(9.5, 10, v)).toBe(true); // absolute 0.50 beats 2 % of 10
    expect(amountMatches(9.49, 10, v)).toBe(false);
  });

  it('accepts any excess when over-payment is allowed, never a shortfall', () => {
    const v = { ...exact, allowOverpayment: true };
    expect(amountMatches(1000, 10, v)).toBe(true);
    expect(amountMatches(9.99, 10, v)).toBe(false);
  });
});
