/**
 * A TypeScript entry run as its own process (`node --import ./bench/loader/register.mjs <entry>`),
 * for tests of several instances: its stdout JSON lines are collected and can be waited for, and it
 * can be killed like a crashed instance (SIGKILL). Children still running when the test process
 * exits are killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export type Line = Record<string, unknown>;

export class TsProcess {
  readonly lines: Line[] = [];
  private output = '';
  private waiters: Array<() => void> = [];
  readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    live.add(child);
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const text = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        this.output += `${text}\n`;
        if (!text.startsWith('{')) continue;
        try {
          this.lines.push(JSON.parse(text) as Line);
        } catch {
          continue;
        }
        for (const wake of this.waiters.splice(0)) wake();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        live.delete(child);
        for (const wake of this.waiters.splice(0)) wake();
        resolve(code);
      }),
    );
  }

  /** Starts `entry` (relative to the repository root) with `args` and extra environment. */
  static start(entry: string, args: string[] = [], env: Record<string, string> = {}): TsProcess {
    const child = spawn(
      process.execPath,
      ['--import', './bench/loader/register.mjs', path.join(root, entry), ...args],
      { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return new TsProcess(child);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the first line (already printed or to come) matching, or fails after `ms`. */
  async waitFor(match: (line: Line) => boolean, what: string, ms = 30_000): Promise<Line> {
    const giveUp = Date.now() + ms;
    for (;;) {
      const found = this.lines.find(match);
      if (found) return found;
      if (!this.running) throw new Error(`Process exited before ${what}:\n${this.output}`);
      const left = giveUp - Date.now();
      if (left <= 0) throw new Error(`Timed out waiting for ${what}:\n${this.output}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Kills the process at once, as a crash would (no shutdown hook runs). */
  async kill(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Asks the process to stop (SIGTERM: shutdown hooks run), killing it if it takes over `ms`. */
  async stop(ms = 10_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), ms);
    await this.exited;
    clearTimeout(timer);
  }
}
