import { type QueueOptions, type Worker, type RedisOptions as BullmqRedisOptions } from 'bullmq';
import { Cluster, type ClusterNode, type ClusterOptions, type Redis, type RedisOptions } from 'ioredis';
import { HubtelError, HubtelRedisConfigError } from 'nestjs-hubtel';
import {
  hashTagOf,
  isClusterClient,
  redisClusterNodesOption,
  refuseClientKeyPrefix,
  withTimeout,
  type ErrorLogThrottle,
} from '#internal';
import { BULLMQ_RUNNER_DEFAULTS } from './bullmq.constants.js';

/** Where the runner's Redis is (one of `url`, `connection`, `cluster`) and its key prefix. */
export interface BullmqConnectionOptions {
  /** Redis URL (`redis://host:6379/0`, `rediss://` for TLS). Not a node of a cluster: see `cluster`. */
  url?: string;
  /**
   * ioredis options, or an ioredis client of yours (used as is: with workers, `maxRetriesPerRequest:
   * null`). Redis must run with `maxmemory-policy noeviction`.
   */
  connection?: BullmqRedisOptions | Redis | Cluster;
  /** A Redis Cluster: some of its nodes, and ioredis Cluster options (TLS, auth in `redisOptions`). */
  cluster?: { nodes: ClusterNode[]; options?: ClusterOptions };
  /** BullMQ key prefix. Default `{hubtel}:bull`: on a cluster it needs a `{hash tag}` (one slot a queue). */
  prefix?: string;
}

/** The runner's Redis connections: the options checked once, then those of each queue and worker. */
export class BullmqConnections {
  private readonly ownClusters = new Map<'queue' | 'worker', Cluster>();

  constructor(
    private readonly options: BullmqConnectionOptions & { work?: boolean },
    prefix: string,
    private readonly errors: ErrorLogThrottle,
  ) {
    const given = (['url', 'connection', 'cluster'] as const).filter((k) => options[k] !== undefined);
    if (given.length !== 1)
      throw new HubtelError(
        'HUBTEL_CONFIG_INVALID',
        `BullmqJobRunner needs one of \`url\`, \`connection\` or \`cluster\`${given.length ? ` (got ${given.join(', ')})` : ''}`,
      );
    if (options.cluster) redisClusterNodesOption(options.cluster.nodes, 'bullmq.cluster.nodes');
    const client = clientOf(options.connection);
    if (client) this.checkClient(client);
    else if (looksLikeCopiedClient(options.connection))
      throw new HubtelRedisConfigError(
        'bullmq.connection',
        'CLIENT_UNUSABLE',
        'is a copy of a client (a plain object with its fields, without its methods): BullMQ would connect to 127.0.0.1:6379 instead; pass the Redis or Cluster client itself',
      );
    if (this.onCluster && hashTagOf(prefix) === undefined)
      throw new HubtelRedisConfigError(
        'bullmq.prefix',
        'PREFIX_WITHOUT_HASH_TAG',
        `"${prefix}" has no {hash tag}: on a Redis Cluster every BullMQ script would fail with CROSSSLOT; use e.g. "{${prefix}}" or the default "${BULLMQ_RUNNER_DEFAULTS.prefix}"`,
      );
  }

  get onCluster(): boolean {
    return this.options.cluster !== undefined || isClusterClient(this.options.connection);
  }

  for(worker: boolean): QueueOptions['connection'] {
    const { url, connection, cluster } = this.options;
    // A client of yours is used as it is: a copy of a Cluster would be read as options for 127.0.0.1.
    if (clientOf(connection)) return connection as Redis | Cluster;
    if (cluster) return this.ownCluster(worker ? 'worker' : 'queue', cluster);
    const given: BullmqRedisOptions = url !== undefined ? { url } : { ...(connection as BullmqRedisOptions) };
    // Back within a second or two of Redis (BullMQ's default waits up to 20 s between tries).
    const base: BullmqRedisOptions = {
      retryStrategy: reconnectDelay,
      socketTimeout: BULLMQ_RUNNER_DEFAULTS.socketTimeoutMs,
      ...given,
    };
    // Workers never give a command up (BullMQ requires it); adds fail fast while Redis is away, so an
    // inbound request gets its 503 instead of waiting for the reconnection.
    return worker
      ? { ...base, maxRetriesPerRequest: null }
      : { ...base, enableOfflineQueue: false, maxRetriesPerRequest: 1 };
  }

  private ownCluster(
    role: 'queue' | 'worker',
    given: NonNullable<BullmqConnectionOptions['cluster']>,
  ): Cluster {
    let cluster = this.ownClusters.get(role);
    if (!cluster) {
      const options = given.options ?? {};
      cluster = new Cluster(given.nodes, {
        // As for one Redis (see `for`): back soon after the cluster, adds fail fast while it is away.
        clusterRetryStrategy: reconnectDelay,
        ...options,
        ...(role === 'queue' ? { enableOfflineQueue: false } : {}),
        redisOptions: {
          socketTimeout: BULLMQ_RUNNER_DEFAULTS.socketTimeoutMs,
          ...options.redisOptions,
          ...(role === 'worker' ? { maxRetriesPerRequest: null } : {}),
        },
      });
      cluster.on('error', (error: Error) => this.errors.error(`Redis Cluster (${role}): ${error.message}`));
      this.ownClusters.set(role, cluster);
    }
    return cluster;
  }

  private checkClient(client: Redis | Cluster): void {
    refuseClientKeyPrefix(client, 'bullmq.connection', 'prefix');
    const options: RedisOptions = isClusterClient(client)
      ? { ...client.options.redisOptions }
      : client.options;
    // Workers would have to copy the client to change this (and a copy of a Cluster loses it).
    if (this.options.work !== false && options.maxRetriesPerRequest !== null)
      throw new HubtelRedisConfigError(
        'bullmq.connection',
        'CLIENT_UNUSABLE',
        `has maxRetriesPerRequest ${String(options.maxRetriesPerRequest ?? 'default (20)')}: BullMQ workers need null; create the client with maxRetriesPerRequest: null${isClusterClient(client) ? ' in redisOptions' : ''}, or give \`cluster\`/\`url\` and let the runner open its own`,
      );
  }

  /** Closes the Cluster clients opened here (a client given to BullMQ stays open: it is shared). */
  async close(): Promise<void> {
    await Promise.all(
      [...this.ownClusters.values()].map((cluster) =>
        bounded(cluster.quit(), async () => cluster.disconnect()),
      ),
    );
    this.ownClusters.clear();
  }
}

function clientOf(connection: BullmqConnectionOptions['connection']): Redis | Cluster | undefined {
  // BullMQ's own test (its methods), not `instanceof`: a client of another ioredis copy is a client too.
  const methods = ['connect', 'disconnect', 'duplicate'] as const;
  return connection !== undefined &&
    methods.every((m) => typeof (connection as Record<string, unknown>)[m] === 'function')
    ? (connection as Redis | Cluster)
    : undefined;
}

/** A spread client (`{ ...cluster }`): it carries a client's own fields, which options never do. */
function looksLikeCopiedClient(connection: BullmqConnectionOptions['connection']): boolean {
  if (!connection || typeof connection !== 'object') return false;
  return ['startupNodes', 'isCluster', 'connector', 'commandQueue', 'condition'].some(
    (field) => field in connection,
  );
}

/** Waits CLOSE_GRACE_MS for a graceful close (BullMQ's waits for a gone Redis), then disconnects. */
export async function bounded(closing: Promise<unknown>, disconnect: () => Promise<unknown>): Promise<void> {
  const closed = closing.catch(() => undefined);
  try {
    await withTimeout(closed, CLOSE_GRACE_MS, 'close');
  } catch {
    // Not awaited past a second either: a connection that does not close must not hold the app.
    await withTimeout(disconnect(), 1_000, 'disconnect').catch(() => undefined);
  }
}

/**
 * Closes a runner's queue or worker within `bounded`'s wait, or at once when its Redis does not answer:
 * Nest stops modules one after another, so graceful waits on a gone Redis added up past the deadline.
 */
export async function closeBounded(
  target: Pick<Worker, 'close' | 'disconnect' | 'getBackend'>,
): Promise<void> {
  const client = await withTimeout(target.getBackend().client, 100, 'client').catch(() => undefined);
  // A Cluster client says `connect` once usable (as in the runner's health check).
  if (client?.status === 'ready' || client?.status === 'connect')
    return bounded(target.close(), () => target.disconnect());
  // Closed all the same, forced and not awaited: closing is what stops a worker's timers (its lock
  // renewals), and a forced close does not wait for Redis first.
  void target.close(true).catch(() => undefined);
  void target.disconnect().catch(() => undefined);
}

const CLOSE_GRACE_MS = 2_000;

/** Reconnection delays of the runner's own connections: 250 ms, 500 ms, ... at most 2 s. */
function reconnectDelay(times: number): number {
  return Math.min(250 * times, 2_000);
}
