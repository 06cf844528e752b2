import { HubtelError } from 'nestjs-hubtel';

/** A re-check's wait was cut by the app shutting down: the confirmation stays recorded, unfinished. */
export class CheckoutRecheckInterruptedError extends HubtelError {
  constructor(key: string) {
    super(
      'HUBTEL_SEND_ABORTED',
      `Confirmation ${key} stopped waiting for its next status check: shutting down`,
    );
  }
}

/**
 * The paid-callback confirmations this process submits or runs, by job key. A confirmation whose
 * status check does not show the payment yet waits before checking again; a later callback for the
 * same round (a duplicate by key) gets one status check now through it instead of being dropped,
 * so a genuine callback that follows a forged one is confirmed at once, not after the forged
 * one's backoff; the wait then resumes to its scheduled time. Nudges coalesce (one pending nudge
 * per key), so copies arriving together share one check.
 * The latest nudging callback is kept: when the payment shows, its details (the payer's) are the
 * ones reported, not those of an earlier callback that came before anything was paid.
 */
export class CheckoutRechecks<T> {
  /** Holders per key: the submitting callback and the running job (so duplicates know it is ours). */
  private readonly holders = new Map<string, number>();
  private readonly nudged = new Set<string>();
  private readonly wakers = new Map<string, () => void>();
  private readonly latestByKey = new Map<string, T>();
  private readonly stopping = new AbortController();

  hold(key: string): void {
    this.holders.set(key, (this.holders.get(key) ?? 0) + 1);
  }

  release(key: string): void {
    const left = (this.holders.get(key) ?? 0) - 1;
    if (left > 0) {
      this.holders.set(key, left);
      return;
    }
    this.holders.delete(key);
    this.nudged.delete(key);
    this.latestByKey.delete(key);
  }

  /**
   * Asks the confirmation of `key` to check again now: wakes its wait, or (while it is checking)
   * makes it check once more before waiting. False when no confirmation of that key is here.
   */
  nudge(key: string, latest: T): boolean {
    if (!this.holders.has(key)) return false;
    this.latestByKey.set(key, latest);
    const wake = this.wakers.get(key);
    if (wake) wake();
    else this.nudged.add(key);
    return true;
  }

  /** What the latest nudge of `key` brought, if any. */
  latest(key: string): T | undefined {
    return this.latestByKey.get(key);
  }

  /** True, once, when a nudge came while the confirmation was not waiting. */
  takeNudge(key: string): boolean {
    return this.nudged.delete(key);
  }

  /**
   * Waits until `due` (epoch ms). True as soon as a nudge comes (or came while not waiting):
   * check now, then wait again; false once `due` is reached.
   * @throws CheckoutRecheckInterruptedError on shutdown.
   */
  async waitUntil(key: string, due: number): Promise<boolean> {
    if (this.takeNudge(key)) return true;
    const ms = due - Date.now();
    if (ms <= 0) return false;
    return this.wait(key, ms);
  }

  private wait(key: string, ms: number): Promise<boolean> {
    const signal = this.stopping.signal;
    if (signal.aborted) return Promise.reject(new CheckoutRecheckInterruptedError(key));
    return new Promise<boolean>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        if (this.wakers.get(key) === wake) this.wakers.delete(key);
        signal.removeEventListener('abort', abort);
      };
      const wake = () => {
        cleanup();
        resolve(true);
      };
      const due = () => {
        cleanup();
        resolve(false);
      };
      const abort = () => {
        cleanup();
        reject(new CheckoutRecheckInterruptedError(key));
      };
      const timer = setTimeout(due, ms);
      this.wakers.set(key, wake);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  /** Ends every wait (shutdown). */
  stop(): void {
    this.stopping.abort();
  }
}
