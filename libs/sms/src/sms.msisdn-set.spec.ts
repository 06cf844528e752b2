import { MsisdnSet } from './sms.msisdn-set.js';

describe('MsisdnSet', () => {
  it('adds each number once, across growth', () => {
    const set = new MsisdnSet();
    for (let i = 0; i < 5000; i++) expect(set.add(String(233200000000 + i * 7))).toBe(true);
    for (let i = 0; i < 5000; i++) expect(set.add(String(233200000000 + i * 7))).toBe(false);
    // Only the numbers added are there (the set has no reader but `add`).
    expect(set.add('233200000008')).toBe(true);
  });
  it('keeps 15-digit numbers exact', () => {
    const set = new MsisdnSet();
    expect(set.add('999999999999999')).toBe(true);
    expect(set.add('999999999999998')).toBe(true);
    expect(set.add('999999999999999')).toBe(false);
  });
  it('refuses what is not a normalised MSISDN', () => {
    expect(() => new MsisdnSet().add('abc')).toThrow(RangeError);
    expect(() => new MsisdnSet().add('99999999999999999')).toThrow(RangeError);
  });
});
