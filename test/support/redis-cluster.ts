/**
 * A private 3-master Redis Cluster per test file: three redis-server processes in cluster mode on
 * free ports of 127.0.0.1 (nothing saved to disk, `noeviction`), joined as `redis-cli --cluster
 * create` joins them, stopped by the test. No replicas: the tests are about keys spread over slots,
 * not failover.
 *
 *   redisClusterBinaries.describe('on a cluster', () => {
 *     let cluster: RedisCluster;
 *     beforeAll(async () => { cluster = await RedisCluster.start(); });
 *     afterAll(() => cluster.dispose());
 *   });
 *
 * Without redis-server (and its redis-cli) the block is skipped with a SKIPPED: line, and fails
 * under CI (test/support/system.ts).
 */
import { Cluster, Redis } from 'ioredis';
import { RedisServer } from './redis-server.js';
import { systemBinary } from './system.js';

/** redis-cli comes in the same Debian package as redis-server: one requirement for both. */
export const redisClusterBinaries = systemBinary({
  what: 'Redis Cluster tests',
  aptPackage: 'redis-server',
  binaries: ['/usr/bin/redis-cli', 'redis-cli'],
});

export class RedisCluster {
  private constructor(readonly servers: RedisServer[]) {}

  /**
   * Starts three cluster-mode servers, joins them, waits until every node says `cluster_state:ok`.
   * `appendOnly`: every node keeps what it acknowledged across `stop()` and `restart()` (see
   * RedisServerOptions). `nodeTimeoutMs`: the nodes' cluster-node-timeout (default 15 s).
   */
  static async start(
    masters = 3,
    options: { appendOnly?: boolean; nodeTimeoutMs?: number } = {},
  ): Promise<RedisCluster> {
    const servers: RedisServer[] = [];
    try {
      // Started side by side: a master turns ok no sooner than 2 s after its start (Redis's
      // CLUSTER_WRITABLE_DELAY), so the last one started sets the pace.
      const starts = Array.from({ length: masters }, () =>
        RedisServer.start({
          clusterEnabled: true,
          appendOnly: options.appendOnly,
          clusterNodeTimeoutMs: options.nodeTimeoutMs,
        }).then((server) => servers.push(server)),
      );
      for (const start of await Promise.allSettled(starts))
        if (start.status === 'rejected') throw start.reason;
      const cluster = new RedisCluster(servers);
      // What `redis-cli --cluster create` does (slots split evenly, a config epoch each, every node
      // met), without its one-second polls: untilOk polls every 100 ms.
      await Promise.all(
        servers.map((server, i) =>
          withNode(server, async (node) => {
            const slot = (at: number) => Math.round((at * 16384) / masters);
            const slots = Array.from({ length: slot(i + 1) - slot(i) }, (_, k) => slot(i) + k);
            await node.call('CLUSTER', 'ADDSLOTS', ...slots);
            await node.call('CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
          }),
        ),
      );
      await withNode(servers[0]!, (node) =>
        Promise.all(servers.slice(1).map((other) => node.call('CLUSTER', 'MEET', '127.0.0.1', other.port))),
      );
      await cluster.untilOk();
      return cluster;
    } catch (error) {
      await Promise.all(servers.map((server) => server.dispose()));
      throw error;
    }
  }

  /** The startup nodes, as `cluster: { nodes }` and ioredis's Cluster take them. */
  get nodes(): Array<{ host: string; port: number }> {
    return this.servers.map((server) => ({ host: '127.0.0.1', port: server.port }));
  }

  /** `REDIS_CLUSTER_NODES` of the example app: `127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`. */
  get nodesEnv(): string {
    return this.nodes.map(({ host, port }) => `${host}:${port}`).join(',');
  }

  /** A client of the cluster (yours to close): for the test's own reads and writes. */
  client(): Cluster {
    return new Cluster(this.nodes, { lazyConnect: false });
  }

  /**
   * The server of the master that serves `key`'s slot (its `{hash tag}`'s): e.g. the one holding
   * every BullMQ queue of a prefix, to stop it alone (an outage of one master).
   */
  async serverOf(key: string): Promise<RedisServer> {
    const slot = Number(await withNode(this.servers[0]!, (node) => node.cluster('KEYSLOT', key)));
    const ranges = await withNode(this.servers[0]!, (node) => node.cluster('SLOTS'));
    const owner = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2];
    const server = owner && this.servers.find((candidate) => candidate.port === owner[1]);
    if (!server) throw new Error(`no master serves slot ${slot} of ${key}`);
    return server;
  }

  /** Empties every master (between tests). */
  async flushAll(): Promise<void> {
    await Promise.all(this.servers.map((server) => withNode(server, (node) => node.flushall())));
  }

  /**
   * How many keys each master holds (tests check that keys spread, and that all are seen), not
   * counting the Redis store's loss markers (one on every master: they would make any spread look
   * even). `markers: true` counts only those.
   */
  async keysPerMaster(options: { markers?: boolean } = {}): Promise<number[]> {
    return Promise.all(
      this.servers.map((server) =>
        withNode(server, async (node) => {
          const markers = (await node.keys('*hubtel:store:marker*')).length;
          return options.markers ? markers : (await node.dbsize()) - markers;
        }),
      ),
    );
  }

  /** Kills every node at once (an outage of the whole cluster). */
  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.stop()));
  }

  /**
   * Starts every node again, on its port and with its cluster configuration (and, `appendOnly`,
   * its data), and waits until the cluster is ok again.
   */
  async restart(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.restart()));
    await this.untilOk();
  }

  /** Stops every node and removes its directory. */
  async dispose(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.dispose()));
  }

  /**
   * Resolves once every node says `cluster_state:ok`. A master back from an outage longer than the
   * node timeout (15 s by default) was marked failed: the others clear that only after twice the
   * node timeout (no replica took over).
   */
  async untilOk(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await Promise.all(
        this.servers.map((server) => withNode(server, (node) => node.cluster('INFO'))),
      );
      if (states.every((info) => /cluster_state:ok/.test(String(info)))) return;
      if (Date.now() > deadline)
        throw new Error(`cluster not ok after ${timeoutMs} ms:\n${states.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** One plain connection to one node (not the cluster): for per-node admin commands. */
async function withNode<T>(server: RedisServer, call: (node: Redis) => Promise<T>): Promise<T> {
  const node = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await node.connect();
    return await call(node);
  } finally {
    node.disconnect();
  }
}
