import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { HubtelConfigError } from 'nestjs-hubtel';
import { redisClusterNodesOption, refuseClientKeyPrefix } from '#internal';
import { REDIS_STORE_DEFAULTS } from './redis.constants.js';

/** A Redis Cluster to open: its startup nodes and ioredis Cluster options (TLS, auth, NAT map...). */
export interface RedisClusterConnection {
  /** Some of the cluster's nodes (ioredis discovers the rest), e.g. `[{ host: '10.0.0.1', port: 6379 }]`. */
  nodes: ClusterNode[];
  /** ioredis Cluster options, merged over the fail-fast defaults; per-node settings in `redisOptions`. */
  options?: ClusterOptions;
}

/** Where the store's Redis is: `client` (yours, never closed), or `url`/`options`/`cluster` (its own). */
export interface RedisStoreOptions {
  /** An ioredis client of yours. Give it `enableOfflineQueue: false` and a `commandTimeout` to fail fast. */
  client?: Redis | Cluster;
  /** `redis://[:password@]host:port/db` or `rediss://...` (TLS). Not a node of a cluster: see `cluster`. */
  url?: string;
  /** ioredis options for the store's own client, merged over the fail-fast defaults. */
  options?: RedisOptions;
  /** A Redis Cluster (ElastiCache cluster mode, Azure clustered, self-run `--cluster-enabled yes`...). */
  cluster?: RedisClusterConnection;
  /** Put in front of every key. Default ''. On a cluster, no `{hash tag}` (all keys on one node). */
  keyPrefix?: string;
  /** Time limit of one command on the store's own client, in ms. Default 2000. */
  commandTimeoutMs?: number;
  /**
   * How often to look for the marker that notices Redis lost its data (`lostData()`), in ms. Default
   * 10000; 0: only on reconnecting, health checks and unknown checkout references.
   */
  lossCheckIntervalMs?: number;
}

/** The given client, or its own (`owned`, failing fast; not auto-pipelined: measured, no gain). */
export function storeClient(options: RedisStoreOptions): { client: Redis | Cluster; owned: boolean } {
  const timeout = options.commandTimeoutMs ?? REDIS_STORE_DEFAULTS.commandTimeoutMs;
  if (!(Number.isFinite(timeout) && timeout > 0))
    throw new HubtelConfigError('redis.commandTimeoutMs', 'must be a positive number');
  if (options.client) {
    refuseClientKeyPrefix(options.client, 'redis.client', 'keyPrefix');
    return { client: options.client, owned: false };
  }
  // A command while disconnected fails now instead of waiting in a queue with a request.
  const own = { lazyConnect: true, enableOfflineQueue: false };
  const node: RedisOptions = {
    commandTimeout: timeout,
    connectTimeout: REDIS_STORE_DEFAULTS.connectTimeoutMs,
    // Never before the command's own limit: a command may wait that long for its answer.
    socketTimeout: Math.max(REDIS_STORE_DEFAULTS.socketTimeoutMs, timeout),
    // Not sent again after a dropped connection: a resent applied compare-and-set would lose to itself.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  };
  const retry = (attempt: number) => Math.min(attempt * 50, REDIS_STORE_DEFAULTS.maxReconnectDelayMs);
  if (options.cluster) {
    const nodes = redisClusterNodesOption(options.cluster.nodes, 'redis.cluster.nodes');
    const given = options.cluster.options ?? {};
    const redisOptions = { ...node, ...given.redisOptions };
    const client = new Cluster(nodes, { ...own, clusterRetryStrategy: retry, ...given, redisOptions });
    return { client, owned: true };
  }
  const failFast: RedisOptions = { ...own, ...node, retryStrategy: retry, ...options.options };
  return { client: options.url ? new Redis(options.url, failFast) : new Redis(failFast), owned: true };
}
