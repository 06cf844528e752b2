import { PendingStarts } from './service-flow.pending.js';

describe('PendingStarts', () => {
  it('holds at most `limit` starts, forgets them at their TTL or first answer, and always fits a re-start', () => {
    let now = 0;
    const pending = new PendingStarts(2, 1_000, () => now);
    pending.started('a');
    now = 500;
    pending.started('b');
    expect(pending.hasRoom('c')).toBe(false);
    expect(pending.hasRoom('a')).toBe(true); // a re-started SessionId replaces its own record
    pending.settled('b');
    expect(pending.hasRoom('c')).toBe(true);
    pending.started('c');
    now = 1_000; // 'a' expires with its store record
    expect(pending.size).toBe(1);
    pending.started('c'); // moved to the back with a new expiry
    now = 1_600;
    expect(pending.size).toBe(1);
    now = 2_000;
    expect(pending.size).toBe(0);
  });
});
