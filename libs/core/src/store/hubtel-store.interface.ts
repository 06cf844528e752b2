/**
 * The one storage interface of the suite (invoices, callback records, sessions, orders).
 * Every operation is async and atomic on its key, so a Redis or SQL store can implement it
 * without changing callers: set-if-absent is Redis `SET NX PX`, compare-and-set is a
 * version check (`WATCH`/Lua, or `UPDATE ... WHERE version = ?`).
 *
 * Values must be JSON-serialisable plain data, and are treated as immutable: write a new
 * object to change one, never mutate what `get` returned.
 */
export interface StoreEntry<T> {
  value: T;
  /** Starts at 1 and grows by one on every successful write. */
  version: number;
}

export interface StoreWriteOptions {
  /** Time to live in milliseconds; the entry disappears after it. Omit for no expiry. */
  ttlMs?: number;
}

/**
 * A loss of a store's data, as the store noticed it: the marker it keeps was gone (a Redis
 * restarted without persistence, a failover to an empty replica, a flush). Everything the store
 * held before `detectedAt` may be gone: invoices, callback records, sessions, orders.
 */
export interface HubtelStoreLoss {
  /** When it was first noticed (ISO), by this process or another sharing the store. */
  detectedAt: string;
  /** Since when the lost data had been kept (ISO): when the vanished marker was written, if known. */
  keptSince?: string;
  /** Where the data was lost: the Redis, or the cluster masters whose share was lost. */
  where: string[];
  /** When an operator acknowledged it (ISO); until then health checks report the store down. */
  acknowledgedAt?: string;
  /** What was lost and what to do, for logs and health answers. */
  message: string;
}

export interface HubtelStore {
  /**
   * True for a store in this process (MemoryStore): nothing in it outlives the process and no
   * other instance shares it, so its jobs run in this process (never on BullMQ).
   */
  readonly local?: boolean;
  get<T>(key: string): Promise<StoreEntry<T> | undefined>;
  /** Writes only when the key holds nothing (or has expired). True when this call wrote. */
  setIfAbsent<T>(key: string, value: T, options?: StoreWriteOptions): Promise<boolean>;
  /**
   * Writes only when the key's current version is `expectedVersion`. Returns the new entry, or
   * undefined when another writer got there first (or the key is gone).
   */
  compareAndSet<T>(
    key: string,
    expectedVersion: number,
    value: T,
    options?: StoreWriteOptions,
  ): Promise<StoreEntry<T> | undefined>;
  /** Unconditional write. */
  set<T>(key: string, value: T, options?: StoreWriteOptions): Promise<StoreEntry<T>>;
  delete(key: string): Promise<boolean>;
  /**
   * Optional: deletes the key only when its current version is `expectedVersion` (true when this
   * call deleted it). Lets an instance drop a record it wrote without removing a newer one another
   * instance wrote since. Without it, callers fall back to a compare-and-set of a short-lived
   * placeholder (see `deleteIfVersion`).
   */
  compareAndDelete?(key: string, expectedVersion: number): Promise<boolean>;
  /** Every live entry whose key starts with `prefix` (for reconciliation and recovery scans). */
  scan<T>(prefix: string): AsyncIterable<[string, StoreEntry<T>]>;
  /**
   * Optional: one round trip to where the entries live; rejects when it cannot be made. Health
   * checks call it; a store in this process (MemoryStore) has none: it is up while the app is.
   */
  ping?(): Promise<void>;
  /**
   * Optional: the last loss of the store's data (checked now when it can be), acknowledged or not;
   * undefined when none was seen. A store in this process (MemoryStore) loses its data only with
   * the app and has none.
   */
  lostData?(): Promise<HubtelStoreLoss | undefined>;
}

/** TTL of the placeholder `deleteIfVersion` writes on a store without `compareAndDelete`. */
const PLACEHOLDER_TTL_MS = 1;

/**
 * Deletes `key` only at `expectedVersion`: the store's `compareAndDelete` when it has one, else an
 * atomic compare-and-set of a null that expires at once (readers treat it as absent or unreadable).
 */
export async function deleteIfVersion(
  store: HubtelStore,
  key: string,
  expectedVersion: number,
): Promise<boolean> {
  if (store.compareAndDelete) return store.compareAndDelete(key, expectedVersion);
  return (await store.compareAndSet(key, expectedVersion, null, { ttlMs: PLACEHOLDER_TTL_MS })) !== undefined;
}
