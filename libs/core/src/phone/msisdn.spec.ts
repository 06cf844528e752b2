import { HubtelValidationError } from '../errors/hubtel.errors.js';
import { echoValue, invalidMsisdnsError, normalizeMsisdn, tryNormalizeMsisdn } from './msisdn.js';

describe('normalizeMsisdn', () => {
  it.each([
    '+233 24 123 4567',
    '0241234567',
    '233241234567',
    '00233241234567',
    '024-123-4567',
    '(024) 123 4567',
    '+233 (0)24 123 4567',
    ' 233 24 123 4567 ',
    '024.123.4567',
  ])('%s → 233241234567', (input) => {
    expect(normalizeMsisdn(input)).toBe('233241234567');
  });

  it('uses the configurable default country code for national numbers', () => {
    expect(normalizeMsisdn('08031234567', '234')).toBe('2348031234567');
    expect(normalizeMsisdn('+44 7911 123456', '234')).toBe('447911123456');
  });

  it('accepts other countries within E.164 lengths (8-15 digits)', () => {
    expect(normalizeMsisdn('447911123456')).toBe('447911123456');
    expect(normalizeMsisdn('+1 (415) 555-2671')).toBe('14155552671');
  });

  it('accepts safe integers', () => {
    expect(normalizeMsisdn(233241234567)).toBe('233241234567');
  });

  it.each([
    ['', 'is empty'],
    ['abc', 'characters other than digits'],
    ['+233 24 123 456', 'not a valid +233 number'],
    ['2332412345678', 'not a valid +233 number'],
    ['2330241234567', 'not a valid +233 number'],
    ['241234567', 'has no country code'],
    ['024123456', 'not a valid +233 number'],
    ['+1234567', '8 to 15 digits'],
    ['+1234567890123456', '8 to 15 digits'],
    ['24+1234567', 'characters other than digits'],
    ['0', 'not a valid'],
  ])('rejects %j (%s), naming the value', (input, reason) => {
    let error: unknown;
    try {
      normalizeMsisdn(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HubtelValidationError);
    const err = error as HubtelValidationError;
    expect(err.code).toBe('HUBTEL_VALIDATION_FAILED');
    expect(err.message).toContain(JSON.stringify(input));
    expect(err.message).toContain(reason);
    expect(err.issues).toEqual([{ field: 'msisdn', message: expect.stringContaining(reason), value: input }]);
  });

  it('rejects non-strings without throwing anything but a validation error', () => {
    for (const bad of [null, undefined, {}, [], 1.5, -233241234567, true]) {
      expect(() => normalizeMsisdn(bad)).toThrow(HubtelValidationError);
    }
    expect(tryNormalizeMsisdn(null)).toEqual({ ok: false, reason: 'must be a string, got null' });
  });
});

describe('invalidMsisdnsError', () => {
  it('is one error listing all the bad entries', () => {
    const err = invalidMsisdnsError(['0241234567', 'x1', 'x2', '12'])!;
    expect(err).toBeInstanceOf(HubtelValidationError);
    expect(err.issues.map((i) => i.field)).toEqual(['recipients[1]', 'recipients[2]', 'recipients[3]']);
    expect(err.message).toMatch(/^3 recipients are not a valid phone number: recipients\[1\] "x1"/);
    expect(invalidMsisdnsError(['0241234567', '+233 24 123 4567'])).toBeUndefined();
  });

  it('lists only the bad entries, with their index, in the given country', () => {
    // 0803... is valid with 234 as the default country code (it would be too long for 233).
    expect(invalidMsisdnsError(['08031234567', 'x', '12345', null], '234')!.issues).toEqual([
      {
        field: 'recipients[1]',
        message: expect.stringContaining('characters other than digits'),
        value: 'x',
      },
      { field: 'recipients[2]', message: expect.stringContaining('8 to 15 digits'), value: '12345' },
      { field: 'recipients[3]', message: 'must be a string, got null', value: null },
    ]);
    expect(invalidMsisdnsError(['08031234567'])!.issues).toHaveLength(1);
  });
});

describe('echoValue', () => {
  it('quotes strings (cut at 40), prints numbers, names other types without dumping them', () => {
    expect(echoValue('12-ab')).toBe('"12-ab"');
    expect(echoValue('9'.repeat(50))).toBe(`"${'9'.repeat(40)}…"`);
    expect(echoValue(12)).toBe('12');
    expect(echoValue(-5n)).toBe('-5');
    expect(echoValue(null)).toBe('null');
    expect(echoValue({ clientSecret: 'x' })).toBe('object');
  });
});

describe('tryNormalizeMsisdn fast path', () => {
  it('answers exactly as the general rules do for 12-character inputs around the 233 form', () => {
    // A leading space sends the same number through the general rules (it is trimmed there).
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const alphabet = '0123456789+ x';
    let fast = 0;
    for (let i = 0; i < 20_000; i++) {
      let value = i % 3 === 0 ? '233' : i % 3 === 1 ? '23' + alphabet[Math.floor(random() * 10)] : '';
      while (value.length < 12)
        value += alphabet[Math.floor(random() * (i % 5 === 0 ? alphabet.length : 10))];
      const answer = tryNormalizeMsisdn(value);
      expect({ value, answer }).toEqual({ value, answer: tryNormalizeMsisdn(` ${value}`) });
      if (answer.ok && answer.msisdn === value) fast++;
    }
    expect(fast).toBeGreaterThan(1_000);
    expect(tryNormalizeMsisdn('233041234567').ok).toBe(false);
    expect(tryNormalizeMsisdn('23324123456x').ok).toBe(false);
  });
});
