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

/** `promise`, or a HubtelTimeoutError once `ms` have passed (`what` names the wait in its message). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new HubtelTimeoutError(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
