import { Redis } from 'ioredis';
import { HubtelStoreUnavailableError } from 'nestjs-hubtel';
import { describeStoreContract } from '../../core/src/store/__tests__/store-contract.js';
import { RedisServer, redisBinary } from '../../../test/support/redis-server.js';
import { RedisStore, escapeGlob } from './redis.store.js';

redisBinary.describe('RedisStore', () => {
  let server: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url, { lazyConnect: true });
    await admin.connect();
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.dispose();
  });

  // Both protocols: ioredis speaks RESP3 by default, RESP2 when asked (or to an older server).
  for (const protocol of [3, 2] as const) {
    describeStoreContract(
      `RedisStore (RESP${protocol})`,
      async () => {
        await admin.flushdb();
        const store = new RedisStore({ url: server.url, options: { protocol } });
        await store.connect();
        return store;
      },
      (store) => (store as RedisStore).close(),
    );
  }

  describeStoreContract(
    'RedisStore with a key prefix on a client of yours',
    async () => {
      await admin.flushdb();
      // Another app's keys under the same names, outside the prefix: never seen nor touched.
      await admin.set('race', 'other app');
      await admin.set('a*b:1', 'other app');
      return new RedisStore({ client: admin, keyPrefix: 'shop[1]*:' });
    },
    async (store) => {
      await (store as RedisStore).close(); // not ours: stays open
      expect(admin.status).toBe('ready');
      expect(await admin.get('race')).toBe('other app');
    },
  );

  describe('on the wire', () => {
    let store: RedisStore;
    beforeEach(async () => {
      await admin.flushdb();
      store = new RedisStore({ url: server.url, keyPrefix: 'app:' });
      await store.connect();
    });
    afterEach(() => store.close());

    it('keeps one string per key, `<version>:<json>`, with Redis expiring it', async () => {
      await store.set('k', { a: 1 }, { ttlMs: 60_000 });
      await store.compareAndSet('k', 1, { a: 2 });
      expect(await admin.get('app:k')).toBe('2:{"a":2}');
      expect(await admin.pttl('app:k')).toBeGreaterThan(0); // compare-and-set kept the expiry
      await store.set('k', { a: 3 });
      expect(await admin.pttl('app:k')).toBe(-1); // set without a TTL removed it
      const scanned: string[] = [];
      for await (const [key] of store.scan('')) scanned.push(key);
      expect(scanned).toEqual(['k']);
    });

    it('escapes every glob character of the prefix', () => {
      expect(escapeGlob('a*b?c[d]e\\f')).toBe('a\\*b\\?c\\[d\\]e\\\\f');
    });

    it('refuses an entry it did not write, as a typed error', async () => {
      await admin.set('app:foreign', 'not an entry');
      await admin.hset('app:hash', 'f', 'v');
      await expect(store.get('foreign')).rejects.toBeInstanceOf(HubtelStoreUnavailableError);
      await expect(store.set('foreign', 1)).rejects.toMatchObject({ code: 'HUBTEL_STORE_UNAVAILABLE' });
      await expect(store.compareAndSet('hash', 1, 1)).rejects.toMatchObject({
        code: 'HUBTEL_STORE_UNAVAILABLE',
      });
    });

    it('takes a client, or a url and/or options, and no ioredis keyPrefix on a client', () => {
      expect(() => new RedisStore({})).toThrow(/a client, a url or options, or a cluster/);
      expect(() => new RedisStore({ client: admin, url: server.url })).toThrow(
        /give one of: a client of yours, a url and\/or options, or a cluster/,
      );
      const prefixed = new Redis({ lazyConnect: true, keyPrefix: 'x:' });
      expect(() => new RedisStore({ client: prefixed })).toThrow(/keyPrefix/);
      prefixed.disconnect();
    });
  });

  describe('while Redis is down', () => {
    it('fails every operation at once with HUBTEL_STORE_UNAVAILABLE, and works again once Redis is back', async () => {
      const store = new RedisStore({ url: server.url });
      await store.connect();
      try {
        expect(await store.setIfAbsent('before', 1)).toBe(true);
        await expect(store.ping()).resolves.toBeUndefined();
        await server.restart();
        await server.stop();
        const calls: Array<() => Promise<unknown>> = [
          () => store.get('k'),
          () => store.setIfAbsent('k', 1),
          () => store.compareAndSet('k', 1, 2),
          () => store.set('k', 1),
          () => store.delete('k'),
          () => store.ping(),
          async () => {
            for await (const entry of store.scan('')) void entry;
          },
        ];
        for (const call of calls) {
          await expect(call()).rejects.toMatchObject({ code: 'HUBTEL_STORE_UNAVAILABLE' });
        }
        await server.restart();
        await waitUntil(async () => (await store.setIfAbsent('after', 1).catch(() => false)) === true);
        // Lua scripts are sent again to the fresh server (it answered NOSCRIPT).
        expect(await store.set('after', 2)).toEqual({ value: 2, version: 2 });
        expect(await store.compareAndSet('after', 2, 3)).toEqual({ value: 3, version: 3 });
      } finally {
        await store.close();
        if (!server.running) await server.restart();
        admin.disconnect();
        admin = new Redis(server.url, { lazyConnect: true });
        await admin.connect();
      }
    });

    it('fails a command cut off by a dropped connection instead of sending it again (a resent compare-and-set would lose to itself)', async () => {
      const store = new RedisStore({ url: server.url, commandTimeoutMs: 60_000 });
      await store.connect();
      try {
        await store.set('cut', 'a');
        server.pause(); // the command will sit unanswered in the server's socket buffer
        const outcome = store.compareAndSet('cut', 1, 'b').then(
          (entry) => ({ entry }),
          (error: unknown) => ({ error }),
        );
        await new Promise((resolve) => setImmediate(resolve));
        (store.client as unknown as { stream: { destroy(): void } }).stream.destroy();
        server.resume(); // it applies the command, then sees the connection gone
        expect(await outcome).toEqual({
          error: expect.objectContaining({ code: 'HUBTEL_STORE_UNAVAILABLE' }),
        });
        await waitUntil(async () => (await store.get('cut').catch(() => undefined)) !== undefined);
        expect(await store.get('cut')).toEqual({ value: 'b', version: 2 });
      } finally {
        server.resume();
        await store.close();
      }
    });

    it('refuses to start when Redis cannot be reached', async () => {
      const store = new RedisStore({ url: 'redis://127.0.0.1:1', options: { retryStrategy: () => null } });
      await expect(store.connect()).rejects.toBeInstanceOf(HubtelStoreUnavailableError);
      await store.close();
    });
  });
});

async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
