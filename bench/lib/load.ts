import autocannon, { type Options, type Result } from 'autocannon';
import type { Child } from './ipc.js';
import type { IdSequence } from './shapes.js';

export interface LoadResult {
  /** Completed requests per second over the measured window. */
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  /** Server CPU (user + system) per completed request, in µs. */
  cpuUsPerReq: number;
  /** CPU per completed request of a process the server depends on (its Redis), in µs. */
  sideCpuUsPerReq?: number;
  /** Server CPU use over the window, in cores (1.0 = one core busy). */
  cpuCores: number;
  errors: number;
  non2xx: number;
  /** Answers received in all, warm-up included (to check the server did the work for each). */
  answered: number;
  /** The measured window on the server's monotonic clock (µs), to cut CPU profiles to it. */
  window: { startUs: number; endUs: number };
}

export interface LoadOptions {
  port: number;
  path: string;
  /** Where fresh bodies come from (one id per request). */
  ids: IdSequence;
  connections: number;
  durationSec: number;
  warmupSec: number;
  /** Requests per second across all connections; unlimited when absent. */
  rate?: number;
  /** Put the request's key in a header too (latency probe). */
  probeHeader?: string;
  /** Runs before the warm-up, and between warm-up and measurement with the warm-up's req/s. */
  prepare?: (seconds: number, rps?: number) => Promise<void>;
  /** CPU used so far (µs) by a process the server depends on (its redis-server), read around the window. */
  sideCpuUs?: () => Promise<number>;
}

function options(load: LoadOptions, durationSec: number): Options {
  const { ids } = load;
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  return {
    url: `http://127.0.0.1:${load.port}`,
    connections: load.connections,
    duration: durationSec,
    timeout: 10,
    // autocannon stops at its next sample tick (1 s by default): tick often so short runs end on time.
    sampleInt: 100,
    ...(load.rate ? { overallRate: load.rate } : {}),
    requests: [
      {
        method: 'POST',
        path: load.path,
        headers,
        setupRequest: (request: { body?: string; headers?: Record<string, string> }) => {
          const { id, body } = ids.take();
          request.body = body;
          if (load.probeHeader) request.headers = { ...headers, [load.probeHeader]: ids.shape.keyOf(id) };
          return request;
        },
      },
    ],
  };
}

function run(opts: Options): Promise<Result> {
  return autocannon(opts);
}

/**
 * Drives one endpoint of a server child at fixed concurrency: a warm-up (discarded), then the
 * measured window, with the child's own process.cpuUsage() read over IPC before and after.
 * The load generator runs in this (the runner's) process, never in the server's.
 */
export async function drive(server: Child, load: LoadOptions): Promise<LoadResult> {
  let rps: number | undefined;
  let warmAnswered = 0;
  if (load.warmupSec > 0) {
    await load.prepare?.(load.warmupSec);
    const warm = await run(options(load, load.warmupSec));
    warmAnswered = warm['2xx'] + warm.non2xx;
    rps = warmAnswered / warm.duration;
  }
  await load.prepare?.(load.durationSec, rps);
  const sideBefore = await load.sideCpuUs?.();
  const first = await server.request('cpu');
  const before = first.usage as NodeJS.CpuUsage;
  const started = process.hrtime.bigint();
  const result = await run(options(load, load.durationSec));
  const elapsedSec = Number(process.hrtime.bigint() - started) / 1e9;
  const last = await server.request('cpu');
  const after = last.usage as NodeJS.CpuUsage;
  const sideAfter = await load.sideCpuUs?.();
  const cpuUs = after.user - before.user + (after.system - before.system);
  const completed = result['2xx'] + result.non2xx;
  return {
    rps: completed / result.duration,
    requests: completed,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUsPerReq: completed > 0 ? cpuUs / completed : NaN,
    ...(sideBefore !== undefined && sideAfter !== undefined && completed > 0
      ? { sideCpuUsPerReq: (sideAfter - sideBefore) / completed }
      : {}),
    cpuCores: cpuUs / 1e6 / elapsedSec,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    answered: warmAnswered + completed,
    window: { startUs: Number(first.clockUs), endUs: Number(last.clockUs) },
  };
}
