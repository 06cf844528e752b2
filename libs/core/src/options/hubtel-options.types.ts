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

/**
 * Shutdown of a module's inbound pipeline. Where jobs run is not an option: in this process with
 * the memory store, on BullMQ with Redis (whose lock and stalled-job check hand a dead replica's
 * job to another: HubtelBullmqModule's `lockDurationMs` / `stalledIntervalMs`).
 */
export interface HubtelShutdownOptions {
  /**
   * On shutdown (SIGTERM with `app.enableShutdownHooks()`), how long handlers running in this
   * process may take to finish (0 to 10 min). What is still pending then is logged with its count;
   * with Redis, BullMQ runs it on another replica (or after the next start). Default 5000 ms.
   */
  shutdownGraceMs?: number;
}
