import { backoffDelay, sleep } from './backoff.js';

describe('backoffDelay (full jitter)', () => {
  const policy = { baseDelayMs: 100, maxDelayMs: 1_000 };

  it('draws below a ceiling that doubles each retry', () => {
    const top = () => 0.999_999;
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, policy, top))).toEqual([100, 200, 400, 800]);
    expect([1, 2, 3].map((n) => backoffDelay(n, policy, () => 0.5))).toEqual([50, 100, 200]);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
  });

  it('never exceeds maxDelayMs, however many retries', () => {
    expect(backoffDelay(5, policy, () => 0.999_999)).toBe(1_000);
    expect(backoffDelay(60, policy, () => 0.999_999)).toBe(1_000);
  });

  it('spreads the delays (uses its random source)', () => {
    const delays = new Set(Array.from({ length: 200 }, () => backoffDelay(4, policy)));
    expect(delays.size).toBeGreaterThan(50);
    for (const d of delays) expect(d >= 0 && d <= 800).toBe(true);
  });
});

describe('sleep', () => {
  it('resolves at once for 0, and early when aborted', async () => {
    await sleep(0);
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort();
    await waiting; // would time the test out if the abort were ignored
    await sleep(5);
  });
});
