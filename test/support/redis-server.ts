/**
 * A private redis-server per test file: on a free port of 127.0.0.1, nothing saved to disk
 * (`--save '' --appendonly no`), stopped by the test. Never a shared Redis.
 *
 *   redis.describe('Redis store', () => {
 *     let server: RedisServer;
 *     beforeAll(async () => { server = await RedisServer.start(); });
 *     afterAll(() => server.stop());
 *   });
 *
 * Without redis-server installed the block is skipped with a SKIPPED: line, and fails under CI
 * (test/support/system.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
