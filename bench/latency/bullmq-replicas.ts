import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchConfig } from '../lib/config.js';
import { openLoop, type DriveStats } from '../lib/http-driver.js';
import { Child } from '../lib/ipc.js';
import { SHAPES } from '../lib/shapes.js';
import { BenchRedis } from '../lib/redis-server.js';
import { percentile } from '../lib/stats.js';
import { PROBE_HEADER } from '../inbound/latency-probe.js';
import type { LoopReport } from '../lib/loop-watch.js';
import { busyShare, machineCpu } from '../lib/machine.js';

/** What the two-instance BullMQ run measured: callback arrival (either replica) → handler start (either). */
export interface ReplicaLatency {
  count: number;
  /** Probed requests whose handler never started (or answered wrong / failed). */
  lost: number;
  /** Probed requests whose handler started but whose fulfillment callback never came. */
  notCalledBack: number;
  /** Probed requests whose handler started more than once (on either replica). */
  twice: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** p99 of each third of the run (by arrival). */
  windowP99: number[];
  http: DriveStats[];
  /**
   * CPU (user + system) of both replicas over the measured window, per request sent in it: each
   * replica both answers and runs jobs, so this is the answering and the job work together.
   */
  cpuUsPerRequest: number;
  /** redis-server's own CPU over the same window, per request. */
  redisCpuUsPerRequest: number;
  /** This process's CPU over the window, per request: the load generator and the callback receiver. */
  driverCpuUsPerRequest: number;
  /**
   * The share of the whole machine (both cores) busy over the window, 0 to 1 (undefined off Linux):
   * near 1, requests queue for a core and the p99 measures capacity more than work per request.
   */
  machineBusy: number | undefined;
  /**
   * The replicas' event loops over the window: the larger delay p99 and max of the two, their
   * collector time per request (µs) and longest pause.
   */
  loop: {
    delayP99Ms: number;
    delayMaxMs: number;
    gcUsPerRequest: number;
    gcMaxMs: number;
    /** Of gcUsPerRequest: mark-compacts (whole heap), µs per request. */
    gcMajorUsPerRequest: number;
    /** The larger replica's heap in use at the window's end, MB. */
    heapUsedMb: number;
  };
  /**
   * The two stages of a request's latency, ms (p50, p99): arrival to its answer's last byte
   * handed to the socket, and that answer to the handler's start (the job's queueing and start).
   */
  stages: { answerP50: number; answerP99: number; afterP50: number; afterP99: number };
}

/** User + system CPU of a child so far, in µs (the IPC's own `cpu` request). */
async function cpuOf(child: Child): Promise<number> {
  const { usage } = (await child.request('cpu')) as unknown as { usage: NodeJS.CpuUsage };
  return usage.user + usage.system;
}

/**
 * The platform's fulfillment-callback receiver, reduced to a 200: it notes the OrderIds called
 * back, so a run shows that both sides did the contract's last step for each order.
 */
export async function startCallbackSink(): Promise<{ url: string; server: Server; calledBack: Set<string> }> {
  const calledBack = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const orderId = /"OrderId":"([^"]+)"/.exec(Buffer.concat(chunks).toString())?.[1];
      if (orderId) calledBack.add(orderId);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"message":"Callback received","responseCode":"0000","data":null}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, server, calledBack };
}

/**
 * Two replicas (separate processes) of a service app on the Redis store and the BullMQ runner
 * (or of the hand-written baseline: a controller adding one BullMQ job, a worker), one
 * redis-server: fulfillment requests split evenly between them at `latency.rate` in all; each
 * request's handler may start on either replica (whichever BullMQ worker takes the job).
 */
export async function measureBullmqReplicas(
  config: BenchConfig,
  /** Extra environment of the replicas. */
  env: Record<string, string> = {},
  /** `bare`: the hand-written baseline (bare-replica.ts), same load and measurement. */
  replica: 'suite' | 'bare' = 'suite',
): Promise<ReplicaLatency> {
  const { latency } = config;
  // A private redis-server (noeviction, as BullMQ requires), the one the other Redis parts use.
  const redis = await BenchRedis.start();
  const sink = await startCallbackSink();
  const replicas = [0, 1].map(
    () =>
      new Child(replica === 'bare' ? 'latency/bare-replica.ts' : 'latency/bullmq-replica.ts', [], {
        env: { REDIS_URL: redis.url, CALLBACK_URL: sink.url, ...env },
        // BENCH_REPLICA_PROFILE=<dir>: a CPU profile per replica (Node refuses --cpu-prof in
        // NODE_OPTIONS); BENCH_ALLOC_PROFILE=<dir>: what each allocated (bench/lib/loop-watch.ts).
        ...(process.env.BENCH_REPLICA_PROFILE
          ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_REPLICA_PROFILE}`] }
          : {}),
      }),
  );
  try {
    const ports = (await Promise.all(replicas.map((replica) => replica.ready))).map((ready) =>
      Number(ready.port),
    );
    let seq = 0;
    const next = (probe: boolean) => () => {
      const id = `bq-${++seq}`;
      return {
        path: SHAPES.fulfillment.path,
        body: JSON.stringify(SHAPES.fulfillment.make(id)),
        headers: probe ? { [PROBE_HEADER]: id } : undefined,
        check: (status: number, text: string) => status === 200 && /"Status":"received"/.test(text),
      };
    };
    const drive = (seconds: number, probe: boolean) =>
      Promise.all(
        ports.map((port) =>
          openLoop(`http://127.0.0.1:${port}`, latency.rate / 2, seconds, next(probe), latency.connections),
        ),
      );
    await drive(latency.replicaWarmupSec, false);
    await sleep(300);
    if (process.env.BENCH_COMMANDSTATS) await redis.client.config('RESETSTAT');
    await Promise.all(replicas.map((replica) => replica.request('latency-start')));
    const cpuBefore = await Promise.all(replicas.map(cpuOf));
    const redisBefore = await redis.cpuUs();
    const driverBefore = process.cpuUsage();
    const machineBefore = machineCpu();
    const http = await drive(latency.durationSec, true);
    // Handlers run after the 200 (on a worker): let the last ones start, and their jobs end.
    await sleep(500);
    const machineAfter = machineCpu();
    const driver = process.cpuUsage(driverBefore);
    const cpuAfter = await Promise.all(replicas.map(cpuOf));
    const redisAfter = await redis.cpuUs();
    const reports = await Promise.all(replicas.map((replica) => replica.request('latency-report')));
    if (process.env.BENCH_COMMANDSTATS) {
      const sent = http.reduce((sum, run) => sum + run.requests, 0);
      const stats = await redis.info('commandstats');
      const lines = Object.entries(stats)
        .map(
          ([k, v]) =>
            [
              k.replace('cmdstat_', ''),
              Number(/calls=(\d+)/.exec(v)?.[1]),
              Number(/usec=(\d+)/.exec(v)?.[1]),
            ] as const,
        )
        .sort((a, b) => b[1] - a[1]);
      console.log(
        `${replica}: per request (${sent}):`,
        lines.map(([k, c, us]) => `${k} ${(c / sent).toFixed(2)} (${(us / sent).toFixed(0)}us)`).join(', '),
      );
    }

    const arrived = new Map<string, number>();
    const started = new Map<string, number>();
    let twice = 0;
    for (const report of reports) {
      const a = report.arrivals as Array<string | number>;
      for (let i = 0; i < a.length; i += 2) arrived.set(a[i] as string, a[i + 1] as number);
    }
    for (const report of reports) {
      const h = report.handled as Array<string | number>;
      for (let i = 0; i < h.length; i += 2)
        if (!started.has(h[i] as string)) started.set(h[i] as string, h[i + 1] as number);
        else if (arrived.has(h[i] as string)) twice++;
    }
    const samples: Array<[at: number, ms: number]> = [];
    // The callbacks follow the handlers: give the last ones a few seconds (not measured).
    for (
      let waited = 0;
      waited < 5_000 && [...started.keys()].some((key) => !sink.calledBack.has(key));
      waited += 100
    )
      await sleep(100);
    const answerMs: number[] = [];
    const afterMs: number[] = [];
    for (const report of reports) {
      const a = report.answered as Array<string | number>;
      for (let i = 0; i < a.length; i += 2) {
        const key = a[i] as string;
        const at = a[i + 1] as number;
        const came = arrived.get(key);
        const begun = started.get(key);
        if (came !== undefined) answerMs.push(at - came);
        if (begun !== undefined) afterMs.push(begun - at);
      }
    }
    const answerSorted = Float64Array.from(answerMs).sort();
    const afterSorted = Float64Array.from(afterMs).sort();
    let notCalledBack = 0;
    for (const [key, at] of arrived) {
      const begun = started.get(key);
      if (begun !== undefined) samples.push([at, begun - at]);
      if (begun !== undefined && !sink.calledBack.has(key)) notCalledBack++;
    }
    const sorted = Float64Array.from(samples.map(([, ms]) => ms)).sort();
    const windowP99: number[] = [];
    if (samples.length > 0) {
      samples.sort((x, y) => x[0] - y[0]);
      const first = samples[0]![0];
      const span = samples[samples.length - 1]![0] - first || 1;
      for (let w = 0; w < 3; w++) {
        const part = Float64Array.from(
          samples
            .filter(([at]) =>
              w === 2
                ? at >= first + (span * w) / 3
                : at >= first + (span * w) / 3 && at < first + (span * (w + 1)) / 3,
            )
            .map(([, ms]) => ms),
        ).sort();
        windowP99.push(percentile(part, 99));
      }
    }
    const wrong = http.reduce((sum, run) => sum + run.wrong + run.errors, 0);
    const sent = Math.max(
      1,
      http.reduce((sum, run) => sum + run.requests, 0),
    );
    const loops = reports.map((report) => report.loop as unknown as LoopReport);
    return {
      loop: {
        delayP99Ms: Math.max(...loops.map((l) => l.delayP99Ms)),
        delayMaxMs: Math.max(...loops.map((l) => l.delayMaxMs)),
        gcUsPerRequest: (loops.reduce((sum, l) => sum + l.gcMs, 0) * 1000) / sent,
        gcMaxMs: Math.max(...loops.map((l) => l.gcMaxMs)),
        gcMajorUsPerRequest: (loops.reduce((sum, l) => sum + l.gcMajorMs, 0) * 1000) / sent,
        heapUsedMb: Math.max(...loops.map((l) => l.heapUsedMb)),
      },
      stages: {
        answerP50: percentile(answerSorted, 50),
        answerP99: percentile(answerSorted, 99),
        afterP50: percentile(afterSorted, 50),
        afterP99: percentile(afterSorted, 99),
      },
      cpuUsPerRequest: (cpuAfter[0]! - cpuBefore[0]! + cpuAfter[1]! - cpuBefore[1]!) / sent,
      redisCpuUsPerRequest: (redisAfter - redisBefore) / sent,
      driverCpuUsPerRequest: (driver.user + driver.system) / sent,
      machineBusy: busyShare(machineBefore, machineAfter),
      count: sorted.length,
      lost: arrived.size - sorted.length + wrong,
      notCalledBack,
      twice,
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1]! : NaN,
      windowP99,
      http,
    };
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop().catch(() => undefined)));
    await new Promise<void>((resolve) => sink.server.close(() => resolve()));
    await redis.stop();
  }
}
