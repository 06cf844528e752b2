import { setTimeout as delay } from 'node:timers/promises';
import { HubtelTimeoutError } from '../errors/hubtel.errors.js';
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

/** `work`'s result, or `late` once `ms` have passed first (the timer is cleared either way). */
export async function within<T, L>(work: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** `promise`, or a HubtelTimeoutError once `ms` have passed (`what` names the wait in its message). */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const late = Symbol('late');
  const result = await within(promise, ms, late);
  if (result === late) throw new HubtelTimeoutError(`${what} did not answer within ${ms} ms`);
  return result as T;
}
