/**
 * The suite's one storage interface: every operation async and atomic on its key (Redis `SET NX PX`,
 * a version check in Lua or SQL). Values are JSON-serialisable plain data, never mutated in place.
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

/** A loss of a store's data (an empty Redis after a restart or failover): anything before `detectedAt`. */
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
  /** In this process (MemoryStore), shared with no other instance: its jobs run here, never on BullMQ. */
  readonly local?: boolean;
  get<T>(key: string): Promise<StoreEntry<T> | undefined>;
  /** Writes only when the key holds nothing (or has expired). True when this call wrote. */
  setIfAbsent<T>(key: string, value: T, options?: StoreWriteOptions): Promise<boolean>;
  /** Writes only at `expectedVersion`: the new entry, or undefined when another writer got there first. */
  compareAndSet<T>(
    key: string,
    expectedVersion: number,
    value: T,
    options?: StoreWriteOptions,
  ): Promise<StoreEntry<T> | undefined>;
  set<T>(key: string, value: T, options?: StoreWriteOptions): Promise<StoreEntry<T>>;
  delete(key: string): Promise<boolean>;
  /** Optional: deletes only at `expectedVersion` (else `deleteIfVersion` writes an expiring null). */
  compareAndDelete?(key: string, expectedVersion: number): Promise<boolean>;
  /** Every live entry whose key starts with `prefix` (for reconciliation and recovery scans). */
  scan<T>(prefix: string): AsyncIterable<[string, StoreEntry<T>]>;
  /** Optional: one round trip to where the entries live, for health checks; rejects when it fails. */
  ping?(): Promise<void>;
  /** Optional: the last loss of the store's data, acknowledged or not; undefined when none was seen. */
  lostData?(): Promise<HubtelStoreLoss | undefined>;
}

/** Deletes at `expectedVersion`: `compareAndDelete`, else a compare-and-set to a null expiring at once. */
export async function deleteIfVersion(
  store: HubtelStore,
  key: string,
  expectedVersion: number,
): Promise<boolean> {
  if (store.compareAndDelete) return store.compareAndDelete(key, expectedVersion);
  return (await store.compareAndSet(key, expectedVersion, null, { ttlMs: 1 })) !== undefined;
}
