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

  it('refuses bodies too deep or too large, by default and by the given limits', () => {
    let deep: unknown = {};
    for (let i = 0; i < 20; i++) deep = { d: deep };
    expect(findHostileStructure(deep)?.message).toBe('body is nested deeper than 8 levels');
    expect(findHostileStructure(deep, { maxDepth: 30 })).toBeUndefined();
    expect(findHostileStructure({ many: Array.from({ length: 3000 }, () => ({})) })?.message).toBe(
      'body has more than 2000 objects and arrays',
    );
    expect(findHostileStructure({ few: [{}, {}, {}] }, { maxNodes: 3 })?.message).toMatch(/more than 3/);
  });

  it('passes ordinary bodies and primitives', () => {
    expect(findHostileStructure(callback())).toBeUndefined();
    expect(findHostileStructure({ ConstructorName: 'x', proto: 1, __proto: 2 })).toBeUndefined();
    for (const value of [null, undefined, 'x', 7, []]) expect(findHostileStructure(value)).toBeUndefined();
  });
});
