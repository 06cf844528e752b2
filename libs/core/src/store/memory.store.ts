import type { HubtelStore, StoreEntry, StoreWriteOptions } from './hubtel-store.interface.js';

/** One key's state, updated in place (callers see copies): a write allocates nothing, one lookup. */
class Slot {
  constructor(
    public value: unknown,
    public version: number,
    /** Epoch ms; 0 = never. */
    public expiresAt: number,
  ) {}
}

export interface MemoryStoreOptions {
  /** How often expired entries are swept (they are also dropped lazily on read). Default 30 s. */
  sweepIntervalMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/** The default store: a Map in this process, atomic as every operation is synchronous; lost on restart. */
export class MemoryStore implements HubtelStore {
  readonly local = true;
  private readonly map = new Map<string, Slot>();
  private readonly now: () => number;
  private readonly timer?: NodeJS.Timeout;

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    const every = options.sweepIntervalMs ?? 30_000;
    if (every > 0) {
      this.timer = setInterval(() => this.sweep(), every);
      this.timer.unref();
    }
  }

  get size(): number {
    return this.map.size;
  }

  async get<T>(key: string): Promise<StoreEntry<T> | undefined> {
    const slot = this.live(key);
    return slot ? { value: slot.value as T, version: slot.version } : undefined;
  }

  async setIfAbsent<T>(key: string, value: T, options?: StoreWriteOptions): Promise<boolean> {
    const ttl = ttlOf(options);
    const slot = this.map.get(key);
    if (slot === undefined) {
      this.map.set(key, new Slot(value, 1, ttl === 0 ? 0 : this.now() + ttl));
      return true;
    }
    if (slot.expiresAt === 0) return false;
    const now = this.now();
    if (slot.expiresAt > now) return false;
    // Expired counts as absent: the key is taken again, from version 1 (the slot is reused).
    slot.value = value;
    slot.version = 1;
    slot.expiresAt = ttl === 0 ? 0 : now + ttl;
    return true;
  }

  async compareAndSet<T>(
    key: string,
    expectedVersion: number,
    value: T,
    options?: StoreWriteOptions,
  ): Promise<StoreEntry<T> | undefined> {
    const ttl = ttlOf(options);
    const slot = this.map.get(key);
    if (slot === undefined || slot.version !== expectedVersion) return undefined;
    let now = 0;
    if (slot.expiresAt !== 0 && slot.expiresAt <= (now = this.now())) {
      this.map.delete(key);
      return undefined;
    }
    slot.value = value;
    slot.version = expectedVersion + 1;
    // Without a TTL the entry keeps its expiry.
    if (ttl !== 0) slot.expiresAt = (now || this.now()) + ttl;
    return { value, version: slot.version };
  }

  async set<T>(key: string, value: T, options?: StoreWriteOptions): Promise<StoreEntry<T>> {
    const ttl = ttlOf(options);
    const slot = this.map.get(key);
    const now = ttl !== 0 || (slot !== undefined && slot.expiresAt !== 0) ? this.now() : 0;
    const expiresAt = ttl === 0 ? 0 : now + ttl;
    if (slot === undefined) {
      this.map.set(key, new Slot(value, 1, expiresAt));
      return { value, version: 1 };
    }
    // An expired entry counts as absent: the version starts again from 1.
    slot.version = slot.expiresAt !== 0 && slot.expiresAt <= now ? 1 : slot.version + 1;
    slot.value = value;
    slot.expiresAt = expiresAt;
    return { value, version: slot.version };
  }

  async delete(key: string): Promise<boolean> {
    return this.map.delete(key);
  }

  async compareAndDelete(key: string, expectedVersion: number): Promise<boolean> {
    const slot = this.live(key);
    if (slot === undefined || slot.version !== expectedVersion) return false;
    return this.map.delete(key);
  }

  async *scan<T>(prefix: string): AsyncIterable<[string, StoreEntry<T>]> {
    // Snapshot the keys so writers during iteration cannot disturb it.
    for (const key of [...this.map.keys()]) {
      if (!key.startsWith(prefix)) continue;
      const slot = this.live(key);
      if (slot) yield [key, { value: slot.value as T, version: slot.version }];
    }
  }

  /** Stops the (unref'd) sweep timer. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private live(key: string): Slot | undefined {
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    if (slot.expiresAt !== 0 && slot.expiresAt <= this.now()) {
      this.map.delete(key);
      return undefined;
    }
    return slot;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, slot] of this.map)
      if (slot.expiresAt !== 0 && slot.expiresAt <= now) this.map.delete(key);
  }
}

/** The write's TTL in ms; 0 = none. */
function ttlOf(options: StoreWriteOptions | undefined): number {
  const ttl = options?.ttlMs;
  if (ttl === undefined) return 0;
  if (!(ttl > 0)) throw new RangeError(`ttlMs must be a positive number, got ${ttl}`);
  return ttl;
}
