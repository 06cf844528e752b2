/**
 * A bounded, indexed log: a ring buffer that forgets the oldest record when full, and the keys of
 * what it dropped, so a million messages fit in constant memory while `total` stays exact.
 */
export class RecordLog<T extends object> {
  private buffer: (T | undefined)[];
  private head = 0;
  private count = 0;
  private added = 0;
  private readonly index = new Map<string, T>();
  private readonly keys = new WeakMap<T, string[]>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`RecordLog capacity must be a positive integer, got ${capacity}`);
    this.buffer = new Array<T | undefined>(capacity);
  }

  /** Records held now (at most `capacity`). */
  get size(): number {
    return this.count;
  }

  /** Records ever added since the last clear, dropped ones included. */
  get total(): number {
    return this.added;
  }

  /** Adds a record under the given keys; returns the record it dropped to make room, if any. */
  push(record: T, keys: readonly string[] = []): T | undefined {
    const evicted = this.count === this.capacity ? this.shift() : undefined;
    this.buffer[(this.head + this.count++) % this.capacity] = record;
    this.added++;
    for (const key of keys) this.addKey(record, key);
    return evicted;
  }

  /** Removes and returns the oldest record (for logs bounded by something besides their count). */
  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const oldest = this.buffer[this.head];
    this.buffer[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    if (oldest) this.forget(oldest);
    return oldest;
  }

  /** Indexes a record already in the log under one more key (a transaction id set later). */
  addKey(record: T, key: string): void {
    const list = this.keys.get(record);
    if (list) list.push(key);
    else this.keys.set(record, [key]);
    this.index.set(key, record);
  }

  get(key: string): T | undefined {
    return this.index.get(key);
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  /** Oldest first. */
  values(): T[] {
    const out = new Array<T>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.buffer[(this.head + i) % this.capacity] as T;
    return out;
  }

  /** Newest first, stopping at the first match. */
  findLast(predicate: (record: T) => boolean): T | undefined {
    for (let i = this.count - 1; i >= 0; i--) {
      const record = this.buffer[(this.head + i) % this.capacity] as T;
      if (predicate(record)) return record;
    }
    return undefined;
  }

  /** Oldest first. */
  filter(predicate: (record: T) => boolean): T[] {
    return this.values().filter(predicate);
  }

  clear(): void {
    this.buffer = new Array<T | undefined>(this.capacity);
    this.head = 0;
    this.count = 0;
    this.added = 0;
    this.index.clear();
  }

  private forget(record: T): void {
    // A key may have been re-pointed to a newer record; only drop it when it is still ours.
    for (const key of this.keys.get(record) ?? []) if (this.index.get(key) === record) this.index.delete(key);
    this.keys.delete(record);
  }
}
