import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Open-loop and session drivers over undici, for latency measurements that must not be skewed by
 * the load generator: autocannon's rate limiting sends each connection's quota in a burst at the
 * start of every second (1,000 paced connections = 1,000 requests at once), which measures its
 * own queueing. Here requests start on their own schedule, and latency is taken from the moment
 * a request was due (so a late client never hides server delay).
 */
export interface Sent {
  path: string;
  body: string;
  headers?: Record<string, string>;
  /** Checks the answer; false counts as a wrong answer. */
  check?: (status: number, body: string) => boolean;
}

export interface DriveStats {
  latenciesMs: Float64Array;
  /** p99 of each third of the measured run (by send time), in order. */
  windowP99Ms: number[];
  requests: number;
  /** Requests sent in all, warm-up included. */
  sent: number;
  wrong: number;
  errors: number;
  /** The first few wrong answers and errors, described (status and body, or the error). */
  failures: string[];
  elapsedSec: number;
}

const FAILURES_KEPT = 5;

async function send(pool: Pool, request: Sent, failures: string[]): Promise<boolean> {
  try {
    const { statusCode, body } = await pool.request({
      method: 'POST',
      path: request.path,
      headers: { 'content-type': 'application/json', accept: 'application/json', ...request.headers },
      body: request.body,
    });
    const text = await body.text();
    const ok = request.check ? request.check(statusCode, text) : statusCode >= 200 && statusCode < 300;
    if (!ok && failures.length < FAILURES_KEPT) failures.push(`${statusCode} ${text.slice(0, 200)}`);
    return ok;
  } catch (error) {
    if (failures.length < FAILURES_KEPT) failures.push(String(error));
    throw error;
  }
}

/** `rate` requests per second, evenly spaced, for `durationSec`, whatever the answers' timing. */
export async function openLoop(
  origin: string,
  rate: number,
  durationSec: number,
  next: () => Sent,
  connections = 64,
): Promise<DriveStats> {
  const pool = new Pool(origin, { connections, keepAliveTimeout: 30_000, pipelining: 1 });
  const latencies: number[] = [];
  const sentAt: number[] = [];
  let wrong = 0;
  let errors = 0;
  const failures: string[] = [];
  const total = Math.round(rate * durationSec);
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  try {
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const request = next();
      // From when it was due, or from when it went out if that was (slightly) early.
      const from = Math.min(due, performance.now());
      inFlight.push(
        send(pool, request, failures).then(
          (ok) => {
            latencies.push(performance.now() - from);
            sentAt.push(due);
            if (!ok) wrong++;
          },
          () => void errors++,
        ),
      );
    }
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  return {
    latenciesMs: Float64Array.from(latencies).sort(),
    windowP99Ms: windowP99(latencies, sentAt, start, start + durationSec * 1000),
    requests: total,
    sent: total,
    wrong,
    errors,
    failures,
    elapsedSec: (Math.max(performance.now(), start) - start) / 1000,
  };
}

/**
 * `sessions` users at once, each going through `steps` in order with a think time between steps
 * (uniform in [0, 2 × thinkMs], so steps arrive spread out), a fresh session each time round, for
 * `warmupSec` (connections opened, code warmed, nothing recorded) then `durationSec` (every step's
 * latency recorded).
 */
export async function sessionLoop(
  origin: string,
  sessions: number,
  thinkMs: number,
  durationSec: number,
  steps: ((sessionId: string) => Sent)[],
  warmupSec = 0,
): Promise<DriveStats> {
  const pool = new Pool(origin, { connections: sessions, keepAliveTimeout: 30_000, pipelining: 1 });
  const latencies: number[] = [];
  let wrong = 0;
  let errors = 0;
  let requests = 0;
  const failures: string[] = [];
  const sentTimes: number[] = [];
  // Ids unique to this loop: a server driven by several loops refuses a SessionId that has a cart.
  const run = randomUUID().slice(0, 8);
  let serial = 0;
  let sent = 0;
  const start = performance.now() + warmupSec * 1000;
  const end = start + durationSec * 1000;
  const user = async () => {
    // Users start spread over one think time, not all at once.
    await sleep(Math.random() * thinkMs);
    while (performance.now() < end) {
      const sessionId = `sess-${run}-${(serial++).toString(36)}`;
      for (const step of steps) {
        if (performance.now() >= end) return;
        const request = step(sessionId);
        const sentAt = performance.now();
        const measured = sentAt >= start;
        if (measured) requests++;
        sent++;
        try {
          const ok = await send(pool, request, measured ? failures : []);
          if (measured) {
            latencies.push(performance.now() - sentAt);
            sentTimes.push(sentAt);
            if (!ok) wrong++;
          }
        } catch {
          if (measured) errors++;
        }
        const think = Math.random() * 2 * thinkMs;
        // A user whose next step would fall after the end stops now (no idle tail).
        if (performance.now() + think >= end) return;
        await sleep(think);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: sessions }, user));
  } finally {
    await pool.close();
  }
  return {
    latenciesMs: Float64Array.from(latencies).sort(),
    windowP99Ms: windowP99(latencies, sentTimes, start, end),
    requests,
    sent,
    wrong,
    errors,
    failures,
    elapsedSec: (Math.max(performance.now(), start) - start) / 1000,
  };
}

/**
 * p99 per third of the run. On a shared machine one outside hiccup (another process taking the
 * core for 100 ms) sets a whole run's p99; the median of the windows' p99s shows whether a slow
 * tail is ours (it recurs in every window) or a one-off.
 */
function windowP99(latencies: number[], sentAt: number[], start: number, end: number, windows = 3): number[] {
  const span = (end - start) / windows;
  const buckets: number[][] = Array.from({ length: windows }, () => []);
  for (let i = 0; i < latencies.length; i++) {
    const index = Math.min(windows - 1, Math.max(0, Math.floor((sentAt[i]! - start) / span)));
    buckets[index]!.push(latencies[i]!);
  }
  return buckets.map((bucket) => {
    if (bucket.length === 0) return NaN;
    bucket.sort((a, b) => a - b);
    return bucket[Math.min(bucket.length - 1, Math.ceil(0.99 * bucket.length) - 1)]!;
  });
}
