import { findHostileStructure } from './inbound-body.js';

const callback = () => ({
  ResponseCode: '0000',
  Data: {
    CheckoutId: 'c1',
    ClientReference: 'r1',
    PaymentDetails: { MobileMoneyNumber: '233241234567', PaymentType: 'mobilemoney', Channel: 'mtn-gh' },
  },
});

describe('findHostileStructure', () => {
  it('finds prototype keys at any depth, naming where', () => {
    expect(findHostileStructure(JSON.parse('{"a":{"b":[{"__proto__":{}}]}}'))).toEqual({
      field: 'a.b.0.__proto__',
      message: 'key "__proto__" is not allowed',
    });
    expect(findHostileStructure({ constructor: { prototype: {} } })).toMatchObject({ field: 'constructor' });
    expect(findHostileStructure({ a: { prototype: 1 } })).toMatchObject({ field: 'a.prototype' });
  });

  it('refuses bodies too deep or too large, and accepts them up to the limits', () => {
    let deep: unknown = {};
    for (let i = 0; i < 20; i++) deep = { d: deep };
    expect(findHostileStructure(deep)?.message).toBe('body is nested deeper than 8 levels');
    let eight: unknown = {};
    for (let i = 0; i < 7; i++) eight = { d: eight };
    expect(findHostileStructure(eight)).toBeUndefined();
    expect(findHostileStructure({ d: eight })?.message).toBe('body is nested deeper than 8 levels');
    expect(findHostileStructure({ many: Array.from({ length: 3000 }, () => ({})) })?.message).toBe(
      'body has more than 2000 objects and arrays',
    );
    // The body, its array and the objects in it: 2,000 accepted, 2,001 refused.
    expect(findHostileStructure({ many: Array.from({ length: 1998 }, () => ({})) })).toBeUndefined();
    expect(findHostileStructure({ many: Array.from({ length: 1999 }, () => ({})) })?.message).toMatch(
      /more than 2000/,
    );
  });

  it('refuses a key or string holding U+FFFD (a body that was not valid UTF-8), naming where', () => {
    const body = callback();
    body.Data.ClientReference = 'ord-\uFFFD';
    expect(findHostileStructure(body)).toEqual({
      field: 'Data.ClientReference',
      message: 'body is not valid UTF-8 (or holds U+FFFD)',
    });
    expect(findHostileStructure({ a: [{ ['k\uFFFD']: 1 }] })).toMatchObject({ field: 'a.0.k\uFFFD' });
  });

  it('refuses a lone surrogate (JSON "\\ud800") in any key or string, and keeps pairs (emoji)', () => {
    const body = callback();
    body.Data.ClientReference = JSON.parse('"ord-\\ud800"') as string;
    expect(findHostileStructure(body)).toEqual({
      field: 'Data.ClientReference',
      message: 'body is not valid UTF-8 (holds a lone surrogate such as \\ud800)',
    });
    const low = JSON.parse('{"a":[{"b":"x\\udfffy"}]}') as unknown;
    expect(findHostileStructure(low)).toMatchObject({ field: 'a.0.b' });
    const key = JSON.parse('{"a":{"k\\udbff":1}}') as unknown;
    expect(findHostileStructure(key)?.message).toContain('lone surrogate');
    // A surrogate pair is one character (an emoji in a name): accepted.
    expect(findHostileStructure(JSON.parse('{"Name":"Ama \\ud83d\\ude00"}'))).toBeUndefined();
  });

  it("caps the field path it names (keys are the sender's)", () => {
    const key = 'k'.repeat(1_000);
    const field = findHostileStructure({ [key]: JSON.parse('{"__proto__": 1}') })!.field;
    expect(field).toMatch(/^k{256}…\(\d+ more chars\)$/);
  });

  it('passes ordinary bodies and primitives', () => {
    expect(findHostileStructure(callback())).toBeUndefined();
    expect(findHostileStructure({ name: 'Ànnán 🇬🇭 أكرا' })).toBeUndefined();
    expect(findHostileStructure({ ConstructorName: 'x', proto: 1, __proto: 2 })).toBeUndefined();
    for (const value of [null, undefined, 'x', 7, []]) expect(findHostileStructure(value)).toBeUndefined();
  });
});
