/**
 * redis-servers for tests: on a free port of 127.0.0.1, nothing saved to disk (`--save ''
 * --appendonly no`). A file that stops, freezes, restarts or flushes its Redis starts a private
 * server (`RedisServer.start()`); any other file takes a database of its own on its Jest worker's
 * server (`redisDatabase()`): a start less per file.
 *
 *   redisBinary.describe('Redis store', () => {
 *     let redis: RedisDatabase;
 *     beforeAll(async () => { redis = await redisDatabase(); });
 *     afterAll(() => redis.dispose());
 *   });
 *
 * Without redis-server installed the block is skipped with a SKIPPED: line, and fails under CI
 * (test/support/system.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { systemBinary } from './system.js';

export const redisBinary = systemBinary({
  what: 'Redis store tests',
  aptPackage: 'redis-server',
  binaries: ['/usr/bin/redis-server', 'redis-server'],
});

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Servers still running when the test process exits (a crashed or interrupted run) are killed. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface RedisServerOptions {
  /**
   * Keep every write in an append-only file, synced before each reply (`--appendonly yes
   * --appendfsync always`): a server killed and restarted comes back with all it acknowledged, as
   * a production Redis holding payments should. Default false (nothing survives a restart).
   */
  appendOnly?: boolean;
  /** The redis-server to run. Default: the one found on this machine (see `redisBinary`). */
  binary?: string;
  /** Start as a Redis Cluster node (`--cluster-enabled yes`): test/support/redis-cluster.ts joins them. */
  clusterEnabled?: boolean;
  /** A cluster node's `cluster-node-timeout` (Redis's default: 15 s). */
  clusterNodeTimeoutMs?: number;
  /** How many databases (`--databases`; Redis's default: 16). */
  databases?: number;
}

export class RedisServer {
  private process?: ChildProcess;
  private exited?: Promise<void>;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly appendOnly: boolean,
    private readonly binary: string,
    private readonly clusterEnabled = false,
    private readonly clusterNodeTimeoutMs?: number,
    private readonly databases?: number,
  ) {}

  /** Starts a server on a free port and waits until it accepts connections. */
  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const binary = options.binary ?? redisBinary.path;
    if (!binary) throw new Error('redis-server is not installed');
    const server = new RedisServer(
      await freePort(),
      mkdtempSync(path.join(tmpdir(), 'hubtel-redis-')),
      options.appendOnly ?? false,
      binary,
      options.clusterEnabled ?? false,
      options.clusterNodeTimeoutMs,
      options.databases,
    );
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.process !== undefined;
  }

  /** Kills the server at once (an outage, or the end of the test); its data is gone. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child) return;
    this.process = undefined;
    child.kill('SIGKILL');
    await this.exited;
  }

  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered (a stalled Redis). */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  /** Lets a paused server answer again (SIGCONT). */
  resume(): void {
    this.process?.kill('SIGCONT');
  }

  /**
   * Starts the server again on the same port and directory: empty as after a crash without
   * persistence, or with what was written by a `SAVE` sent before it stopped, or (`appendOnly`)
   * with every write it acknowledged.
   */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  /** Stops the server for good and removes its directory. */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private launch(): Promise<void> {
    const child = spawn(
      this.binary,
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        this.appendOnly ? 'yes' : 'no',
        // Every acknowledged write is on disk before the reply: a kill -9 loses none of them.
        ...(this.appendOnly ? ['--appendfsync', 'always'] : []),
        '--dir',
        this.dir,
        '--maxmemory-policy',
        'noeviction',
        ...(this.databases ? ['--databases', String(this.databases)] : []),
        ...(this.clusterEnabled
          ? [
              '--cluster-enabled',
              'yes',
              '--cluster-config-file',
              path.join(this.dir, `nodes-${this.port}.conf`),
              ...(this.clusterNodeTimeoutMs
                ? ['--cluster-node-timeout', String(this.clusterNodeTimeoutMs)]
                : []),
            ]
          : []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.process = child;
    live.add(child);
    // How many a run starts: test/global-teardown.mjs counts them.
    if (process.env.HUBTEL_CHILD_LOG) appendFileSync(process.env.HUBTEL_CHILD_LOG, `redis\t${this.port}\n`);
    child.once('exit', () => live.delete(child));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let output = '';
    return new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/Ready to accept connections/i.test(output)) {
          child.stdout?.off('data', onData);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => {
        if (this.process === child) this.process = undefined;
        reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`));
      });
      child.once('error', reject);
    });
  }
}

/**
 * Databases of a worker's server: db 0 holds the count of those taken, the others are handed out
 * (up to /99: the example app takes no higher number in REDIS_URL).
 */
const WORKER_DATABASES = 100;
const TAKEN = 'hubtel:test:databases-taken';

/**
 * For test/global-setup.mjs: one server per Jest worker (`HUBTEL_TEST_REDIS`: their ports, in
 * worker order), and how to stop them after the run.
 */
export async function startWorkerServers(
  workers: number,
): Promise<{ ports: string; dispose: () => Promise<unknown> }> {
  const servers = await Promise.all(
    Array.from({ length: workers }, () => RedisServer.start({ databases: WORKER_DATABASES })),
  );
  return {
    ports: servers.map((server) => server.port).join(','),
    dispose: () => Promise.all(servers.map((server) => server.dispose())),
  };
}

/** An empty database, yours until `dispose()` (which empties it again). */
export interface RedisDatabase {
  /** `redis://127.0.0.1:<port>/<db>`: what the stores, BullMQ and the example app take. */
  readonly url: string;
  dispose(): Promise<void>;
}

/**
 * A database of its own on this Jest worker's redis-server, empty. A worker runs one file at a
 * time, and hands out databases 1 to 99 in turn (a run takes far fewer): a client an earlier file
 * left open never sees this file's keys. Without the worker servers (no global setup, as for
 * a file run alone through another config), a private server.
 */
export async function redisDatabase(): Promise<RedisDatabase> {
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const port = process.env.HUBTEL_TEST_REDIS?.split(',')[worker - 1];
  if (!port) {
    const server = await RedisServer.start();
    return { url: server.url, dispose: () => server.dispose() };
  }
  const admin = new Redis(`redis://127.0.0.1:${port}`);
  let url: string;
  try {
    const db = 1 + ((Number(await admin.incr(TAKEN)) - 1) % (WORKER_DATABASES - 1));
    await admin.select(db);
    await admin.flushdb();
    url = `redis://127.0.0.1:${port}/${db}`;
  } finally {
    admin.disconnect();
  }
  return {
    url,
    async dispose() {
      const client = new Redis(url);
      await client.flushdb().finally(() => client.disconnect());
    },
  };
}
