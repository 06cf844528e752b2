import { deleteIfVersion, type HubtelStore } from './hubtel-store.interface.js';
import { MemoryStore } from './memory.store.js';
import { describeStoreContract } from './__tests__/store-contract.js';

describeStoreContract(
  'MemoryStore',
  () => new MemoryStore({ sweepIntervalMs: 0 }),
  (store) => (store as MemoryStore).close(),
);

describe('MemoryStore', () => {
  let clock: number;
  let store: MemoryStore;
  beforeEach(() => {
    clock = 1_000;
    store = new MemoryStore({ sweepIntervalMs: 0, now: () => clock });
  });

  it('setIfAbsent: of many concurrent writers of one key exactly one wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.setIfAbsent('k', { by: i })),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect(await store.get('k')).toEqual({ value: { by: winner }, version: 1 });
  });

  it('compareAndSet writes only on the expected version, and bumps it', async () => {
    await store.setIfAbsent('k', 'a');
    const [first, second] = await Promise.all([
      store.compareAndSet('k', 1, 'b'),
      store.compareAndSet('k', 1, 'c'),
    ]);
    expect(first).toEqual({ value: 'b', version: 2 });
    expect(second).toBeUndefined();
    expect(await store.get('k')).toEqual({ value: 'b', version: 2 });
    expect(await store.compareAndSet('missing', 1, 'x')).toBeUndefined();
    expect(await store.set('k', 'd')).toEqual({ value: 'd', version: 3 });
  });

  it('entries expire after their TTL; compareAndSet without a TTL keeps the old expiry', async () => {
    await store.setIfAbsent('k', 'a', { ttlMs: 100 });
    clock += 50;
    expect(await store.compareAndSet('k', 1, 'b')).toEqual({ value: 'b', version: 2 });
    clock += 50;
    expect(await store.get('k')).toBeUndefined();
    // Expired counts as absent: the key can be taken again, from version 1.
    expect(await store.setIfAbsent('k', 'c')).toBe(true);
    expect(await store.get('k')).toEqual({ value: 'c', version: 1 });
    await expect(store.set('x', 1, { ttlMs: 0 })).rejects.toThrow(RangeError);
  });

  it('an expired entry counts as absent for every write, and entries handed out never change', async () => {
    await store.set('k', 'a', { ttlMs: 10 });
    const first = await store.get('k');
    expect(await store.compareAndSet('k', 1, 'b')).toEqual({ value: 'b', version: 2 });
    expect(first).toEqual({ value: 'a', version: 1 }); // a copy, not the store's own slot
    clock += 10;
    expect(await store.compareAndSet('k', 2, 'c')).toBeUndefined();
    expect(await store.set('k', 'd')).toEqual({ value: 'd', version: 1 });
    clock += 1_000_000; // no TTL: never expires
    expect(await store.setIfAbsent('k', 'e')).toBe(false);
    expect(await store.set('k', 'f', { ttlMs: 5 })).toEqual({ value: 'f', version: 2 });
    clock += 5;
    expect(await store.setIfAbsent('k', 'g', { ttlMs: 5 })).toBe(true);
    expect(await store.get('k')).toEqual({ value: 'g', version: 1 });
    clock += 4;
    expect(await store.get('k')).toEqual({ value: 'g', version: 1 });
    clock += 1;
    expect(await store.get('k')).toBeUndefined();
    await expect(store.compareAndSet('k', 1, 'x', { ttlMs: -1 })).rejects.toThrow(RangeError);
  });

  it('scan lists live entries under a prefix; delete removes', async () => {
    await store.set('inv:1', 1);
    await store.set('inv:2', 2, { ttlMs: 10 });
    await store.set('cb:1', 3);
    clock += 10;
    const seen: [string, unknown][] = [];
    for await (const [key, entry] of store.scan<number>('inv:')) seen.push([key, entry.value]);
    expect(seen).toEqual([['inv:1', 1]]);
    expect(await store.delete('inv:1')).toBe(true);
    expect(await store.delete('inv:1')).toBe(false);
    expect(await store.get('inv:1')).toBeUndefined();
  });

  it('the sweep drops expired entries nobody reads', async () => {
    const swept = new MemoryStore({ sweepIntervalMs: 5, now: () => clock });
    try {
      await swept.set('a', 1, { ttlMs: 1 });
      await swept.set('b', 2);
      clock += 1;
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(swept.size).toBe(1);
    } finally {
      swept.close();
    }
  });
});

describe('deleteIfVersion', () => {
  it('uses compareAndDelete, and on a store without it a placeholder that is gone at once', async () => {
    let clock = 1_000;
    const memory = new MemoryStore({ sweepIntervalMs: 0, now: () => clock });
    await memory.set('k', 'a');
    await memory.compareAndSet('k', 1, 'b');
    expect(await deleteIfVersion(memory, 'k', 1)).toBe(false);
    expect(await deleteIfVersion(memory, 'k', 2)).toBe(true);
    expect(memory.size).toBe(0);

    // A store of yours written before compareAndDelete existed.
    const older: HubtelStore = {
      get: (key) => memory.get(key),
      setIfAbsent: (key, value, options) => memory.setIfAbsent(key, value, options),
      compareAndSet: (key, version, value, options) => memory.compareAndSet(key, version, value, options),
      set: (key, value, options) => memory.set(key, value, options),
      delete: (key) => memory.delete(key),
      scan: (prefix) => memory.scan(prefix),
    };
    await older.set('k', 'a');
    expect(await deleteIfVersion(older, 'k', 2)).toBe(false);
    expect(await deleteIfVersion(older, 'k', 1)).toBe(true);
    clock += 1;
    expect(await older.get('k')).toBeUndefined();
  });
});
