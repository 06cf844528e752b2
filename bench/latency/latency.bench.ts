import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchConfig } from '../lib/config.js';
import { marginAtMost, table, type Goal, type SectionResult } from '../lib/report.js';
import { SHAPES, type ShapeName } from '../lib/shapes.js';
import { fmt, median, percentile } from '../lib/stats.js';
import { openLoop } from '../lib/http-driver.js';
import { ADAPTERS, type AdapterName } from '../inbound/adapters.js';
import { PROBE_HEADER } from '../inbound/latency-probe.js';
import { Target } from '../inbound/target.js';
import { measureBullmqReplicas } from './bullmq-replicas.js';

const GOAL_P99_MS = 5;
/** Issue 15: across two replicas with the BullMQ runner (Redis store), callback → handler. */
const GOAL_BULLMQ_P99_MS = 10;
const SHAPES_WITH_HANDLERS: ShapeName[] = ['checkout-callback', 'fulfillment'];
/** The answer of a callback that was accepted as new (not refused, not a duplicate). */
const ACCEPTED: Record<ShapeName, RegExp> = {
  'checkout-callback': /"received":true/,
  fulfillment: /"Status":"received"/,
  'service-flow': /"SessionId"/,
};

/**
 * Callback-to-handler latency, in process: the module's server records when each callback
 * arrives (its HTTP server's `request` event) and when the host's handler (@OnCheckoutPaid,
 * @OnFulfillment) starts for it; the difference covers validation, verification, recording,
 * the 200 answer and the dispatch. Load: a steady rate from the runner, below saturation.
 */
export async function runLatency(config: BenchConfig, log: (line: string) => void): Promise<SectionResult> {
  const { latency } = config;
  const adapters = (config.inbound.adapters ?? ADAPTERS) as AdapterName[];
  const rows: string[][] = [];
  const goals: Goal[] = [];
  for (const adapter of adapters) {
    const target = new Target('module', adapter);
    if (!(await target.start())) {
      log(`  module/${adapter}: could not start: ${target.failure}`);
      for (const shape of SHAPES_WITH_HANDLERS) {
        goals.push({
          area: `Callback → handler, ${SHAPES[shape].label}, ${adapter}`,
          goal: `p99 < ${GOAL_P99_MS} ms`,
          measured: 'module endpoint not available',
          met: null,
          margin: 'not measured',
        });
      }
      continue;
    }
    try {
      for (const shape of SHAPES_WITH_HANDLERS) {
        if (!target.serves(shape)) continue;
        const origin = `http://127.0.0.1:${target.port!}`;
        const seq = target.sequence(shape);
        const next = (probe: boolean) => () => {
          const { id, body } = seq.take();
          return {
            path: SHAPES[shape].path,
            body,
            headers: probe ? { [PROBE_HEADER]: SHAPES[shape].keyOf(id) } : undefined,
            check: (status: number, text: string) => status === 200 && ACCEPTED[shape].test(text),
          };
        };
        await target.prepare(shape, latency.rate * (1 + latency.durationSec) * 1.2 + 100);
        await openLoop(origin, latency.rate, latency.warmupSec, next(false), latency.connections);
        await target.child!.request('latency-start');
        const http = await openLoop(
          origin,
          latency.rate,
          latency.durationSec,
          next(true),
          latency.connections,
        );
        // Handlers run after the 200: let the last ones finish.
        await sleep(300);
        const probe = await target.child!.request('latency-stop');
        const [p50, p90, p99, max] = [probe.p50, probe.p90, probe.p99, probe.max].map(Number) as [
          number,
          number,
          number,
          number,
        ];
        const count = Number(probe.count);
        const windows = (probe.windowP99 as number[]).map(Number);
        const typical = median(windows);
        const lost = Number(probe.pending) + Number(probe.unmatched) + http.wrong + http.errors;
        log(
          `  ${adapter} ${shape}: ${count} handled, p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms` +
            (lost ? ` (${lost} not matched)` : ''),
        );
        rows.push([
          adapter,
          SHAPES[shape].label,
          fmt(http.requests / http.elapsedSec),
          fmt(count),
          p50.toFixed(2),
          p90.toFixed(2),
          p99.toFixed(2),
          windows.map((w) => w.toFixed(2)).join(' / '),
          max.toFixed(2),
          `${percentile(http.latenciesMs, 50).toFixed(2)} / ${percentile(http.latenciesMs, 99).toFixed(2)}`,
          lost ? `${lost} requests refused, failed or never reached the handler` : '',
        ]);
        goals.push({
          area: `Callback → handler, ${SHAPES[shape].label}, ${adapter}`,
          goal: `p99 < ${GOAL_P99_MS} ms`,
          measured: `p99 ${typical.toFixed(2)} ms (median of 3 windows; whole run ${p99.toFixed(2)} ms; p50 ${p50.toFixed(2)} ms)`,
          met: count > 0 && lost === 0 ? typical < GOAL_P99_MS : count > 0 ? false : null,
          margin: marginAtMost(typical, GOAL_P99_MS) + (lost ? `; ${lost} callbacks not handled` : ''),
        });
      }
    } finally {
      await target.stop();
    }
  }
  await measureReplicas(config, log, rows, goals);
  const markdown =
    `The module's server records each request's arrival (HTTP \`request\` event) and the start of the host's handler ` +
    `(\`@OnCheckoutPaid()\`, \`@OnFulfillment()\`) for it, matched by key; each request is fresh (verified, recorded, ` +
    `acknowledged, dispatched). Load: ${latency.rate} req/s evenly spaced (open loop, undici, up to ${latency.connections} ` +
    `connections) from the runner for ${latency.durationSec} s, after ${latency.warmupSec} s of warm-up. HTTP latency is counted from when ` +
    `each request was due. The goal is judged on the median of the p99s of the run's three thirds (a tail that is ours recurs ` +
    `in every third; one outside hiccup on this shared machine does not), and the whole run's p99 is shown beside it. ` +
    `The \`2 replicas, BullMQ\` row: two processes of a service app (Express) on the Redis store and the BullMQ runner, ` +
    `one local redis-server, the same rate split evenly between them; each fulfillment request is recorded and its run ` +
    `added to BullMQ before its 200, and its handler starts on whichever replica's worker takes the job (the runner's ` +
    `default: every run a BullMQ job). The \`firstRunHere\` rows, for comparison and not judged: the handler's first run ` +
    `starts on the replica that received the request, without the queue (BullMQ takes retries, deferrals and, through ` +
    `the pipeline's sweep after the lease, the run of a replica that died). Arrival and start are taken on the ` +
    `system clock both processes share. Its requests need no USSD session first (\`requireCart: false\`). The default is judged at the section's rate, and shown at ${BULLMQ_LIGHT_RATE} req/s too, below the replicas' saturation.\n\n` +
    table(
      [
        'adapter',
        'callback',
        'req/s',
        'handled',
        'p50 ms',
        'p90 ms',
        'p99 ms',
        'p99 per third of the run, ms',
        'max ms',
        'HTTP p50 / p99 ms',
        'note',
      ],
      rows,
      ['l', 'l'],
    );
  return { title: 'Callback-to-handler latency', markdown, goals };
}

/** Below saturation of the two replicas, for the picture beside the same-rate row. */
const BULLMQ_LIGHT_RATE = 100;

/**
 * The two-replica BullMQ runs (issue 15): at the section's rate (judged: the same load as the
 * in-process rows), and at BULLMQ_LIGHT_RATE (shown, not judged) where the replicas keep up;
 * each with the runner's default (every run a BullMQ job; the judged row), then with
 * `firstRunHere: true` (the opt-in low-latency mode, shown beside it, not judged).
 */
async function measureReplicas(
  config: BenchConfig,
  log: (line: string) => void,
  rows: string[][],
  goals: Goal[],
): Promise<void> {
  const rates = [...new Set([config.latency.rate, Math.min(BULLMQ_LIGHT_RATE, config.latency.rate)])];
  const modes: Array<{ name: string; env: Record<string, string> }> = [
    { name: '', env: {} },
    { name: ', firstRunHere', env: { FIRST_RUN_HERE: '1' } },
  ];
  for (const [index, rate] of rates.entries())
    for (const [modeIndex, mode] of modes.entries()) {
      const judged = index === 0 && modeIndex === 0;
      const area = `Callback → handler, fulfillment request, 2 replicas, BullMQ + Redis store, ${rate} req/s`;
      const goal = `p99 < ${GOAL_BULLMQ_P99_MS} ms`;
      let result;
      try {
        result = await measureBullmqReplicas({ ...config, latency: { ...config.latency, rate } }, mode.env);
      } catch (error) {
        log(`  2 replicas, BullMQ: could not run: ${error instanceof Error ? error.message : String(error)}`);
        if (judged)
          goals.push({
            area,
            goal,
            measured: 'not available (redis-server?)',
            met: null,
            margin: 'not measured',
          });
        return;
      }
      const { count, lost, p50, p90, p99, max, windowP99, http } = result;
      const typical = median(windowP99);
      const latencies = Float64Array.from(http.flatMap((run) => [...run.latenciesMs])).sort();
      const requests = http.reduce((sum, run) => sum + run.requests, 0);
      const elapsed = Math.max(...http.map((run) => run.elapsedSec));
      log(
        `  2 replicas, BullMQ${mode.name}, fulfillment, ${rate} req/s: ${count} handled, p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`,
      );
      rows.push([
        `express, 2 replicas, BullMQ${mode.name} (${rate} req/s${judged ? '' : ', not judged'})`,
        SHAPES.fulfillment.label,
        fmt(requests / elapsed),
        fmt(count),
        p50.toFixed(2),
        p90.toFixed(2),
        p99.toFixed(2),
        windowP99.map((w) => w.toFixed(2)).join(' / '),
        max.toFixed(2),
        `${percentile(latencies, 50).toFixed(2)} / ${percentile(latencies, 99).toFixed(2)}`,
        lost ? `${lost} requests refused, failed or not handled within 0.5 s of the load's end` : '',
      ]);
      if (!judged) continue;
      goals.push({
        area,
        goal,
        measured: `p99 ${typical.toFixed(2)} ms (median of 3 windows; whole run ${p99.toFixed(2)} ms; p50 ${p50.toFixed(2)} ms)`,
        met: count > 0 && lost === 0 ? typical < GOAL_BULLMQ_P99_MS : count > 0 ? false : null,
        margin: marginAtMost(typical, GOAL_BULLMQ_P99_MS) + (lost ? `; ${lost} callbacks not handled` : ''),
      });
    }
}
