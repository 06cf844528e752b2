/** Defaults of HubtelHealthModule, in one place. */
export const HEALTH_DEFAULTS = Object.freeze({
  /** A store or runner check that has not answered after this long is down. */
  timeoutMs: 1_000,
  /** The platform probe's time-out (one attempt, no retry). */
  platformTimeoutMs: 2_000,
  /** Keys of the results in the health check's answer. */
  keys: Object.freeze({ store: 'hubtel_store', runner: 'hubtel_runner', platform: 'hubtel_platform' }),
});
