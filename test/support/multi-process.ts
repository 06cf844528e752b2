/**
 * Several processes of one system, for end-to-end tests across instances: a Redis database,
 * the sandbox CLI, and app instances, each a real process talking real HTTP.
 *
 *   const system = new ProcessSet();
 *   afterAll(() => system.stopAll());          // every process, even after a failed test
 *   const redis = await system.redis();
 *   const sandbox = await system.sandbox();
 *   const a = await system.app('a', { entry: REPLICA_APP, env: { REDIS_URL: redis.url, ... } });
 *   await a.output.waitFor(/paid/);
 *   await a.kill();                             // kill -9 (its whole process group)
 *   await a.restart();                          // same port, same environment
 *
 * TypeScript entries run as bench/loader/entry.mjs says: from the JavaScript the test run compiled
 * once, or from the sources through the loader hooks (SWC, the package's own names mapped to
 * libs/). Every process is also killed when the test process exits, and each node
 * child exits by itself when its stdin closes: a runner killed outright leaves nothing behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsNodeArgs } from '../../bench/loader/entry.mjs';
import { freePort, redisDatabase, type RedisDatabase } from './redis-server.js';

export {
  RedisServer,
  freePort,
  redisBinary,
  type RedisDatabase,
  type RedisServerOptions,
} from './redis-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOADER = path.join(ROOT, 'bench', 'loader', 'register.mjs');
const EXIT_WITH_PARENT = path.join(ROOT, 'test', 'support', 'exit-with-parent.mjs');
/** The sandbox CLI's entry (`hubtel-sandbox`), run from its sources. */
export const SANDBOX_CLI = path.join(ROOT, 'libs', 'sandbox', 'src', 'cli', 'hubtel-sandbox.ts');

/** Children alive now, killed (with their groups) if the test process exits without stopping them. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) killGroup(child, 'SIGKILL');
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

/** Everything a process printed (stdout and stderr, interleaved as received), searchable as it grows. */
export class ProcessOutput {
  private text = '';
  private readonly waiters = new Set<() => void>();

  append(chunk: string): void {
    this.text += chunk;
    for (const wake of this.waiters) wake();
  }

  /** All output so far (across restarts of the process). */
  get all(): string {
    return this.text;
  }

  /** Where the output ends now: give it to `waitFor` as `from` to look only at what comes after. */
  get mark(): number {
    return this.text.length;
  }

  /** How often `pattern` occurs in the output (from `from`). */
  count(pattern: RegExp, from = 0): number {
    const global = new RegExp(
      pattern.source,
      pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`,
    );
    return [...this.text.slice(from).matchAll(global)].length;
  }

  /**
   * Resolves with the first match of `pattern` in the output after `from` (already there, or when
   * it arrives); rejects after `timeoutMs`, quoting the end of the output.
   */
  waitFor(pattern: RegExp, options: { from?: number; timeoutMs?: number } = {}): Promise<RegExpMatchArray> {
    const from = options.from ?? 0;
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = this.text.slice(from).match(pattern);
        if (!match) return false;
        done();
        resolve(match);
        return true;
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `No ${pattern} in the output within ${timeoutMs} ms. Last output:\n${this.text.slice(-3000)}`,
          ),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
      };
      const wake = () => void check();
      if (check()) return;
      this.waiters.add(wake);
    });
  }
}

export interface NodeProcessOptions {
  /** A `.ts` (run by bench/loader/entry.mjs) or `.js`/`.mjs` file (with the loader). */
  entry: string;
  args?: string[];
  /** Added to the test process's environment. */
  env?: Record<string, string>;
}

/** One node program, started (and restarted) in its own process group. */
export class NodeProcess {
  readonly output = new ProcessOutput();
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    private readonly options: NodeProcessOptions,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Starts the program (again); resolves once it is spawned. */
  async start(): Promise<void> {
    if (this.child) throw new Error(`${this.name} is already running`);
    const { entry } = this.options;
    const run = entry.endsWith('.ts') ? tsNodeArgs(entry) : ['--import', LOADER, entry];
    const child = spawn(
      process.execPath,
      ['--import', EXIT_WITH_PARENT, ...run, ...(this.options.args ?? [])],
      {
        cwd: ROOT,
        env: { ...process.env, ...this.options.env, HUBTEL_EXIT_WITH_PARENT: '1' },
        // Its own group: a kill reaches everything it started; stdin is the parent-death line.
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    live.add(child);
    this.output.append(`\n[${this.name}: started, pid ${child.pid}]\n`);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => this.output.append(chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.output.append(chunk));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        live.delete(child);
        if (this.child === child) this.child = undefined;
        this.output.append(`\n[${this.name}: exited, ${signal ?? `code ${code}`}]\n`);
        resolve();
      }),
    );
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
  }

  /** kill -9 of its process group; resolves once it is gone. */
  async kill(): Promise<void> {
    if (this.child) killGroup(this.child, 'SIGKILL');
    await this.exited;
  }

  /** SIGTERM (a clean shutdown), then SIGKILL after `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    const child = this.child;
    if (!child) return;
    killGroup(child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Resolves when the process has exited (at once if it is not running). */
  whenExited(): Promise<void> {
    return this.exited;
  }
}

/** Sandbox start-up information, as `hubtel-sandbox --json` prints it. */
export interface SandboxInfo {
  url: string;
  baseUrls: { sms: string; checkout: string; status: string; fulfillmentCallback: string };
  credentials: {
    sms: { clientId: string; clientSecret: string };
    api: { clientId: string; clientSecret: string };
  };
  posSalesId: string;
  /** With `--accounts`: every account served (the default first), its keys and POS Sales ID. */
  accounts?: Array<{
    name: string;
    credentials: {
      api: { clientId: string; clientSecret: string };
      sms: { clientId: string; clientSecret: string };
    };
    posSalesId: string;
  }>;
}

/** The sandbox CLI in its own process, with its admin API (`/_sandbox`). */
export class SandboxProcess {
  private constructor(
    readonly process: NodeProcess,
    readonly info: SandboxInfo,
  ) {}

  static async start(options: { args?: string[] } = {}): Promise<SandboxProcess> {
    const proc = new NodeProcess('sandbox', {
      entry: SANDBOX_CLI,
      args: ['--port', '0', '--host', '127.0.0.1', '--json', ...(options.args ?? [])],
    });
    await proc.start();
    let line: RegExpMatchArray;
    try {
      line = await proc.output.waitFor(/^\{.*"baseUrls".*\}$/m, { timeoutMs: 60_000 });
    } catch (error) {
      await proc.kill();
      throw error;
    }
    return new SandboxProcess(proc, JSON.parse(line[0]) as SandboxInfo);
  }

  get url(): string {
    return this.info.url;
  }

  /** GET `/_sandbox/<path>` (JSON). */
  async get<T>(adminPath: string): Promise<T> {
    const response = await fetch(`${this.url}/_sandbox/${adminPath.replace(/^\//, '')}`);
    if (!response.ok)
      throw new Error(`GET /_sandbox/${adminPath}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  /** POST `/_sandbox/<path>` with a JSON body; resolves with the JSON answer (throws on non-2xx). */
  async post<T>(adminPath: string, body: unknown = {}): Promise<T> {
    const response = await fetch(`${this.url}/_sandbox/${adminPath.replace(/^\//, '')}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok)
      throw new Error(`POST /_sandbox/${adminPath}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  /** The SMS the sandbox accepted, oldest first. */
  messages(): Promise<Array<{ messageId: string; msisdn: string; content: string }>> {
    return this.get('messages');
  }

  stop(): Promise<void> {
    return this.process.stop();
  }
}

export interface AppProcessOptions extends NodeProcessOptions {
  /** Port it listens on (given to it as PORT), kept across restarts. Default: a free one. */
  port?: number;
  /** Path answered once the app is up (any HTTP status counts). Default `/`. */
  readyPath?: string;
  /** How long a start may take. Default 60 s (a cold start compiles the sources). */
  startTimeoutMs?: number;
}

/** An HTTP app instance: PORT and PUBLIC_URL set for it, started when its port answers HTTP. */
export class AppProcess {
  readonly process: NodeProcess;

  private constructor(
    name: string,
    readonly port: number,
    private readonly options: AppProcessOptions,
  ) {
    this.process = new NodeProcess(name, {
      ...options,
      env: {
        HOST: '127.0.0.1',
        PORT: String(port),
        // The example's /health and /metrics on a free port: PORT + 1 may be another process's.
        OPS_PORT: '0',
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        ...options.env,
      },
    });
  }

  static async start(name: string, options: AppProcessOptions): Promise<AppProcess> {
    const app = new AppProcess(name, options.port ?? (await freePort()), options);
    await app.start();
    return app;
  }

  get name(): string {
    return this.process.name;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get output(): ProcessOutput {
    return this.process.output;
  }

  /** kill -9. */
  kill(): Promise<void> {
    return this.process.kill();
  }

  stop(): Promise<void> {
    return this.process.stop();
  }

  /** Starts it again (after a kill or a stop), on the same port with the same environment. */
  async restart(): Promise<void> {
    await this.process.kill();
    await this.start();
  }

  private async start(): Promise<void> {
    await this.process.start();
    const exited = this.process.whenExited().then(() => {
      throw new Error(`${this.name} exited while starting:\n${this.output.all.slice(-3000)}`);
    });
    try {
      await Promise.race([
        waitForHttp(this.url + (this.options.readyPath ?? '/'), this.options.startTimeoutMs ?? 60_000),
        exited,
      ]);
    } catch (error) {
      await this.process.kill();
      throw error;
    } finally {
      exited.catch(() => undefined);
    }
  }
}

/** Resolves once `url` answers HTTP at all (any status). */
export async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const { port, hostname } = new URL(url);
  for (;;) {
    // A TCP probe first: fetch on a closed port is slow to fail on some platforms.
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) {
      try {
        await fetch(url, { signal: AbortSignal.timeout(5_000) });
        return;
      } catch {
        // listening but not answering yet
      }
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Polls `probe` until it returns a value other than undefined; rejects after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 30_000, intervalMs = 100 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * The processes of one test file, stopped together by `stopAll()` (call it in afterAll: it
 * also runs after a failed test, and stops whatever did start when a start failed).
 */
export class ProcessSet {
  private readonly apps: AppProcess[] = [];
  private readonly sandboxes: SandboxProcess[] = [];
  private readonly databases: RedisDatabase[] = [];

  /** A database of the worker's redis-server (see `redisDatabase`). */
  async redis(): Promise<RedisDatabase> {
    const database = await redisDatabase();
    this.databases.push(database);
    return database;
  }

  async sandbox(options?: { args?: string[] }): Promise<SandboxProcess> {
    const sandbox = await SandboxProcess.start(options);
    this.sandboxes.push(sandbox);
    return sandbox;
  }

  /** Starts an app instance (a failed start kills what it started, and throws). */
  async app(name: string, options: AppProcessOptions): Promise<AppProcess> {
    const app = await AppProcess.start(name, options);
    this.apps.push(app);
    return app;
  }

  /** Kills every app and sandbox, and empties every Redis database. Never throws. */
  async stopAll(): Promise<void> {
    await Promise.allSettled([
      ...this.apps.map((app) => app.kill()),
      ...this.sandboxes.map((sandbox) => sandbox.process.kill()),
      ...this.databases.map((database) => database.dispose()),
    ]);
  }
}
