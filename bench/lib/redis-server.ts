/**
 * A private redis-server for the Redis parts of the bench, started and stopped by the runner: a
 * free port of 127.0.0.1, nothing saved to disk (`--save '' --appendonly no`), `maxmemory-policy
 * noeviction` (what RedisStore requires: an evicted entry would be a forgotten payment). Never a
 * shared Redis. Same settings as the tests' test/support/redis-server.ts.
 *
 * Also reads Redis's own figures over a client of the runner's: INFO cpu (the server is a separate
 * process, so its CPU is not in the Node server's) and INFO memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'];

/**
 * Path of redis-server, or undefined when it is not installed. `HUBTEL_BENCH_REDIS_SERVER` names
 * the binary to use instead of looking for one.
 */
export function redisServerBinary(): string | undefined {
  const chosen = process.env.HUBTEL_BENCH_REDIS_SERVER;
  if (chosen !== undefined) return executable(chosen) ? chosen : undefined;
  const onPath = (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'redis-server'));
  return [...CANDIDATES, ...onPath].find(executable);
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Why the Redis parts are not measured when redis-server is missing, in one plain line. */
export const REDIS_MISSING =
  'redis-server is not installed (apt-get install redis-server, Redis 6 or later): the Redis-store parts are not measured';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Servers still running when the runner exits (a crash, Ctrl-C) are killed. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export class BenchRedis {
  /** The runner's own client: INFO, FLUSHALL, DBSIZE, MEMORY USAGE. */
  readonly client: Redis;
  /** redis_version of INFO server. */
  version = 'unknown';
  private readonly exited: Promise<void>;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly process: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => process.once('exit', () => resolve()));
    this.client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  }

  /** Starts a server; throws REDIS_MISSING when redis-server is not installed. */
  static async start(): Promise<BenchRedis> {
    const binary = redisServerBinary();
    if (!binary) throw new Error(REDIS_MISSING);
    const port = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), 'hubtel-bench-redis-'));
    const child = spawn(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    live.add(child);
    child.once('exit', () => live.delete(child));
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/Ready to accept connections/i.test(output)) {
          child.stdout?.off('data', onData);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) =>
        reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)),
      );
      child.once('error', reject);
    });
    // Keep its pipes drained so a chatty server never blocks on a full pipe.
    child.stdout?.resume();
    child.stderr?.resume();
    const server = new BenchRedis(port, dir, child);
    await server.client.connect();
    server.version = (await server.info('server')).redis_version ?? 'unknown';
    return server;
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
    this.process.kill('SIGKILL');
    await this.exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
