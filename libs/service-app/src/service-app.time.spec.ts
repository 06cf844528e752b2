import { isoNow } from './service-app.time.js';

describe('isoNow', () => {
  it('gives the text of new Date().toISOString(), one string per millisecond', () => {
    const before = Date.now();
    const first = isoNow();
    const after = Date.now();
    const at = Date.parse(first);
    expect(new Date(at).toISOString()).toBe(first);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);

    // Within one millisecond the same string is returned; the next one gets a new one.
    let same = isoNow();
    while (Date.now() === at) same = isoNow();
    const later = isoNow();
    expect(Date.parse(later)).toBeGreaterThan(at);
    expect(Date.parse(same)).toBeGreaterThanOrEqual(at);
  });
});
