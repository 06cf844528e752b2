import type { HubtelRetryOptions } from '../options/hubtel-options.types.js';

/**
 * Delay before retry number `retry` (1 = first retry): exponential backoff with full jitter, so many
 * clients' retries do not hammer the platform in step. `random` returns [0, 1).
 */
export function backoffDelay(
  retry: number,
  policy: Pick<HubtelRetryOptions, 'baseDelayMs' | 'maxDelayMs'>,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling * random());
}

/** Promise-based sleep whose timer does not keep the process alive. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    timer.unref?.();
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
