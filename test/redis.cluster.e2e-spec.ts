import { Cluster, Redis } from 'ioredis';
import { HubtelConfigError, HubtelRedisConfigError } from 'nestjs-hubtel';
import { RedisStore } from 'nestjs-hubtel/redis';
import { describeStoreContract } from '../libs/core/src/store/__tests__/store-contract.js';
import { RedisCluster, redisClusterBinaries } from './support/redis-cluster.js';

/** The store on a 3-master Redis Cluster: the same contract, and keys spread over every master. */
redisClusterBinaries.describe('RedisStore on a Redis Cluster', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 30_000);
  afterAll(() => cluster?.dispose());

  describeStoreContract(
    'RedisStore (cluster: { nodes })',
    async () => {
      await cluster.flushAll();
      const store = new RedisStore({ cluster: { nodes: cluster.nodes } });
      await store.connect();
      return store;
    },
    (store) => (store as RedisStore).close(),
  );

  describeStoreContract(
    'RedisStore with a key prefix on a Cluster client of yours',
    async () => {
      await cluster.flushAll();
      return new RedisStore({ client: cluster.client(), keyPrefix: 'shop[1]*:' });
    },
    (store) => {
      (store as RedisStore).client.disconnect();
    },
  );

  describe('listing', () => {
    let store: RedisStore;
    beforeEach(async () => {
      await cluster.flushAll();
      store = new RedisStore({ cluster: { nodes: cluster.nodes } });
      await store.connect();
    });
    afterEach(() => store.close());

    it('spreads keys over every master and scans all of them (one node held about a third)', async () => {
      const written = Array.from({ length: 300 }, (_, i) => `hubtel:checkout:job:dead-${i}`);
      await Promise.all(written.map((key, i) => store.set(key, { i })));
      await store.set('hubtel:other:1', 'not listed');
      const perMaster = await cluster.keysPerMaster();
      expect(perMaster).toHaveLength(3);
      for (const count of perMaster) expect(count).toBeGreaterThan(50);
      for (let round = 0; round < 3; round++) {
        const seen: string[] = [];
        for await (const [key, entry] of store.scan<{ i: number }>('hubtel:checkout:job:')) {
          expect(entry.value).toEqual({ i: Number(key.split('-')[1]) });
          seen.push(key);
        }
        expect(seen.sort()).toEqual([...written].sort());
      }
    });

    it('lists 7 keys as 7, every time (the one-node SCAN found 1 of 7 four times in five)', async () => {
      for (let i = 0; i < 7; i++) await store.set(`s:${i}`, i);
      for (let round = 0; round < 5; round++) {
        let count = 0;
        for await (const entry of store.scan('s:')) count += entry ? 1 : 0;
        expect(count).toBe(7);
      }
    });
  });

  it('keeps a loss marker on every master, and names the one master whose share was lost', async () => {
    await cluster.flushAll();
    const a = new RedisStore({ cluster: { nodes: cluster.nodes }, lossCheckIntervalMs: 0 });
    const b = new RedisStore({ cluster: { nodes: cluster.nodes }, lossCheckIntervalMs: 0 });
    await a.connect();
    await b.connect();
    try {
      expect(await cluster.keysPerMaster({ markers: true })).toEqual([1, 1, 1]);
      await expect(a.lostData()).resolves.toBeUndefined();
      const lost = cluster.servers[1]!;
      const node = new Redis(lost.url);
      await node.flushall(); // that master came back empty; the others kept theirs
      node.disconnect();
      const seen = await a.lostData();
      expect(seen?.where).toEqual([
        expect.stringMatching(new RegExp(`^127\\.0\\.0\\.1:${lost.port} \\(slots \\d+-\\d+\\)$`)),
      ]);
      expect(await b.lostData()).toEqual(seen);
      await a.acknowledgeLoss();
      expect((await b.lostData())?.acknowledgedAt).toEqual(expect.any(String));
    } finally {
      await a.close();
      await b.close();
    }
  });

  describe('refuses what it cannot use, at startup, saying what to change', () => {
    it('a url at one node of the cluster (most keys would answer MOVED)', async () => {
      const store = new RedisStore({ url: `redis://127.0.0.1:${cluster.nodes[0]!.port}` });
      const refused = await store.connect().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(HubtelRedisConfigError);
      expect(refused).toBeInstanceOf(HubtelConfigError);
      expect(refused).toMatchObject({
        code: 'HUBTEL_REDIS_UNUSABLE',
        reason: 'CLUSTER_NODE_WITHOUT_CLUSTER_CLIENT',
        message: expect.stringContaining('cluster: { nodes'),
      });
      // Closed, not left retrying (nor falling back to another address).
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(store.client.status).toBe('end');
    });

    it('a single-node client of yours on a cluster node', async () => {
      const node = new Redis(`redis://127.0.0.1:${cluster.nodes[1]!.port}`);
      try {
        await expect(new RedisStore({ client: node }).connect()).rejects.toMatchObject({
          code: 'HUBTEL_REDIS_UNUSABLE',
          option: 'redis.client',
        });
      } finally {
        node.disconnect();
      }
    });

    it('a keyPrefix with a hash tag (every key on one node)', () => {
      expect(() => new RedisStore({ cluster: { nodes: cluster.nodes }, keyPrefix: '{shop}:' })).toThrow(
        expect.objectContaining({ code: 'HUBTEL_REDIS_UNUSABLE', reason: 'PREFIX_WITH_HASH_TAG' }),
      );
    });

    it('a Cluster client with an ioredis keyPrefix, and nodes that are no nodes', () => {
      const prefixed = new Cluster(cluster.nodes, { lazyConnect: true, keyPrefix: 'x:' });
      expect(() => new RedisStore({ client: prefixed })).toThrow(
        expect.objectContaining({ reason: 'CLIENT_UNUSABLE' }),
      );
      expect(() => new RedisStore({ cluster: { nodes: [] } })).toThrow(/at least one node/);
      expect(() => new RedisStore({ cluster: { nodes: [{ host: '', port: 1 }] } })).toThrow(
        /redis.cluster.nodes\[0\]/,
      );
      expect(
        () => new RedisStore({ cluster: { nodes: cluster.nodes }, url: 'redis://127.0.0.1:6379' }),
      ).toThrow(/got url, cluster/);
    });
  });
});
