import { setTimeout as delay } from 'node:timers/promises';
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

/** Sleeps without keeping the process alive; resolves early when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, { ref: false, signal }).catch(() => undefined);
}
