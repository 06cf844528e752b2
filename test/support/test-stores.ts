/**
 * The stores the inbound e2e suites run on: the default MemoryStore, and the Redis store on a
 * database of the Jest worker's redis-server, or on a private server for a suite that stops it
 * (`ownServer`). The Redis variant is skipped with a SKIPPED: line without redis-server locally,
 * and fails under CI: test/support/system.ts.
 *
 *   for (const kind of STORE_KINDS) {
 *     const stores = storeFixture(kind);
 *     stores.describe(`... (${kind} store)`, () => {
 *       beforeAll(async () => { store = await stores.create(); });
 *       afterAll(() => stores.dispose());
 *     });
 *   }
 */
import type { DynamicModule } from '@nestjs/common';
import { Redis } from 'ioredis';
import { MemoryStore, type HubtelStore } from 'nestjs-hubtel';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { RedisStore } from 'nestjs-hubtel/redis';
import { RedisCluster, redisClusterBinaries } from './redis-cluster.js';
import { RedisServer, redisBinary, redisDatabase, type RedisDatabase } from './redis-server.js';

/** `redis-cluster`: the Redis store on a private 3-master Redis Cluster (suites opt in to it). */
export type StoreKind = 'memory' | 'redis' | 'redis-cluster';
export const STORE_KINDS: StoreKind[] = ['memory', 'redis'];
/** STORE_KINDS and the cluster: for the suites whose keys are listed (scan) across the store. */
export const STORE_KINDS_WITH_CLUSTER: StoreKind[] = [...STORE_KINDS, 'redis-cluster'];

export interface StoreFixture {
  readonly kind: StoreKind;
  /** `describe`, or (redis without redis-server) skipped locally / failing under CI. */
  describe(name: string, fn: () => void): void;
  /** An empty store (redis: a new RedisStore on this fixture's database, flushed). */
  create(): Promise<HubtelStore>;
  /** The Redis behind the stores, `redis://…/<db>` (redis only; set by the first `create`). */
  readonly redisUrl: string | undefined;
  /** The private redis-server behind the stores (redis with `ownServer` only). */
  readonly server: RedisServer | undefined;
  /** The Redis Cluster behind the stores (redis-cluster only; started by the first `create`). */
  readonly cluster: RedisCluster | undefined;
  /**
   * What an app on this fixture's store imports to run its jobs: HubtelBullmqModule on the same
   * Redis (a Redis store's jobs run on BullMQ: the modules refuse to start without it), nothing
   * for the memory store. Call after `create()`.
   */
  jobRunnerImports(): DynamicModule[];
  /** Closes the stores created and lets the Redis go (empties the database, stops a server). */
  dispose(): Promise<void>;
}

export interface StoreFixtureOptions {
  /** A private redis-server rather than a database of the worker's: for suites that stop it. */
  ownServer?: boolean;
}

export function storeFixture(kind: StoreKind, options: StoreFixtureOptions = {}): StoreFixture {
  const created: HubtelStore[] = [];
  let redis: RedisDatabase | undefined;
  let server: RedisServer | undefined;
  let cluster: RedisCluster | undefined;
  return {
    kind,
    get redisUrl() {
      return redis?.url;
    },
    get server() {
      return server;
    },
    get cluster() {
      return cluster;
    },
    describe(name, fn) {
      if (kind === 'redis') redisBinary.describe(name, fn);
      else if (kind === 'redis-cluster') redisClusterBinaries.describe(name, fn);
      else describe(name, fn);
    },
    async create() {
      if (kind === 'memory') {
        const store = new MemoryStore();
        created.push(store);
        return store;
      }
      if (kind === 'redis-cluster') {
        cluster ??= await RedisCluster.start();
        await cluster.flushAll();
        const store = new RedisStore({ cluster: { nodes: cluster.nodes } });
        await store.connect();
        created.push(store);
        return store;
      }
      if (!redis && options.ownServer) {
        const own = (server = await RedisServer.start());
        redis = { url: own.url, dispose: () => own.dispose() };
      }
      redis ??= await redisDatabase();
      // Emptied before the store connects: a flush after would be a loss of its data to it.
      const admin = new Redis(redis.url);
      await admin.flushdb().finally(() => admin.disconnect());
      const store = new RedisStore({ url: redis.url });
      await store.connect();
      created.push(store);
      return store;
    },
    jobRunnerImports() {
      if (kind === 'memory') return [];
      if (kind === 'redis-cluster') {
        if (!cluster) throw new Error('jobRunnerImports() before create()');
        return [HubtelBullmqModule.forRoot({ cluster: { nodes: cluster.nodes } })];
      }
      if (!redis) throw new Error('jobRunnerImports() before create()');
      return [HubtelBullmqModule.forRoot({ url: redis.url })];
    },
    async dispose() {
      for (const store of created.splice(0)) {
        if (store instanceof RedisStore) await store.close();
        else if (store instanceof MemoryStore) store.close();
      }
      await redis?.dispose();
      redis = server = undefined;
      await cluster?.dispose();
      cluster = undefined;
    },
  };
}

/** `describe` once per adapter and store kind: "<title> (<adapter>, <kind> store)". */
export function describeEachStore<A extends string>(
  adapters: readonly A[],
  titled: string | ({ title: string } & StoreFixtureOptions),
  fn: (adapter: A, stores: StoreFixture) => void,
): void {
  const { title, ...options } = typeof titled === 'string' ? { title: titled } : titled;
  for (const adapter of adapters) {
    for (const kind of STORE_KINDS) {
      const stores = storeFixture(kind, options);
      stores.describe(`${title} (${adapter}, ${kind} store)`, () => fn(adapter, stores));
    }
  }
}
