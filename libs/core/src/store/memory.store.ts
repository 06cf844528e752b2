import type { HubtelStore, StoreEntry, StoreWriteOptions } from './hubtel-store.interface.js';

interface Slot {
  value: unknown;
  version: number;
  /** Epoch ms; 0 = never. */
  expiresAt: number;
}

export interface MemoryStoreOptions {
  /** How often expired entries are swept (they are also dropped lazily on read). Default 30 s. */
  sweepIntervalMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/**
 * The default store: a Map in this process. Atomic because Node runs one callback at a time and
 * every operation completes synchronously before its promise resolves. Lost on restart: use a
 * persistent store in production when callbacks must survive a crash.
 */
export class MemoryStore implements HubtelStore {
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
    if (this.live(key)) return false;
    this.map.set(key, { value, version: 1, expiresAt: this.expiry(options) });
    return true;
  }

  async compareAndSet<T>(
    key: string,
    expectedVersion: number,
    value: T,
    options?: StoreWriteOptions,
  ): Promise<StoreEntry<T> | undefined> {
    const slot = this.live(key);
    if (!slot || slot.version !== expectedVersion) return undefined;
    const next: Slot = {
      value,
      version: slot.version + 1,
      expiresAt: options?.ttlMs === undefined ? slot.expiresAt : this.expiry(options),
    };
    this.map.set(key, next);
    return { value, version: next.version };
  }

  async set<T>(key: string, value: T, options?: StoreWriteOptions): Promise<StoreEntry<T>> {
    const version = (this.live(key)?.version ?? 0) + 1;
    this.map.set(key, { value, version, expiresAt: this.expiry(options) });
    return { value, version };
  }

  async delete(key: string): Promise<boolean> {
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

  /** Stops the sweep timer (it is unref'd, so this is only tidiness). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private expiry(options?: StoreWriteOptions): number {
    const ttl = options?.ttlMs;
    if (ttl === undefined) return 0;
    if (!(ttl > 0)) throw new RangeError(`ttlMs must be a positive number, got ${ttl}`);
    return this.now() + ttl;
  }

  private live(key: string): Slot | undefined {
    const slot = this.map.get(key);
    if (!slot) return undefined;
    if (slot.expiresAt !== 0 && slot.expiresAt <= this.now()) {
      this.map.delete(key);
      return undefined;
    }
    return slot;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, slot] of this.map) {
      if (slot.expiresAt !== 0 && slot.expiresAt <= now) this.map.delete(key);
    }
  }
}
