/** Checks of a Redis connection shared by the Redis store and the BullMQ runner (no ioredis import). */
import { HubtelConfigError, HubtelRedisConfigError } from '../errors/hubtel.errors.js';

/** A startup node of a Redis Cluster, as ioredis's `Cluster` takes it. */
export interface RedisClusterNode {
  host: string;
  port: number;
}

/** The hash tag of a key as Redis Cluster reads it (keys with one tag share a slot), or undefined. */
export function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/** By ioredis's `isCluster` flag, not `instanceof`: a client of another ioredis copy is one too. */
export function isClusterClient<T>(client: T): client is Extract<T, { nodes: unknown }> {
  return (client as { isCluster?: unknown } | undefined)?.isCluster === true;
}

/** Refuses a client's own ioredis keyPrefix: BullMQ refuses it, and SCAN patterns would miss it. */
export function refuseClientKeyPrefix(
  client: { options: { keyPrefix?: string; redisOptions?: { keyPrefix?: string } } },
  option: string,
  instead: string,
): void {
  if (client.options.keyPrefix || client.options.redisOptions?.keyPrefix)
    throw new HubtelRedisConfigError(
      option,
      'CLIENT_UNUSABLE',
      `must not set an ioredis keyPrefix: remove it and use the \`${instead}\` option`,
    );
}

/** Refuses a single-node client on a Cluster node (MOVED for most keys); a server hiding INFO passes. */
export async function refuseClusterNode(info: () => Promise<string>, option: string): Promise<void> {
  const reply = await info().catch(() => '');
  if (/^cluster_enabled:1\s*$/m.test(reply))
    throw new HubtelRedisConfigError(
      option,
      'CLUSTER_NODE_WITHOUT_CLUSTER_CLIENT',
      'points at a node of a Redis Cluster: give `cluster: { nodes: [...] }` (or a Cluster client) instead, so each key goes to the node that owns its slot',
    );
}

/** Checks `cluster.nodes`: a typo would otherwise surface as ioredis retrying an address forever. */
export function redisClusterNodesOption(nodes: unknown, option: string): RedisClusterNode[] {
  if (!Array.isArray(nodes) || nodes.length === 0)
    throw new HubtelConfigError(
      option,
      'must list at least one node, e.g. [{ host: "10.0.0.1", port: 6379 }]',
    );
  return nodes.map((node: unknown, i) => {
    const { host, port } = (node ?? {}) as Partial<RedisClusterNode>;
    if (typeof host !== 'string' || host === '' || !Number.isInteger(port) || port! < 1 || port! > 65_535)
      throw new HubtelConfigError(`${option}[${i}]`, 'must be { host: string, port: 1..65535 }');
    return { host, port: port! };
  });
}
