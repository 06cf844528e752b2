import type { HubtelStore } from '../hubtel-store.interface.js';

/**
 * The behaviour every HubtelStore must have, run against each implementation (MemoryStore, the
 * Redis store): callers rely on exactly this, whatever the store. Real clock: TTLs are short and
 * the tests wait past them (never asserting that something is still there before a short TTL).
 *
 * `make` gives a store whose keyspace is empty for each test; `end` releases it.
 */
export function describeStoreContract(
  name: string,
  make: () => Promise<HubtelStore> | HubtelStore,
  end: (store: HubtelStore) => Promise<void> | void = () => undefined,
): void {
  describe(`${name}: the HubtelStore contract`, () => {
    let store: HubtelStore;
    beforeEach(async () => {
      store = await make();
    });
    afterEach(async () => {
      await end(store);
    });

    const TTL = 500;
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const all = async (prefix: string) => {
      const seen: Array<[string, unknown, number]> = [];
      for await (const [key, entry] of store.scan(prefix)) seen.push([key, entry.value, entry.version]);
      return seen.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    };

    it('setIfAbsent: of 50 concurrent writers of one key exactly one wins, at version 1', async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.setIfAbsent('race', { by: i })),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.get('race')).toEqual({ value: { by: results.indexOf(true) }, version: 1 });
      expect(await store.setIfAbsent('race', 'late')).toBe(false);
    });

    it('compareAndSet: of concurrent writers on one version exactly one wins, and the version grows by one', async () => {
      await store.setIfAbsent('k', 'a');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.compareAndSet('k', 1, `by ${i}`)),
      );
      const winners = results.filter((r) => r !== undefined);
      expect(winners).toHaveLength(1);
      expect(winners[0]!.version).toBe(2);
      expect(await store.get('k')).toEqual(winners[0]);
      expect(await store.compareAndSet('k', 1, 'stale')).toBeUndefined();
      expect(await store.compareAndSet('missing', 1, 'x')).toBeUndefined();
      expect(await store.compareAndSet('k', 2, 'c')).toEqual({ value: 'c', version: 3 });
      expect(await store.set('k', 'd')).toEqual({ value: 'd', version: 4 });
      expect(await store.set('new', 'n')).toEqual({ value: 'n', version: 1 });
    });

    it('compareAndDelete: deletes only at the expected version (an entry rewritten since stays)', async () => {
      expect(store.compareAndDelete).toBeDefined();
      await store.set('cd', 'a');
      await store.compareAndSet('cd', 1, 'b');
      expect(await store.compareAndDelete!('cd', 1)).toBe(false);
      expect(await store.get('cd')).toEqual({ value: 'b', version: 2 });
      expect(await store.compareAndDelete!('cd', 2)).toBe(true);
      expect(await store.get('cd')).toBeUndefined();
      expect(await store.compareAndDelete!('cd', 2)).toBe(false);
      expect(await store.compareAndDelete!('missing', 1)).toBe(false);
      await store.set('cd-race', 'x');
      const results = await Promise.all(
        Array.from({ length: 10 }, () => store.compareAndDelete!('cd-race', 1)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      await store.set('cd-gone', 'x', { ttlMs: 20 });
      await wait(50);
      expect(await store.compareAndDelete!('cd-gone', 1)).toBe(false);
    });

    it('get, set and delete; values come back as the JSON that was written', async () => {
      expect(await store.get('nothing')).toBeUndefined();
      const value = { amount: 10.5, list: [1, 'two', null, { deep: true }], empty: '', none: null };
      expect(await store.set('v', value)).toEqual({ value, version: 1 });
      expect(await store.get('v')).toEqual({ value, version: 1 });
      for (const plain of [0, false, 'text', null, []]) {
        await store.set('p', plain);
        expect((await store.get('p'))?.value).toEqual(plain);
      }
      expect(await store.delete('v')).toBe(true);
      expect(await store.delete('v')).toBe(false);
      expect(await store.get('v')).toBeUndefined();
      expect(await store.setIfAbsent('v', 'again')).toBe(true);
      expect(await store.get('v')).toEqual({ value: 'again', version: 1 });
    });

    it('keeps unicode and large values intact', async () => {
      const unicode = { name: 'Kwame Nkrumah — 𝔸kwaaba 🇬🇭 ɛɔ', text: 'a\u0000b\u2028c"\\' };
      await store.set('u:ɛ🇬🇭', unicode);
      expect(await store.get('u:ɛ🇬🇭')).toEqual({ value: unicode, version: 1 });
      const large = { blob: 'x'.repeat(2 * 1024 * 1024), items: Array.from({ length: 5_000 }, (_, i) => i) };
      expect(await store.setIfAbsent('large', large)).toBe(true);
      expect(await store.get('large')).toEqual({ value: large, version: 1 });
      expect(await all('u:')).toEqual([['u:ɛ🇬🇭', unicode, 1]]);
    });

    it('entries expire after their TTL and then count as absent, from version 1 again', async () => {
      await store.setIfAbsent('t1', 'a', { ttlMs: TTL });
      await store.set('t2', 'b', { ttlMs: TTL });
      await store.set('t3', 'c', { ttlMs: TTL });
      // compareAndSet without a TTL keeps the expiry; set without one removes it.
      expect(await store.compareAndSet('t1', 1, 'a2')).toEqual({ value: 'a2', version: 2 });
      expect(await store.set('t3', 'c2')).toEqual({ value: 'c2', version: 2 });
      await wait(TTL + 50);
      expect(await store.get('t1')).toBeUndefined();
      expect(await store.get('t2')).toBeUndefined();
      expect(await store.get('t3')).toEqual({ value: 'c2', version: 2 });
      expect(await store.compareAndSet('t2', 1, 'x')).toBeUndefined();
      expect(await store.setIfAbsent('t1', 'again')).toBe(true);
      expect(await store.get('t1')).toEqual({ value: 'again', version: 1 });
      expect(await store.set('t2', 'again')).toEqual({ value: 'again', version: 1 });
      expect(await all('t')).toEqual([
        ['t1', 'again', 1],
        ['t2', 'again', 1],
        ['t3', 'c2', 2],
      ]);
      // A TTL given on compareAndSet replaces the old expiry.
      await store.set('t4', 'd', { ttlMs: 60_000 });
      await store.compareAndSet('t4', 1, 'd2', { ttlMs: 20 });
      await wait(70);
      expect(await store.get('t4')).toBeUndefined();
    });

    it('refuses a TTL that is not a positive number', async () => {
      await expect(store.set('x', 1, { ttlMs: 0 })).rejects.toThrow(RangeError);
      await expect(store.setIfAbsent('x', 1, { ttlMs: -5 })).rejects.toThrow(RangeError);
      await expect(store.compareAndSet('x', 1, 1, { ttlMs: Number.NaN })).rejects.toThrow(RangeError);
      expect(await store.get('x')).toBeUndefined();
    });

    it('scan lists live entries under a prefix, taking *, ?, [ and \\ in it literally', async () => {
      const keys = ['a*b:1', 'a*b:2', 'axb:1', 'a?c:1', 'abc:1', 'a[b]:1', 'ab:1', 'a\\d:1', 'ad:1'];
      for (const key of keys) await store.set(key, key);
      await store.set('a*b:gone', 'gone', { ttlMs: 20 });
      await wait(50);
      const under = async (prefix: string) => (await all(prefix)).map(([key]) => key);
      expect(await under('a*b:')).toEqual(['a*b:1', 'a*b:2']);
      expect(await under('a?c:')).toEqual(['a?c:1']);
      expect(await under('a[b]:')).toEqual(['a[b]:1']);
      expect(await under('a\\d')).toEqual(['a\\d:1']);
      expect(await under('a')).toEqual([...keys].sort());
      expect(await under('zzz')).toEqual([]);
      expect(await all('a*b:1')).toEqual([['a*b:1', 'a*b:1', 1]]);
    });

    it('scan goes through many keys, each once', async () => {
      const keys = Array.from({ length: 1_200 }, (_, i) => `many:${i}`);
      await Promise.all(keys.map((key, i) => store.set(key, i)));
      await store.set('other:1', 1);
      const seen = await all('many:');
      expect(seen).toHaveLength(1_200);
      expect(new Set(seen.map(([key]) => key)).size).toBe(1_200);
    });
  });
}
