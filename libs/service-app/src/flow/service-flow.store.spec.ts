import { PendingStarts } from './service-flow.store.js';

describe('PendingStarts', () => {
  it('holds at most `limit` starts: the oldest gives way; forgets them at their TTL or first answer', () => {
    let now = 0;
    const pending = new PendingStarts(2, 1_000, () => now);
    expect(pending.started('a', 1)).toBeUndefined();
    now = 500;
    expect(pending.started('b', 1)).toBeUndefined();
    expect(pending.started('a', 3)).toBeUndefined(); // a re-started SessionId replaces its own entry
    expect(pending.started('c', 1)).toEqual({ sessionId: 'b', version: 1 }); // 'a' moved behind 'b'
    expect(pending.size).toBe(2);
    pending.settled('a');
    expect(pending.started('d', 2)).toBeUndefined();
    expect(pending.started('e', 1)).toEqual({ sessionId: 'c', version: 1 });
    now = 1_500; // 'd' and 'e' expire with their store records
    expect(pending.size).toBe(0);
    expect(pending.started('f', 1)).toBeUndefined();
  });
});
