import type { Cluster, Redis } from 'ioredis';
import {
  HubtelLogger,
  HubtelConfigError,
  HubtelRedisConfigError,
  HubtelStoreUnavailableError,
  type HubtelStore,
  type HubtelStoreLoss,
  type StoreEntry,
  type StoreWriteOptions,
} from 'nestjs-hubtel';
import { describeError, hashTagOf, isClusterClient, refuseClusterNode, withTimeout } from '#internal';
import { storeClient, type RedisStoreOptions } from './redis.client.js';
import { REDIS_STORE_DEFAULTS } from './redis.constants.js';
import { COMPARE_AND_DELETE_LUA, COMPARE_AND_SET_LUA, SET_LUA } from './redis-store.scripts.js';
import { RedisStoreMarkers, clusterMarkers, singleMarker, STORE_MARKER_KEY } from './redis-store.marker.js';

/** The Lua scripts, by the name they are registered under on the ioredis client. */
const SCRIPTS = {
  hubtelStoreCompareAndSet: COMPARE_AND_SET_LUA,
  hubtelStoreSet: SET_LUA,
  hubtelStoreCompareAndDelete: COMPARE_AND_DELETE_LUA,
};
type StoreCommands = Record<
  keyof typeof SCRIPTS,
  (key: string, ...args: Array<string | number>) => Promise<number>
>;

/** TTL argument of the scripts: keep the current expiry (compare-and-set without a TTL). */
const KEEP_TTL = 0;
/** TTL argument of the scripts: no expiry. */
const NO_TTL = -1;

/**
 * A HubtelStore on Redis, shared by every instance; each operation is one atomic step. Fails fast: a
 * command while Redis is down or slow rejects (answered 503, so the platform sends again).
 * Needs Redis 6.0+ and `maxmemory-policy noeviction`: an evicted entry would be a forgotten payment.
 */
export class RedisStore implements HubtelStore {
  readonly client: Redis | Cluster;
  readonly keyPrefix: string;
  private readonly owned: boolean; // the store opened the client, and so closes it
  private readonly logger = new HubtelLogger('HubtelRedisStore');
  private down = false;
  /** Connection failures before the first `ready` are reported by `connect()`, not logged. */
  private wasReady = false;
  private readonly markers: RedisStoreMarkers;
  /** On every reconnection: a Redis restarted empty is noticed at once. */
  private readonly onReady = () => void this.markers.check().catch(() => undefined);

  constructor(options: RedisStoreOptions) {
    const given = (['client', 'url', 'options', 'cluster'] as const).filter((k) => options[k] !== undefined);
    if (given.length === 0)
      throw new HubtelConfigError('redis', 'give a client, a url or options, or a cluster');
    if (given.length > 1 && !(given.length === 2 && given.includes('url') && given.includes('options')))
      throw new HubtelConfigError(
        'redis',
        `give one of: a client of yours, a url and/or options, or a cluster (got ${given.join(', ')})`,
      );
    this.keyPrefix = options.keyPrefix ?? REDIS_STORE_DEFAULTS.keyPrefix;
    if (typeof this.keyPrefix !== 'string')
      throw new HubtelConfigError('redis.keyPrefix', 'must be a string');
    const lossCheck = options.lossCheckIntervalMs ?? REDIS_STORE_DEFAULTS.lossCheckIntervalMs;
    if (!(Number.isFinite(lossCheck) && lossCheck >= 0))
      throw new HubtelConfigError('redis.lossCheckIntervalMs', 'must be 0 or a positive number');
    this.markers = new RedisStoreMarkers(this, lossCheck);
    ({ client: this.client, owned: this.owned } = storeClient(options));
    if (isClusterClient(this.client) && hashTagOf(this.keyPrefix) !== undefined)
      throw new HubtelRedisConfigError(
        'redis.keyPrefix',
        'PREFIX_WITH_HASH_TAG',
        `"${this.keyPrefix}" holds a {hash tag}: on a cluster every key would go to one slot on one node; remove the braces`,
      );
    if (this.owned) {
      // Our client: report outages once each way instead of ioredis's unhandled-error noise.
      this.client.on('error', (error: Error) => {
        if (this.down || !this.wasReady) return;
        this.down = true;
        this.logger.error(`Redis is unreachable: ${error.message}`);
      });
      this.client.on('ready', () => {
        this.wasReady = true;
        if (!this.down) return;
        this.down = false;
        this.logger.log('Redis is reachable again');
      });
    }
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      // A client of yours shared by two stores has them already.
      if (typeof (this.client as unknown as Record<string, unknown>)[name] !== 'function')
        this.client.defineCommand(name, { numberOfKeys: 1, lua });
    }
  }

  /** Connects its own client; refuses a single-node client on a cluster node (keys would answer MOVED). */
  async connect(): Promise<void> {
    if (this.owned && this.client.status === 'wait') {
      try {
        await withTimeout(this.client.connect(), REDIS_STORE_DEFAULTS.connectTimeoutMs, 'Redis connect');
      } catch (error) {
        this.client.disconnect();
        throw unavailable('connect', error);
      }
    }
    if (!isClusterClient(this.client)) {
      try {
        const client = this.client;
        await refuseClusterNode(() => client.info('cluster'), this.owned ? 'redis.url' : 'redis.client');
      } catch (error) {
        if (this.owned) this.client.disconnect();
        throw error;
      }
    }
    await this.markers.start(await this.markerPlaces());
    this.client.on('ready', this.onReady);
  }

  /** The last loss of Redis's data noticed; health checks report the store down until `acknowledgeLoss()`. */
  async lostData(): Promise<HubtelStoreLoss | undefined> {
    await this.markers.check().catch(() => undefined);
    return this.markers.loss();
  }

  /** Acknowledges the loss for every process sharing the store, once reconciled (rejects: Redis away). */
  acknowledgeLoss(): Promise<HubtelStoreLoss | undefined> {
    return this.markers.acknowledge();
  }

  private async markerPlaces() {
    const client = this.client;
    if (!isClusterClient(client)) return singleMarker(client);
    try {
      return await clusterMarkers(client, this.keyPrefix);
    } catch (error) {
      this.logger.warn(
        `CLUSTER SLOTS failed (${describeError(error)}): one loss marker for the whole cluster`,
      );
      return [{ key: STORE_MARKER_KEY, where: 'the cluster' }];
    }
  }

  async get<T>(key: string): Promise<StoreEntry<T> | undefined> {
    const raw = await this.run('get', () => this.client.get(this.keyPrefix + key));
    return raw === null ? undefined : decode<T>(key, raw);
  }

  async setIfAbsent<T>(key: string, value: T, options?: StoreWriteOptions): Promise<boolean> {
    const ttl = ttlOf(options);
    const data = `1:${encode(value)}`;
    const k = this.keyPrefix + key;
    const reply = await this.run('setIfAbsent', () =>
      ttl === undefined || ttl === NO_TTL
        ? this.client.set(k, data, 'NX')
        : this.client.set(k, data, 'PX', ttl, 'NX'),
    );
    return reply === 'OK';
  }

  async compareAndSet<T>(
    key: string,
    expectedVersion: number,
    value: T,
    options?: StoreWriteOptions,
  ): Promise<StoreEntry<T> | undefined> {
    const ttl = ttlOf(options);
    if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 1) return undefined;
    const args = [expectedVersion, encode(value), ttl ?? KEEP_TTL] as const;
    const version = await this.run('compareAndSet', () =>
      this.commands.hubtelStoreCompareAndSet(this.keyPrefix + key, ...args),
    );
    return Number(version) > 0 ? { value, version: Number(version) } : undefined;
  }

  async set<T>(key: string, value: T, options?: StoreWriteOptions): Promise<StoreEntry<T>> {
    const ttl = ttlOf(options);
    const version = await this.run('set', () =>
      this.commands.hubtelStoreSet(this.keyPrefix + key, 0, encode(value), ttl ?? NO_TTL),
    );
    return { value, version: Number(version) };
  }

  async delete(key: string): Promise<boolean> {
    return (await this.run('delete', () => this.client.del(this.keyPrefix + key))) > 0;
  }

  async compareAndDelete(key: string, expectedVersion: number): Promise<boolean> {
    if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 1) return false;
    const deleted = await this.run('compareAndDelete', () =>
      this.commands.hubtelStoreCompareAndDelete(this.keyPrefix + key, expectedVersion),
    );
    return Number(deleted) === 1;
  }

  /**
   * SCAN on every master (one node knows only its slots), then MGET (one GET per key on a cluster: an
   * MGET would cross slots). A key SCAN reports twice (rehash, slot migration) is yielded once.
   */
  async *scan<T>(prefix: string): AsyncIterable<[string, StoreEntry<T>]> {
    const pattern = `${escapeGlob(this.keyPrefix + prefix)}*`;
    const seen = new Set<string>();
    const client = this.client;
    const nodes = isClusterClient(client) ? client.nodes('master') : [client];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await this.run('scan', () =>
          node.scan(cursor, 'MATCH', pattern, 'COUNT', REDIS_STORE_DEFAULTS.scanCount),
        );
        cursor = next;
        const fresh = keys.filter((k) => !seen.has(k));
        if (fresh.length === 0) continue;
        for (const k of fresh) seen.add(k);
        const values = await this.run('scan', () =>
          isClusterClient(client) ? Promise.all(fresh.map((k) => client.get(k))) : client.mget(fresh),
        );
        for (let i = 0; i < fresh.length; i++) {
          const raw = values[i];
          if (raw === null || raw === undefined) continue;
          const key = fresh[i]!.slice(this.keyPrefix.length);
          if (key.startsWith(STORE_MARKER_KEY)) continue; // the store's own, not an entry of the app's
          yield [key, decode<T>(key, raw)];
        }
      } while (cursor !== '0');
    }
  }

  /** One PING (health checks): rejects with HubtelStoreUnavailableError when Redis does not answer. */
  async ping(): Promise<void> {
    await this.run('ping', () => this.client.ping());
  }

  /** Closes the store's own client (waiting for replies in flight); leaves a client of yours open. */
  async close(): Promise<void> {
    this.markers.stop();
    this.client.off('ready', this.onReady);
    if (!this.owned || this.client.status === 'end') return;
    // Redis away: nothing in flight can be answered, and the client would wait for an `end` that a
    // connection being retried never sends (the app's shutdown hung on it).
    if (this.client.status !== 'ready') return this.client.disconnect();
    const ended = new Promise<void>((resolve) => this.client.once('end', () => resolve()));
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
    await ended;
  }

  private get commands(): StoreCommands {
    return this.client as unknown as StoreCommands;
  }

  private async run<R>(operation: string, call: () => Promise<R>): Promise<R> {
    try {
      return await call();
    } catch (error) {
      throw unavailable(operation, error);
    }
  }
}

function unavailable(operation: string, error: unknown): HubtelStoreUnavailableError {
  if (error instanceof HubtelStoreUnavailableError) return error;
  return new HubtelStoreUnavailableError(`Redis store ${operation} failed: ${describeError(error)}`, {
    cause: error,
  });
}

function encode(value: unknown): string {
  // JSON.stringify(undefined) is undefined: stored as nothing after the version.
  return JSON.stringify(value) ?? '';
}

function decode<T>(key: string, raw: string): StoreEntry<T> {
  const sep = raw.indexOf(':');
  const version = Number(raw.slice(0, sep));
  if (sep < 1 || !Number.isSafeInteger(version))
    throw new HubtelStoreUnavailableError(`Redis store: ${key} does not hold a store entry`);
  const json = raw.slice(sep + 1);
  return { value: (json === '' ? undefined : JSON.parse(json)) as T, version };
}

/** A write's TTL in whole ms (rounded up); NO_TTL for one too long to ever end. Checks as MemoryStore's. */
function ttlOf(options: StoreWriteOptions | undefined): number | undefined {
  const ttl = options?.ttlMs;
  if (ttl === undefined) return undefined;
  if (!(ttl > 0)) throw new RangeError(`ttlMs must be a positive number, got ${ttl}`);
  // Beyond what PX takes, an entry may as well never expire.
  return Number.isFinite(ttl) && ttl < Number.MAX_SAFE_INTEGER ? Math.ceil(ttl) : NO_TTL;
}

export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
