import { Child, type ChildOptions } from '../lib/ipc.js';
import { openLoop } from '../lib/http-driver.js';
import { drive, type LoadOptions, type LoadResult } from '../lib/load.js';
import { percentile } from '../lib/stats.js';
import { IdSequence, SHAPES, type ShapeName } from '../lib/shapes.js';
import { BenchRedis } from '../lib/redis-server.js';
import type { AdapterName } from './adapters.js';

export type Variant = 'bare' | 'plain' | 'validated' | 'module' | 'redis';

let serial = 0;

/**
 * A server under test (bench/inbound/server.ts) in its own process, with one fresh-id sequence per
 * shape. For the module's server, what the next ids need (carts, invoices) is prepared before the
 * warm-up and before the measured run, sized from the rate seen, outside the CPU window.
 * The Redis variant (Redis store + BullMQ runner) gets a private redis-server of its own (started with the target, emptied
 * when its server process is replaced, stopped with it), whose CPU is read around each window.
 */
export class Target {
  child?: Child;
  port?: number;
  /** Shapes the server serves (the module's server leaves out modules that have not landed). */
  shapes: ShapeName[] = [];
  failure?: string;
  private readonly sequences = new Map<ShapeName, IdSequence>();
  private readonly prepared = new Map<ShapeName, number>();
  private readonly tag = (serial++).toString(36);
  private options: ChildOptions = {};
  /** Measured runs driven on the current process. */
  runs = 0;
  /** Host handler runs per shape, summed over every process this target has had (module only). */
  readonly handled: Record<string, number> = {};
  /** Largest heap a process of this target held when it was replaced or asked (bytes). */
  largestHeap = 0;
  /** The Redis-store variant's own redis-server. */
  redis?: BenchRedis;
  /** Its version, kept for the report after it stopped. */
  redisVersion?: string;

  constructor(
    readonly variant: Variant,
    readonly adapter: AdapterName | '-',
  ) {}

  /** The suite's own server (in-memory or Redis store): it records, and needs ids prepared. */
  get isModule(): boolean {
    return this.variant === 'module' || this.variant === 'redis';
  }

  async start(options: ChildOptions = {}): Promise<boolean> {
    this.options = options;
    this.runs = 0;
    try {
      if (this.variant === 'redis') {
        this.redis ??= await BenchRedis.start();
        this.redisVersion = this.redis.version;
      }
      this.child = new Child(
        'inbound/server.ts',
        [
          this.variant,
          this.adapter === '-' ? 'express' : this.adapter,
          ...(this.redis ? [this.redis.url] : []),
        ],
        options,
      );
      const ready = await this.child.ready;
      this.port = ready.port as number;
      this.shapes = ready.shapes as ShapeName[];
      return true;
    } catch (error) {
      this.failure = (error instanceof Error ? error.message : String(error))
        .split('\n')
        .slice(0, 3)
        .join(' ');
      return false;
    }
  }

  /**
   * Replaces the server's process by a fresh one, after reading what the old one counted (host
   * handler runs) and held (heap). The ids go on counting; what the new process needs for them is
   * prepared again.
   */
  async restart(): Promise<boolean> {
    await this.collect();
    await this.child?.stop();
    // A fresh process starts with an empty store, as the in-memory variant's does.
    await this.redis?.flush();
    for (const [shape, seq] of this.sequences) this.prepared.set(shape, seq.next);
    return this.start(this.options);
  }

  /** Adds the current process's handler counts to `handled` and notes its heap (module only). */
  async collect(): Promise<void> {
    if (!this.isModule || !this.child || !this.port) return;
    // On Redis the handlers run on BullMQ's worker: let it finish the backlog the load left.
    if (this.variant === 'redis') await this.child.request('drain', { timeoutMs: 60_000 });
    const { counts } = await this.child.request('handled');
    for (const [shape, count] of Object.entries(counts as Record<string, number>))
      this.handled[shape] = (this.handled[shape] ?? 0) + count;
    const { memory } = await this.child.request('memory');
    this.largestHeap = Math.max(this.largestHeap, (memory as NodeJS.MemoryUsage).heapUsed);
  }

  serves(shape: ShapeName): boolean {
    return this.port !== undefined && this.shapes.includes(shape);
  }

  sequence(shape: ShapeName): IdSequence {
    let seq = this.sequences.get(shape);
    if (!seq) {
      // Short: ClientReference allows 32 characters.
      seq = new IdSequence(SHAPES[shape], `b${this.tag}${shape[0]}-`);
      this.sequences.set(shape, seq);
    }
    return seq;
  }

  /** Makes sure the next `count` ids of `shape` are prepared on the server. */
  async prepare(shape: ShapeName, count: number): Promise<void> {
    if (!this.isModule) return;
    const seq = this.sequence(shape);
    const done = this.prepared.get(shape) ?? 0;
    const upTo = seq.next + Math.ceil(count);
    if (upTo <= done) return;
    await this.child!.request('prepare', { shape, prefix: seq.prefix, from: done, count: upTo - done });
    this.prepared.set(shape, upTo);
  }

  drive(shape: ShapeName, load: Omit<LoadOptions, 'port' | 'path' | 'ids' | 'prepare'>): Promise<LoadResult> {
    // Headroom: twice the rate seen in the warm-up (a warm server goes faster than the warm-up),
    // or a generous guess before any was seen, plus a second. Running short would answer 404s.
    const guess = load.rate ?? 20_000;
    this.runs++;
    return drive(this.child!, {
      ...load,
      port: this.port!,
      path: SHAPES[shape].path,
      ids: this.sequence(shape),
      prepare: (seconds, rps) => this.prepare(shape, (rps ?? guess) * 2 * (seconds + 1)),
      ...(this.redis ? { sideCpuUs: () => this.redis!.cpuUs() } : {}),
    });
  }

  /**
   * CPU per request at a fixed, sub-saturation rate (open loop, undici): every server sees the same
   * load, so neither it nor the load generator is the bottleneck. At saturation the idle side's
   * wake-ups are charged to the busy side's syscalls, which skews CPU/req against the slower server.
   */
  async atRate(
    shape: ShapeName,
    rate: number,
    durationSec: number,
    warmupSec: number,
  ): Promise<{ cpuUsPerReq: number; p50: number; p99: number; bad: number; answered: number }> {
    const origin = `http://127.0.0.1:${this.port!}`;
    const seq = this.sequence(shape);
    const next = () => ({ path: SHAPES[shape].path, body: seq.take().body });
    await this.prepare(shape, rate * (warmupSec + durationSec) * 1.2 + 100);
    const warm = warmupSec > 0 ? await openLoop(origin, rate, warmupSec, next) : undefined;
    const before = (await this.child!.request('cpu')).usage as NodeJS.CpuUsage;
    const run = await openLoop(origin, rate, durationSec, next);
    const after = (await this.child!.request('cpu')).usage as NodeJS.CpuUsage;
    return {
      cpuUsPerReq: (after.user - before.user + after.system - before.system) / run.requests,
      p50: percentile(run.latenciesMs, 50),
      p99: percentile(run.latenciesMs, 99),
      bad: run.wrong + run.errors,
      answered: run.requests - run.errors + (warm ? warm.requests - warm.errors : 0),
    };
  }

  async stop(graceMs?: number): Promise<void> {
    await this.child?.stop(graceMs);
    await this.redis?.stop();
    this.redis = undefined;
  }
}
