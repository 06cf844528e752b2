import { ANSWER_FIELDS, fieldOf, withFieldNames } from './answer-fields.js';

describe('answer fields, read as the platform SDKs read them (without regard to case)', () => {
  it('names an older host PascalCase answer as documented; other fields stay as they are', () => {
    const older = { Status: 0, MessageId: 'm-1', Rate: 0.03, NetworkId: '62001', Extra: true };
    expect(withFieldNames(older, ANSWER_FIELDS.smsMessage)).toEqual({
      status: 0,
      messageId: 'm-1',
      rate: 0.03,
      networkId: '62001',
      Extra: true,
    });
  });

  it('prefers the exact spelling when both are present, and leaves non-objects alone', () => {
    expect(withFieldNames({ MessageId: 'other', messageId: 'exact' }, ['messageId'])).toEqual({
      messageId: 'exact',
    });
    expect(withFieldNames(null, ['a'])).toBeNull();
    expect(withFieldNames([1], ['a'])).toEqual([1]);
  });

  it('fieldOf finds a field in any case, the exact one first', () => {
    expect(fieldOf({ subtotal: 1, Subtotal: 2 }, 'Subtotal')).toBe(2);
    expect(fieldOf({ SUBTOTAL: 3 }, 'Subtotal')).toBe(3);
    expect(fieldOf('x', 'Subtotal')).toBeUndefined();
  });
});
