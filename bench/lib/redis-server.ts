/**
 * A private redis-server for the Redis parts of the bench, started and stopped by the runner: a
 * free port of 127.0.0.1, nothing saved to disk (`--save '' --appendonly no`), `maxmemory-policy
 * noeviction` (what RedisStore requires: an evicted entry would be a forgotten payment). Never a
 * shared Redis. Same settings as the tests' test/support/redis-server.ts.
 *
 * Also reads Redis's own figures over a client of the runner's: INFO cpu (the server is a separate
 * process, so its CPU is not in the Node server's) and INFO memory.
 */
import { Redis } from 'ioredis';
import { findExecutable } from '../../test/support/system.js';
import { RedisServer } from '../../test/support/redis-server.js';

/**
 * Path of redis-server, or undefined when it is not installed. `HUBTEL_BENCH_REDIS_SERVER` names
 * the binary to use instead of looking for one.
 */
export function redisServerBinary(): string | undefined {
  const chosen = process.env.HUBTEL_BENCH_REDIS_SERVER;
  return (
    findExecutable(chosen ?? 'redis-server') ?? (chosen ? undefined : findExecutable('/usr/bin/redis-server'))
  );
}

/** Why the Redis parts are not measured when redis-server is missing, in one plain line. */
export const REDIS_MISSING =
  'redis-server is not installed (apt-get install redis-server, Redis 6 or later): the Redis-store parts are not measured';

export class BenchRedis {
  /** The runner's own client: INFO, FLUSHALL, DBSIZE, MEMORY USAGE. */
  readonly client: Redis;
  /** redis_version of INFO server. */
  version = 'unknown';

  private constructor(private readonly server: RedisServer) {
    this.client = new Redis({
      host: '127.0.0.1',
      port: server.port,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
  }

  /**
   * Starts a server through the tests' launcher (test/support/redis-server.ts: same settings,
   * killed if the runner exits); throws REDIS_MISSING when redis-server is not installed.
   */
  static async start(): Promise<BenchRedis> {
    const binary = redisServerBinary();
    if (!binary) throw new Error(REDIS_MISSING);
    const server = new BenchRedis(await RedisServer.start({ binary }));
    await server.client.connect();
    server.version = (await server.info('server')).redis_version ?? 'unknown';
    return server;
  }

  get port(): number {
    return this.server.port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** One INFO section as numbers where they are numbers. */
  async info(section: string): Promise<Record<string, string>> {
    const text = await this.client.info(section);
    const fields: Record<string, string> = {};
    for (const line of text.split('\r\n')) {
      const at = line.indexOf(':');
      if (at > 0 && !line.startsWith('#')) fields[line.slice(0, at)] = line.slice(at + 1);
    }
    return fields;
  }

  /** The server's own CPU so far (user + system, main thread and children), in µs. */
  async cpuUs(): Promise<number> {
    const cpu = await this.info('cpu');
    return (Number(cpu.used_cpu_user) + Number(cpu.used_cpu_sys)) * 1e6;
  }

  /** INFO memory used_memory (bytes the allocator holds for Redis's data and structures). */
  async usedMemory(): Promise<number> {
    return Number((await this.info('memory')).used_memory);
  }

  async flush(): Promise<void> {
    await this.client.flushall();
  }

  async stop(): Promise<void> {
    this.client.disconnect();
    await this.server.dispose();
  }
}
