import type { IncomingMessage, Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { percentile } from '../lib/stats.js';

/** Header the latency run puts on each request: the key the host handler will see (OrderId, ClientReference). */
export const PROBE_HEADER = 'x-bench-key';

/**
 * Callback-to-handler latency, in process: the time from the HTTP server's `request` event (the
 * callback has arrived, headers parsed) to the host's event handler starting, matched by key.
 * Attached only for the latency runs, so it costs nothing in the throughput runs.
 */
export class LatencyProbe {
  private server?: Server;
  private readonly arrivals = new Map<string, bigint>();
  private samples: number[] = [];
  private arrivedAt: number[] = [];
  private twice = 0;
  private recording = false;
  /**
   * Every key whose handler ran since `start` (kept only while recording: the throughput runs call
   * `handled` too, and must not pay for a set of every key they sent).
   */
  private readonly handledKeys = new Set<string>();
  /** Host handler runs per kind since the server started (checks every request did real work). */
  readonly counts: Record<string, number> = {};
  private readonly onRequest = (req: IncomingMessage) => {
    const key = req.headers[PROBE_HEADER];
    if (typeof key === 'string') this.arrivals.set(key, process.hrtime.bigint());
  };

  attach(app: INestApplication): void {
    this.server = app.getHttpServer() as Server;
  }

  start(): void {
    this.samples = [];
    this.arrivedAt = [];
    this.twice = 0;
    this.recording = true;
    this.arrivals.clear();
    this.handledKeys.clear();
    // First listener: runs before the framework's own handler for the same request.
    this.server?.prependListener('request', this.onRequest);
  }

  /** Counts a run of the host's code for `kind` (a shape name). */
  count(kind: string): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
  }

  /** Called by the host handler with the request's key. */
  handled(key: string, kind: string): void {
    this.count(kind);
    if (!this.recording) return;
    // A key seen before is a handler run twice: the one thing this probe must never miss.
    if (this.handledKeys.has(key)) {
      this.twice++;
      return;
    }
    this.handledKeys.add(key);
    const at = this.arrivals.get(key);
    // Not arrived since `start`: a warm-up request whose handler started after it (a loaded
    // machine), not a measured one.
    if (at === undefined) return;
    this.arrivals.delete(key);
    this.samples.push(Number(process.hrtime.bigint() - at) / 1e6);
    this.arrivedAt.push(Number(at) / 1e6);
  }

  /** Requests that arrived and whose handler has not started yet. */
  pending(): number {
    return this.arrivals.size;
  }

  /** Stops recording and returns the latencies (ms) recorded since `start`. */
  stop(): Record<string, unknown> {
    this.server?.removeListener('request', this.onRequest);
    this.recording = false;
    const sorted = Float64Array.from(this.samples).sort();
    const result = {
      count: sorted.length,
      twice: this.twice,
      pending: this.arrivals.size,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1] : NaN,
      windowP99: this.windowP99(3),
    };
    this.arrivals.clear();
    this.handledKeys.clear();
    this.samples = [];
    this.arrivedAt = [];
    return result;
  }

  /** p99 per equal slice of the run by arrival time (see lib/http-driver.ts windowP99). */
  private windowP99(windows: number): number[] {
    if (this.samples.length === 0) return [];
    const first = Math.min(...this.arrivedAt);
    const span = (Math.max(...this.arrivedAt) - first) / windows || 1;
    const buckets: number[][] = Array.from({ length: windows }, () => []);
    this.samples.forEach((ms, i) => {
      buckets[Math.min(windows - 1, Math.floor((this.arrivedAt[i]! - first) / span))]!.push(ms);
    });
    return buckets.map((bucket) =>
      percentile(
        bucket.sort((a, b) => a - b),
        99,
      ),
    );
  }
}
