/** Checks of a Redis connection shared by the Redis store and the BullMQ runner (no ioredis import). */
import { HubtelConfigError } from '../errors/hubtel.errors.js';

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

/** True when an `INFO cluster` (or full INFO) reply says the server runs in cluster mode. */
export function clusterEnabledIn(info: string): boolean {
  return /^cluster_enabled:1\s*$/m.test(info);
}

/** Checks `cluster.nodes`: a typo would otherwise surface as ioredis retrying an address forever. */
export function redisClusterNodesOption(nodes: unknown, option: string): RedisClusterNode[] {
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new HubtelConfigError(
      option,
      'must list at least one node, e.g. [{ host: "10.0.0.1", port: 6379 }]',
    );
  }
  return nodes.map((node: unknown, i) => {
    const { host, port } = (node ?? {}) as Partial<RedisClusterNode>;
    if (typeof host !== 'string' || host === '' || !Number.isInteger(port) || port! < 1 || port! > 65_535) {
      throw new HubtelConfigError(`${option}[${i}]`, 'must be { host: string, port: 1..65535 }');
    }
    return { host, port: port! };
  });
}
