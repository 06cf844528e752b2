import { ConsoleLogger, Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { HubtelStoreUnavailableError } from 'nestjs-hubtel';
import { describeStoreContract } from '../libs/core/src/store/__tests__/store-contract.js';
import { RedisServer, redisBinary } from './support/redis-server.js';
import { CaptureLogger } from './support/capture-logger.js';
import { RedisStore, escapeGlob } from '../libs/redis/src/redis.store.js';
import { keySlot } from '../libs/redis/src/redis-store.marker.js';

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

  it('computes cluster slots as Redis does (CRC16 of the key, or of its hash tag)', () => {
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('bar')).toBe(5061);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(keySlot('a{}b')).not.toBe(keySlot('')); // an empty tag: the whole key is hashed
  });

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

  describe('noticing that Redis lost its data', () => {
    const logs = new CaptureLogger();
    const stores: RedisStore[] = [];
    /** A replica's store: no periodic check unless asked (each test says when it looks). */
    async function replica(lossCheckIntervalMs = 0): Promise<RedisStore> {
      const store = new RedisStore({ url: server.url, keyPrefix: 'shop:', lossCheckIntervalMs });
      await store.connect();
      stores.push(store);
      return store;
    }
    const lossLines = () =>
      logs.lines.filter((line) => line.level === 'error' && /LOST ITS DATA/.test(line.message));
    beforeAll(() => Logger.overrideLogger(logs));
    afterAll(() => Logger.overrideLogger(new ConsoleLogger()));
    beforeEach(async () => {
      await admin.flushall();
      logs.lines.length = 0;
    });
    afterEach(async () => {
      for (const store of stores.splice(0)) await store.close();
    });

    it('is no loss on a first start, nor on a Redis that holds data but no marker yet (an upgrade)', async () => {
      await admin.set('shop:hubtel:checkout:invoice:old', '1:{}');
      const a = await replica();
      const b = await replica();
      await expect(a.lostData()).resolves.toBeUndefined();
      await expect(b.lostData()).resolves.toBeUndefined();
      expect(lossLines()).toEqual([]);
    });

    it('after a FLUSHALL both replicas report the loss, whichever re-wrote the marker, and one acknowledgment clears it for both', async () => {
      const a = await replica();
      const b = await replica();
      await admin.flushall();
      const seenByA = await a.lostData(); // a finds the marker gone and writes the next one
      expect(seenByA).toMatchObject({ where: [`127.0.0.1:${server.port}`], keptSince: expect.any(String) });
      expect(seenByA!.acknowledgedAt).toBeUndefined();
      expect(seenByA!.message).toMatch(/LOST ITS DATA on 127\.0\.0\.1:\d+/);
      // b finds a marker again, but not the one it saw: the same loss.
      expect(await b.lostData()).toEqual(seenByA);
      expect(lossLines()).toHaveLength(2);

      const acknowledged = await b.acknowledgeLoss();
      expect(acknowledged).toMatchObject({
        detectedAt: seenByA!.detectedAt,
        acknowledgedAt: expect.any(String),
      });
      expect(await a.lostData()).toMatchObject({
        detectedAt: seenByA!.detectedAt,
        acknowledgedAt: acknowledged!.acknowledgedAt,
      });
      await expect(a.acknowledgeLoss()).resolves.toBeUndefined();
      expect(lossLines()).toHaveLength(2);
    });

    it('a replica started after the flush re-writes the marker first: it does not hide the loss from the others, and reports it too', async () => {
      const a = await replica();
      await admin.flushall();
      const late = await replica(); // finds no marker: to it, a first start
      await expect(late.lostData()).resolves.toBeUndefined();
      const seen = await a.lostData(); // the marker is not the one a saw: it records the loss in it
      expect(seen).toMatchObject({ where: [`127.0.0.1:${server.port}`] });
      expect(await late.lostData()).toEqual(seen);
      const restarted = await replica(); // and a replica started now sees it as well
      expect(await restarted.lostData()).toEqual(seen);
    });

    it('notices a restart without persistence on reconnecting, and every lossCheckIntervalMs, logging one error line per process', async () => {
      await replica(); // only its reconnection looks
      await replica(100); // its timer looks too
      await server.restart();
      await waitUntil(async () => lossLines().length === 2);
      await admin.quit().catch(() => undefined);
      admin = new Redis(server.url, { lazyConnect: true });
      await admin.connect();
      expect(lossLines()[0]!.message).toContain(`127.0.0.1:${server.port}`);
      // A second loss (a flush now) is seen by the timer alone: a new line.
      await stores[1]!.acknowledgeLoss();
      await admin.flushall();
      await waitUntil(async () => lossLines().length === 3);
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
