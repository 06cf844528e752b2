import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsNodeArgs } from '../loader/entry.mjs';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_DIR = path.resolve(BENCH_DIR, '..');

/** A message between the runner and a child: `{ type, id?, ...payload }`. */
export interface Message {
  type: string;
  id?: number;
  [key: string]: unknown;
}

export interface ChildOptions {
  /** Extra node flags, e.g. `--cpu-prof`, `--expose-gc`. */
  nodeFlags?: string[];
  env?: Record<string, string>;
  /** How long to wait for the child's `ready` message. */
  readyTimeoutMs?: number;
}

/**
 * A benchmark process (a server under test, a fake API, a sender) run as a TypeScript file in its
 * own Node process, so its CPU and memory are its own. It speaks request/response over IPC.
 */
export class Child {
  readonly proc: ChildProcess;
  readonly ready: Promise<Message>;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  private exited = false;
  private stderr = '';

  constructor(file: string, args: string[] = [], options: ChildOptions = {}) {
    const run = tsNodeArgs(path.resolve(BENCH_DIR, file));
    this.proc = fork(run.at(-1)!, args, {
      execArgv: [...run.slice(0, -1), ...(options.nodeFlags ?? [])],
      env: { ...process.env, NODE_ENV: 'production', ...options.env },
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      cwd: REPO_DIR,
    });
    this.proc.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-8000);
    });
    this.ready = new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `${file} ${args.join(' ')}: not ready after ${options.readyTimeoutMs ?? 60_000} ms\n${this.stderr}`,
            ),
          ),
        options.readyTimeoutMs ?? 60_000,
      );
      this.proc.on('message', (message: Message) => {
        if (message.type === 'ready') {
          clearTimeout(timer);
          resolve(message);
        } else if (message.type === 'error' && message.id === undefined) {
          clearTimeout(timer);
          reject(new Error(`${file} ${args.join(' ')}: ${String(message.message)}`));
        } else if (message.id !== undefined) {
          const waiter = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.type === 'error') waiter?.reject(new Error(String(message.message)));
          else waiter?.resolve(message);
        }
      });
      this.proc.on('exit', (code, signal) => {
        this.exited = true;
        clearTimeout(timer);
        const error = new Error(`${file} ${args.join(' ')} exited (${code ?? signal})\n${this.stderr}`);
        reject(error);
        for (const waiter of this.pending.values()) waiter.reject(error);
        this.pending.clear();
      });
    });
    this.ready.catch(() => undefined);
  }

  get lastStderr(): string {
    return this.stderr;
  }

  request(type: string, payload: Record<string, unknown> = {}, timeoutMs = 600_000): Promise<Message> {
    if (this.exited) return Promise.reject(new Error(`child already exited\n${this.stderr}`));
    const id = this.nextId++;
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`child did not answer "${type}" within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.proc.send({ ...payload, type, id });
    });
  }

  /** Asks the child to exit, then kills it if it does not within `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
    this.proc.send({ type: 'stop' });
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

type Handler = (message: Message) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void;

/**
 * Child side: answers the runner's requests. `cpu` (process.cpuUsage) and `memory` are built in;
 * `stop` runs `onStop` and exits.
 */
export function serveChild(handlers: Record<string, Handler>, onStop?: () => Promise<void> | void): void {
  process.on('message', (message: Message) => {
    void (async () => {
      if (message.type === 'stop') {
        try {
          await onStop?.();
        } finally {
          process.exit(0);
        }
      }
      try {
        let reply: Record<string, unknown> | void;
        if (message.type === 'cpu') {
          // clockUs is on the clock of --cpu-prof timestamps: it marks measured windows in profiles.
          reply = { usage: process.cpuUsage(), clockUs: String(process.hrtime.bigint() / 1000n) };
        } else if (message.type === 'memory')
          reply = { memory: process.memoryUsage(), maxRssKb: process.resourceUsage().maxRSS };
        else {
          const handler = handlers[message.type];
          if (!handler) throw new Error(`unknown request "${message.type}"`);
          reply = await handler(message);
        }
        process.send!({ ...(reply ?? {}), type: 'reply', id: message.id });
      } catch (error) {
        process.send!({
          type: 'error',
          id: message.id,
          message: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      }
    })();
  });
  // The runner dying must not leave servers behind.
  process.on('disconnect', () => process.exit(0));
}

export function signalReady(payload: Record<string, unknown> = {}): void {
  process.send!({ ...payload, type: 'ready' });
}

export function signalFailure(error: unknown): void {
  process.send!({
    type: 'error',
    message: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  setTimeout(() => process.exit(1), 100);
}
