/** One API credential pair, sent as HTTP Basic auth. */
export interface HubtelCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * The platform's outbound APIs. Each has its own base address and may have its own credentials:
 * the SMS API uses the account's SMS key pair, checkout and the status check share another, and
 * the fulfillment callback receiver documents none.
 */
export type HubtelApi = 'sms' | 'checkout' | 'status' | 'fulfillment';

export interface HubtelRetryOptions {
  /** Attempts in all, the first one included. 1 disables retries. Default 3. */
  maxAttempts: number;
  /** First backoff ceiling; doubles on every retry (full jitter: a random wait below it). Default 250. */
  baseDelayMs: number;
  /** No backoff, nor any honoured `Retry-After`, is longer than this. Default 5000. */
  maxDelayMs: number;
}

/** Transport settings every module accepts in its options. */
export interface HubtelHttpOptions {
  /** Time-out of one HTTP attempt, in ms. Default 15000. */
  timeoutMs?: number;
  retry?: Partial<HubtelRetryOptions>;
  /** Country code put in front of national numbers (`0241234567`). Default '233'. */
  defaultCountryCode?: string;
}

/** `HubtelHttpOptions` after validation, every default filled in. */
export interface ResolvedHubtelHttpOptions {
  timeoutMs: number;
  retry: HubtelRetryOptions;
  defaultCountryCode: string;
}

/**
 * Job ownership of a module's inbound pipeline, for apps with several instances on a shared store:
 * how long a job stays owned by an instance that stopped answering, and how often every instance
 * looks for such jobs. Defaults (30 s, half the lease) suit production; tests shorten them.
 */
/**
 * The instance's budget of transaction status checks (shared by checkout and the service app: when
 * both set it, the smaller wins). A check over budget is not sent: a confirmation waits for the
 * next free slot, the reconciler and payment checks retry later, `getStatus` throws
 * HubtelStatusCheckBudgetError. Reaching it logs one warning and counts
 * `hubtel_status_checks_refused_total` (nestjs-hubtel/metrics).
 */
export interface HubtelStatusCheckBudgetOptions {
  /** Status checks this instance makes in any minute (1 to 100000). Default 600. */
  perMinute?: number;
}

export interface HubtelJobOwnershipOptions {
  /** A job whose instance went silent this long is taken over by another. Default 30000 ms (1 s to 1 h). */
  leaseMs?: number;
  /** How often the store is swept for such jobs (100 ms to 1 h); 0 turns the sweep off. Default half of `leaseMs`. */
  sweepIntervalMs?: number;
  /**
   * On shutdown (SIGTERM with `app.enableShutdownHooks()`), how long handlers running in this
   * process may take to finish (0 to 10 min). What is still pending then is logged with its count;
   * with a persistent store another instance (or the next start) resumes it. Default 5000 ms.
   */
  shutdownGraceMs?: number;
}
