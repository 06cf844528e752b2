import { isGsm7, ussdScreen } from './gsm7.js';

describe('GSM 7-bit text', () => {
  it.each([
    ['Choose a bundle:\n1. 1GB', true],
    ['Price: €5 [promo]', true],
    ['Akwaaba ✓', false],
    ['Ɛ', false],
  ])('%j is GSM-7: %s', (text, expected) => expect(isGsm7(text)).toBe(expected));

  it('measures a USSD screen against 182 septets, or 70 units with any non-GSM character', () => {
    expect(ussdScreen('a'.repeat(182))).toEqual({ gsm7: true, length: 182, limit: 182, fits: true });
    expect(ussdScreen('a'.repeat(181) + '€')).toMatchObject({ length: 183, fits: false });
    expect(ussdScreen('a'.repeat(69) + 'Ɛ')).toEqual({ gsm7: false, length: 70, limit: 70, fits: true });
    expect(ussdScreen('a'.repeat(70) + 'Ɛ')).toMatchObject({ fits: false });
    expect(ussdScreen('abc', { screenSize: 2, unicodeScreenSize: 1 })).toMatchObject({
      fits: false,
      limit: 2,
    });
  });
});
