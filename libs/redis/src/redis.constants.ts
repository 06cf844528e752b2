/** Defaults of the Redis store. */
export const REDIS_STORE_DEFAULTS = Object.freeze({
  /** Empty: the modules' keys already start with `hubtel:`. */
  keyPrefix: '',
  /** A command (on a client the store opened) fails after this long instead of holding a request. */
  commandTimeoutMs: 2_000,
  /** Connecting at startup gives up after this long. */
  connectTimeoutMs: 5_000,
  /**
   * A store connection with no byte back this long after a command is dropped and reopened: one whose
   * peer vanished unclosed (a failover, a dropped NAT entry) would time every command out, for good.
   */
  socketTimeoutMs: 15_000,
  /** Keys asked for per SCAN round trip (a hint to Redis, not a limit). */
  scanCount: 500,
  /** How often the store checks its marker (that Redis did not lose its data). */
  lossCheckIntervalMs: 10_000,
  /** Reconnection backoff: 50 ms more per attempt, at most this long between attempts. */
  maxReconnectDelayMs: 2_000,
});
