import { Redis, type RedisOptions } from 'ioredis';
import {
  HubtelLogger,
  HubtelConfigError,
  HubtelStoreUnavailableError,
  type HubtelStore,
  type StoreEntry,
  type StoreWriteOptions,
} from 'nestjs-hubtel';
import { REDIS_STORE_COMMANDS, REDIS_STORE_DEFAULTS } from './redis.constants.js';
import { COMPARE_AND_DELETE_LUA, COMPARE_AND_SET_LUA, SET_LUA } from './redis-store.scripts.js';

/**
 * Where the store's Redis is: `client` (yours: the store never closes it), or `url` and/or
 * `options` (the store opens its own client, fails fast while Redis is down, and closes it).
 */
export interface RedisStoreOptions {
  /** An ioredis client of yours. Give it `enableOfflineQueue: false` and a `commandTimeout` to fail fast. */
  client?: Redis;
  /** `redis://[:password@]host:port/db` or `rediss://...` (TLS). */
  url?: string;
  /** ioredis options for the store's own client (merged over the fail-fast defaults). */
  options?: RedisOptions;
  /** Put in front of every key, and removed from the keys `scan` yields. Default ''. */
  keyPrefix?: string;
  /** Time limit of one command on the store's own client, in ms. Default 2000. */
  commandTimeoutMs?: number;
  /** Keys per SCAN round trip. Default 500. */
  scanCount?: number;
}

/** The Lua commands as ioredis adds them to the client. */
interface StoreCommands {
  [REDIS_STORE_COMMANDS.compareAndSet](
    key: string,
    expected: number,
    json: string,
    ttl: number,
  ): Promise<number>;
  [REDIS_STORE_COMMANDS.set](key: string, unused: number, json: string, ttl: number): Promise<number>;
  [REDIS_STORE_COMMANDS.compareAndDelete](key: string, expected: number): Promise<number>;
}

/** TTL argument of the scripts: keep the current expiry (compare-and-set without a TTL). */
const KEEP_TTL = 0;
/** TTL argument of the scripts: no expiry. */
const NO_TTL = -1;

/**
 * A HubtelStore on Redis, for several instances of an app (or restarts) sharing invoices, callback
 * records, sessions and orders. Every operation is one atomic server-side step: SET NX PX for
 * set-if-absent, Lua scripts for compare-and-set, set and compare-and-delete. Expiry is Redis's own (PX), so an expired
 * entry is absent for every instance at once.
 *
 * Fails fast: on its own client, a command while Redis is down or slow rejects at once (no offline
 * queue) or after `commandTimeoutMs`, as a HubtelStoreUnavailableError; inbound endpoints answer
 * that with a 503 (not acknowledged, so the platform sends again) and emit nothing.
 *
 * Needs Redis 6.0 or later (KEEPTTL), and `maxmemory-policy noeviction`: an evicted entry would be
 * a forgotten payment.
 */
export class RedisStore implements HubtelStore {
  readonly client: Redis;
  readonly keyPrefix: string;
  /** True when the store opened the client (and so closes it). */
  private readonly owned: boolean;
  private readonly scanCount: number;
  private readonly logger = new HubtelLogger('HubtelRedisStore');
  private down = false;
  /** Connection failures before the first `ready` are reported by `connect()`, not logged. */
  private wasReady = false;

  constructor(options: RedisStoreOptions) {
    if (options.client === undefined && options.url === undefined && options.options === undefined) {
      throw new HubtelConfigError('redis', 'give a client, a url or options');
    }
    if (options.client !== undefined && (options.url !== undefined || options.options !== undefined)) {
      throw new HubtelConfigError(
        'redis',
        'give either a client of yours, or a url and/or options, not both',
      );
    }
    this.keyPrefix = options.keyPrefix ?? REDIS_STORE_DEFAULTS.keyPrefix;
    if (typeof this.keyPrefix !== 'string')
      throw new HubtelConfigError('redis.keyPrefix', 'must be a string');
    this.scanCount = positive(options.scanCount, REDIS_STORE_DEFAULTS.scanCount, 'redis.scanCount');
    const timeout = positive(
      options.commandTimeoutMs,
      REDIS_STORE_DEFAULTS.commandTimeoutMs,
      'redis.commandTimeoutMs',
    );
    if (options.client) {
      // ioredis would prefix our keys but not our SCAN pattern: scans would find nothing.
      if (options.client.options.keyPrefix) {
        throw new HubtelConfigError(
          'redis.client',
          'must not set ioredis keyPrefix; use the keyPrefix option',
        );
      }
      this.client = options.client;
      this.owned = false;
    } else {
      const failFast: RedisOptions = {
        lazyConnect: true,
        // A command while disconnected fails now instead of waiting in a queue with a request.
        enableOfflineQueue: false,
        commandTimeout: timeout,
        connectTimeout: REDIS_STORE_DEFAULTS.connectTimeoutMs,
        // A command cut off by a dropped connection fails rather than being sent again: a resent
        // compare-and-set that had been applied would report losing to its own write.
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        retryStrategy: (attempt) => Math.min(attempt * 50, REDIS_STORE_DEFAULTS.maxReconnectDelayMs),
        ...options.options,
      };
      this.client = options.url ? new Redis(options.url, failFast) : new Redis(failFast);
      this.owned = true;
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
    const commands = this.client as unknown as Partial<StoreCommands>;
    if (typeof commands[REDIS_STORE_COMMANDS.compareAndSet] !== 'function') {
      this.client.defineCommand(REDIS_STORE_COMMANDS.compareAndSet, {
        numberOfKeys: 1,
        lua: COMPARE_AND_SET_LUA,
      });
    }
    if (typeof commands[REDIS_STORE_COMMANDS.set] !== 'function') {
      this.client.defineCommand(REDIS_STORE_COMMANDS.set, { numberOfKeys: 1, lua: SET_LUA });
    }
    if (typeof commands[REDIS_STORE_COMMANDS.compareAndDelete] !== 'function') {
      this.client.defineCommand(REDIS_STORE_COMMANDS.compareAndDelete, {
        numberOfKeys: 1,
        lua: COMPARE_AND_DELETE_LUA,
      });
    }
  }

  /** Connects the store's own client (startup waits for Redis); a no-op for a client of yours. */
  async connect(): Promise<void> {
    if (!this.owned || this.client.status !== 'wait') return;
    try {
      await this.client.connect();
    } catch (error) {
      this.client.disconnect();
      throw unavailable('connect', error);
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
    const version = await this.run('compareAndSet', () =>
      this.commands[REDIS_STORE_COMMANDS.compareAndSet](
        this.keyPrefix + key,
        expectedVersion,
        encode(value),
        ttl ?? KEEP_TTL,
      ),
    );
    return Number(version) > 0 ? { value, version: Number(version) } : undefined;
  }

  async set<T>(key: string, value: T, options?: StoreWriteOptions): Promise<StoreEntry<T>> {
    const ttl = ttlOf(options);
    const version = await this.run('set', () =>
      this.commands[REDIS_STORE_COMMANDS.set](this.keyPrefix + key, 0, encode(value), ttl ?? NO_TTL),
    );
    return { value, version: Number(version) };
  }

  async delete(key: string): Promise<boolean> {
    return (await this.run('delete', () => this.client.del(this.keyPrefix + key))) > 0;
  }

  async compareAndDelete(key: string, expectedVersion: number): Promise<boolean> {
    if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 1) return false;
    const deleted = await this.run('compareAndDelete', () =>
      this.commands[REDIS_STORE_COMMANDS.compareAndDelete](this.keyPrefix + key, expectedVersion),
    );
    return Number(deleted) === 1;
  }

  /**
   * SCAN over `keyPrefix + prefix` (its glob characters escaped, so `*`, `?`, `[` match only
   * themselves), then one MGET per batch. A key deleted or expired between the two is skipped;
   * a key SCAN reports twice (it may, while the keyspace is rehashed) is yielded once.
   */
  async *scan<T>(prefix: string): AsyncIterable<[string, StoreEntry<T>]> {
    const pattern = `${escapeGlob(this.keyPrefix + prefix)}*`;
    const seen = new Set<string>();
    let cursor = '0';
    do {
      const [next, keys] = await this.run('scan', () =>
        this.client.scan(cursor, 'MATCH', pattern, 'COUNT', this.scanCount),
      );
      cursor = next;
      const fresh = keys.filter((k) => !seen.has(k));
      if (fresh.length === 0) continue;
      for (const k of fresh) seen.add(k);
      const values = await this.run('scan', () => this.client.mget(fresh));
      for (let i = 0; i < fresh.length; i++) {
        const raw = values[i];
        if (raw === null || raw === undefined) continue;
        const key = fresh[i]!.slice(this.keyPrefix.length);
        yield [key, decode<T>(key, raw)];
      }
    } while (cursor !== '0');
  }

  /** One PING (health checks): rejects with HubtelStoreUnavailableError when Redis does not answer. */
  async ping(): Promise<void> {
    await this.run('ping', () => this.client.ping());
  }

  /** Closes the store's own client (waiting for replies in flight); leaves a client of yours open. */
  async close(): Promise<void> {
    if (!this.owned || this.client.status === 'end') return;
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
  const reason = error instanceof Error ? error.message : String(error);
  return new HubtelStoreUnavailableError(`Redis store ${operation} failed: ${reason}`, { cause: error });
}

function encode(value: unknown): string {
  // JSON.stringify(undefined) is undefined: stored as nothing after the version.
  return JSON.stringify(value) ?? '';
}

function decode<T>(key: string, raw: string): StoreEntry<T> {
  const sep = raw.indexOf(':');
  const version = Number(raw.slice(0, sep));
  if (sep < 1 || !Number.isSafeInteger(version)) {
    throw new HubtelStoreUnavailableError(`Redis store: ${key} does not hold a store entry`);
  }
  const json = raw.slice(sep + 1);
  return { value: (json === '' ? undefined : JSON.parse(json)) as T, version };
}

/**
 * The TTL of a write in whole milliseconds (rounded up); NO_TTL for one too long to ever end;
 * undefined when none was given. Same checks as MemoryStore.
 */
function ttlOf(options: StoreWriteOptions | undefined): number | undefined {
  const ttl = options?.ttlMs;
  if (ttl === undefined) return undefined;
  if (!(ttl > 0)) throw new RangeError(`ttlMs must be a positive number, got ${ttl}`);
  // Beyond what PX takes, an entry may as well never expire.
  return Number.isFinite(ttl) && ttl < Number.MAX_SAFE_INTEGER ? Math.ceil(ttl) : NO_TTL;
}

/** Escapes Redis glob characters so the pattern matches the text literally. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

function positive(value: number | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (!(Number.isFinite(value) && value > 0))
    throw new HubtelConfigError(option, 'must be a positive number');
  return value;
}
