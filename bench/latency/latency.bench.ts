import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchConfig } from '../lib/config.js';
import { marginAtMost, table, type Goal, type SectionResult } from '../lib/report.js';
import { SHAPES, type ShapeName } from '../lib/shapes.js';
import { fmt, median, percentile } from '../lib/stats.js';
import { openLoop } from '../lib/http-driver.js';
import { ADAPTERS, type AdapterName } from '../inbound/adapters.js';
import { PROBE_HEADER } from '../inbound/latency-probe.js';
import { Target } from '../inbound/target.js';
import { StatusStub } from '../inbound/status-stub.js';
import { measureBullmqReplicas, type ReplicaLatency } from './bullmq-replicas.js';
import {
  awaitedTrips,
  commandList,
  countRoundTrips,
  tripCount,
  typicalTrips,
} from '../inbound/inbound.bench.js';
import type { RequestTrips } from '../inbound/redis-trips.js';

const GOAL_P99_MS = 5;
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
        // Handlers run after the 200: wait for the last ones to start (a loaded machine may take
        // a while), at most 10 s; what is still pending then is reported as lost.
        for (let waited = 0; waited < 10_000; waited += 50) {
          if (Number((await target.child!.request('latency-pending')).pending) === 0) break;
          await sleep(50);
        }
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
        const lost = Number(probe.pending) + Number(probe.twice) + http.wrong + http.errors;
        // Which way each was lost: a bare count cannot tell a lost callback from a refused one.
        const how = Object.entries({
          'never reached the handler': Number(probe.pending),
          'handled twice': Number(probe.twice),
          'wrong answer': http.wrong,
          'HTTP error': http.errors,
        })
          .filter(([, n]) => n > 0)
          .map(([what, n]) => `${n} ${what}`)
          .join(', ');
        log(
          `  ${adapter} ${shape}: ${count} handled, p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms` +
            (lost ? ` (${how}${http.failures.length ? `: ${http.failures.join('; ')}` : ''})` : ''),
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
          lost ? `${lost} requests not handled once: ${how}` : '',
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
  const replicas = await measureReplicas(config, log, goals);
  const trips = await measureTrips(config, log, goals);
  const markdown =
    `The module's server records each request's arrival (HTTP \`request\` event) and the start of the host's handler ` +
    `(\`@OnCheckoutPaid()\`, \`@OnFulfillment()\`) for it, matched by key; each request is fresh (verified, recorded, ` +
    `acknowledged, dispatched). Load: ${latency.rate} req/s evenly spaced (open loop, undici, up to ${latency.connections} ` +
    `connections) from the runner for ${latency.durationSec} s, after ${latency.warmupSec} s of warm-up. HTTP latency is counted from when ` +
    `each request was due. The goal is judged on the median of the p99s of the run's three thirds (a tail that is ours recurs ` +
    `in every third; one outside hiccup on this shared machine does not), and the whole run's p99 is shown beside it. ` +
    `one process per adapter.\n\n` +
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
  const replicaText =
    `### Two replicas on BullMQ (issues 23 and 34)\n\n` +
    `At ${latency.rates.join(', ')} req/s, ${latency.replicaRounds} round(s) at each rate, each run after ${latency.replicaWarmupSec} s of ` +
    `warm-up at the row's rate (steady state: with 1 s the suite's p99 still fell third by third while the baseline's was flat; ` +
    `both get the same warm-up), then ${latency.durationSec} s measured: two processes (Express) sharing one local ` +
    `redis-server, the rate split evenly between them, arrival (HTTP \`request\` event) and handler start taken on the ` +
    `system clock both processes share. **nestjs-hubtel**: a service app on the Redis store and the BullMQ runner with its ` +
    `defaults; each fulfillment request is recorded and its run added to BullMQ before its 200, the \`@OnFulfillment()\` ` +
    `handler starts on whichever replica's worker takes the job (requests need no USSD session first: \`requireCart: false\`), ` +
    `and the fulfillment callback is posted to a local receiver once the handler is done. ` +
    `**bare**: the baseline a user would write by hand (bench/latency/bare-replica.ts): a plain Nest controller on the same path ` +
    `that adds one BullMQ job per request and answers 200 once the add resolved, and a BullMQ \`Worker\` (same concurrency, 50) ` +
    `whose processor start is the handler start and which then posts the fulfillment callback to the same receiver with ` +
    `\`undici.request\` (the leanest client Node has; the contract's last step, which every service application must take; added in issue 34: before, the ` +
    `baseline skipped it); nothing recorded, verified or de-duplicated. The receiver notes the orders called back: a probed order ` +
    `whose handler started but whose callback never came counts as lost, on either side. In each round both run ` +
    `one right after the other (which goes first alternates from round to round), each with a fresh redis-server and fresh ` +
    `processes. A run's p99 is the median of its three thirds' p99s. CPU per request: user + system CPU of both replica ` +
    `processes (each answers requests and runs jobs) over the measured window and the 0.5 s after it, divided by the requests ` +
    `sent in it; redis-server's own CPU is shown apart. Machine busy: the share of both cores in use over the same window, ` +
    `whoever used them (the replicas, Redis, the load generator and receiver in the bench's own process, the kernel); near ` +
    `100% requests wait for a core, and a p99 there measures the machine's capacity more than the work per request. The goals pair each round's suite and bare runs, and judge the median of ` +
    `the rounds' ratios (the spread is shown beside it).\n\n` +
    replicas;
  return {
    title: 'Callback-to-handler latency',
    markdown: [markdown, replicaText, trips].filter(Boolean).join('\n\n'),
    goals,
  };
}

/** Issue 23: the suite's callback → handler p99 at most this many times the bare baseline's. */
const GOAL_VS_BARE = 2;
/** Issue 34: the suite's CPU per request (both replicas) at most this many times the baseline's. */
const GOAL_CPU_VS_BARE = 2;
/** Issue 23: awaited Redis round trips before the 2xx, a BullMQ add included. */
const GOAL_TRIPS = 3;

type ReplicaKind = 'suite' | 'bare';
const REPLICA_LABEL: Record<ReplicaKind, string> = {
  suite: 'nestjs-hubtel, Redis store + BullMQ runner (defaults)',
  bare: 'bare: controller adds 1 BullMQ job, Worker',
};

/** The whole machine's busy share over a run's window, as a percentage ("n/a" off Linux). */
const busyText = (run: ReplicaLatency) =>
  run.machineBusy === undefined ? 'n/a' : `${(run.machineBusy * 100).toFixed(0)}%`;

/** The p99 a two-replica run is judged on: the median of its thirds' p99s. */
const p99Of = (run: ReplicaLatency) => median(run.windowP99);
const spread = (values: number[], digits = 2) =>
  values.length > 1
    ? `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`
    : values.map((v) => v.toFixed(digits)).join('');

/**
 * The two-replica runs (issues 23 and 34): at each of `latency.rates` (`--rates`, default 100,
 * 300, 500), `latency.replicaRounds` rounds (3 in full mode) of the suite's replicas (Redis store,
 * BullMQ runner with its defaults) and the baseline a user would write by hand (a controller that
 * adds one BullMQ job per request, a Worker), the same load, one right after the other; which goes
 * first alternates from round to round (and by rate), so a noisy stretch is not always one side's.
 * Each round gives a ratio of the pair's p99s and of their CPU per request; the goals judge the
 * median of the rounds and show their spread: one lucky round is no verdict.
 */
export async function measureReplicas(
  config: BenchConfig,
  log: (line: string) => void,
  goals: Goal[],
): Promise<string> {
  const rounds = config.latency.replicaRounds;
  const rows: string[][] = [];
  for (const [index, rate] of config.latency.rates.entries()) {
    const runs: Record<ReplicaKind, Array<ReplicaLatency | undefined>> = { suite: [], bare: [] };
    for (let round = 0; round < rounds; round++) {
      const order: ReplicaKind[] = (index + round) % 2 === 0 ? ['suite', 'bare'] : ['bare', 'suite'];
      for (const kind of order) {
        try {
          const run = await measureBullmqReplicas(
            { ...config, latency: { ...config.latency, rate } },
            {},
            kind,
          );
          runs[kind][round] = run;
          log(
            `  2 replicas, ${kind}, ${rate} req/s, round ${round + 1}/${rounds}: ${run.count} handled, ` +
              `p50 ${run.p50.toFixed(2)} ms, p99 ${p99Of(run).toFixed(2)} ms (median of thirds), ` +
              `CPU ${run.cpuUsPerRequest.toFixed(0)} µs/req (Redis ${run.redisCpuUsPerRequest.toFixed(0)}, ` +
              `load generator ${run.driverCpuUsPerRequest.toFixed(0)}); machine ${busyText(run)} busy; ` +
              `loop delay p99 ${run.loop.delayP99Ms.toFixed(1)} ms, max ${run.loop.delayMaxMs.toFixed(1)}; ` +
              `GC ${run.loop.gcUsPerRequest.toFixed(0)} µs/req (whole-heap ${run.loop.gcMajorUsPerRequest.toFixed(0)}), ` +
              `longest ${run.loop.gcMaxMs.toFixed(1)} ms; heap ${run.loop.heapUsedMb.toFixed(0)} MB; ` +
              `answered p50/p99 ${run.stages.answerP50.toFixed(2)}/${run.stages.answerP99.toFixed(2)} ms, ` +
              `then handler ${run.stages.afterP50.toFixed(2)}/${run.stages.afterP99.toFixed(2)} ms` +
              (run.lost || run.twice ? `; ${run.lost} not handled, ${run.twice} handled twice` : '') +
              (run.notCalledBack ? `; ${run.notCalledBack} handled but not called back` : ''),
          );
        } catch (error) {
          log(
            `  2 replicas, ${kind}, ${rate} req/s, round ${round + 1}: could not run: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    }
    for (const kind of ['suite', 'bare'] as const) {
      const done = runs[kind].filter((run): run is ReplicaLatency => run !== undefined);
      if (done.length === 0) continue;
      const lost = done.reduce((sum, run) => sum + run.lost, 0);
      const twice = done.reduce((sum, run) => sum + run.twice, 0);
      const requests = done.reduce(
        (sum, run) => sum + run.http.reduce((all, drive) => all + drive.requests, 0),
        0,
      );
      const seconds = done.reduce(
        (sum, run) => sum + Math.max(...run.http.map((drive) => drive.elapsedSec)),
        0,
      );
      rows.push([
        `${rate}`,
        REPLICA_LABEL[kind],
        fmt(requests / seconds),
        fmt(done.reduce((sum, run) => sum + run.count, 0)),
        median(done.map((run) => run.p50)).toFixed(2),
        done.map((run) => p99Of(run).toFixed(2)).join(' / '),
        median(done.map(p99Of)).toFixed(2),
        done.map((run) => run.cpuUsPerRequest.toFixed(0)).join(' / '),
        median(done.map((run) => run.cpuUsPerRequest)).toFixed(0),
        median(done.map((run) => run.redisCpuUsPerRequest)).toFixed(0),
        done.map(busyText).join(' / '),
        [
          lost ? `${lost} requests refused, failed or not handled within 0.5 s of the load's end` : '',
          twice ? `${twice} handled twice` : '',
        ]
          .filter(Boolean)
          .join('; '),
      ]);
    }
    // Rounds where both sides ran, paired (each pair ran back to back).
    const pairs = runs.suite.flatMap((suite, round) => {
      const bare = runs.bare[round];
      return suite && bare && suite.count > 0 && bare.count > 0 ? [{ suite, bare }] : [];
    });
    const latencyArea = `Callback → handler, 2 replicas on BullMQ, ${rate} req/s`;
    const cpuArea = `CPU per request, 2 replicas on BullMQ, ${rate} req/s`;
    if (pairs.length === 0) {
      for (const [area, goal] of [
        [latencyArea, `suite p99 ≤ ${GOAL_VS_BARE}x the bare BullMQ baseline's`],
        [cpuArea, `suite ≤ ${GOAL_CPU_VS_BARE}x the bare BullMQ baseline's`],
      ] as const)
        goals.push({
          area,
          goal,
          measured: 'not available (redis-server?)',
          met: null,
          margin: 'not measured',
        });
      continue;
    }
    // An order without its fulfillment callback is not done, on either side.
    const lost = pairs.reduce(
      (sum, { suite, bare }) => sum + suite.lost + bare.lost + suite.notCalledBack + bare.notCalledBack,
      0,
    );
    const twice = pairs.reduce((sum, { suite }) => sum + suite.twice, 0);
    const ratios = pairs.map(({ suite, bare }) => p99Of(suite) / p99Of(bare));
    const ratio = median(ratios);
    const [s99, b99] = [
      median(pairs.map(({ suite }) => p99Of(suite))),
      median(pairs.map(({ bare }) => p99Of(bare))),
    ];
    const shortOf = pairs.length < rounds ? `; ${rounds - pairs.length} of ${rounds} rounds did not run` : '';
    goals.push({
      area: latencyArea,
      goal: `suite p99 ≤ ${GOAL_VS_BARE}x the bare BullMQ baseline's (median of ${rounds} rounds)`,
      measured:
        `${ratio.toFixed(2)}x (rounds ${ratios.map((r) => r.toFixed(2)).join(' / ')}; spread ${spread(ratios)}): ` +
        `suite p99 ${s99.toFixed(2)} ms, bare ${b99.toFixed(2)} ms (medians)`,
      // The suite promises one run per callback; the bare baseline promises nothing of the kind.
      met: lost === 0 && twice === 0 && pairs.length === rounds ? ratio <= GOAL_VS_BARE : false,
      margin:
        marginAtMost(ratio, GOAL_VS_BARE) +
        (lost ? `; ${lost} callbacks not handled` : '') +
        (twice ? `; ${twice} handled twice by the suite` : '') +
        shortOf,
    });
    const cpuRatios = pairs.map(({ suite, bare }) => suite.cpuUsPerRequest / bare.cpuUsPerRequest);
    const cpuRatio = median(cpuRatios);
    goals.push({
      area: cpuArea,
      goal: `suite ≤ ${GOAL_CPU_VS_BARE}x the bare BullMQ baseline's, both replicas (median of ${rounds} rounds)`,
      measured:
        `${cpuRatio.toFixed(2)}x (rounds ${cpuRatios.map((r) => r.toFixed(2)).join(' / ')}; spread ${spread(cpuRatios)}): ` +
        `suite ${median(pairs.map(({ suite }) => suite.cpuUsPerRequest)).toFixed(0)} µs, bare ` +
        `${median(pairs.map(({ bare }) => bare.cpuUsPerRequest)).toFixed(0)} µs per request (medians; Redis's own: ` +
        `${median(pairs.map(({ suite }) => suite.redisCpuUsPerRequest)).toFixed(0)} / ` +
        `${median(pairs.map(({ bare }) => bare.redisCpuUsPerRequest)).toFixed(0)} µs, not counted)`,
      met: pairs.length === rounds ? cpuRatio <= GOAL_CPU_VS_BARE : false,
      margin: marginAtMost(cpuRatio, GOAL_CPU_VS_BARE) + shortOf,
    });
  }
  return table(
    [
      'req/s',
      'server',
      'sent req/s',
      'handled',
      'p50 ms',
      'p99 ms per round',
      'p99 ms',
      'CPU µs/req per round',
      'CPU µs/req',
      'Redis CPU µs/req',
      'machine busy per round',
      'note',
    ],
    rows,
    ['r', 'l'],
  );
}

/**
 * The rows of the round-trip count (issue 23). The checkout callback is counted in two
 * configurations: with `posSalesId` set (the production default: `confirmWithStatusCheck` on, the
 * callback is recorded as a confirmation job and the status check runs in that job, after the 2xx),
 * which the goal judges; and in trust mode (no `posSalesId`: the callback is recorded as its paid
 * event at once and the invoice marked paid before the 2xx), shown for information.
 */
interface TripCase {
  shape: ShapeName;
  /** First cell of the section's table. */
  label: string;
  /** The goals table's area. */
  area: string;
  /** Judged against the goal (false: for information only). */
  judged: boolean;
  /** Counted on the server whose checkout has `posSalesId` (status check on). */
  statusCheck: boolean;
}

const TRUST_NOTE =
  'the invoice is marked paid after the job is queued, so a crash in between can never leave a paid invoice whose event was never queued';

const TRIP_CASES: TripCase[] = [
  {
    shape: 'checkout-callback',
    label: 'checkout callback, `posSalesId` set (status check on, the default)',
    area: 'Redis round trips, checkout callback with `posSalesId` (status check on, the default), Redis store + BullMQ',
    judged: true,
    statusCheck: true,
  },
  {
    shape: 'checkout-callback',
    label: 'checkout callback, trust mode (no `posSalesId`)',
    area: 'Redis round trips, checkout callback in trust mode (no `posSalesId`), Redis store + BullMQ',
    judged: false,
    statusCheck: false,
  },
  ...(['service-flow', 'fulfillment'] as const).map((shape) => ({
    shape,
    label: SHAPES[shape].label,
    area: `Redis round trips, ${SHAPES[shape].label}, Redis store + BullMQ`,
    judged: true,
    statusCheck: false,
  })),
];

const TRIPS_GOAL = `≤ ${GOAL_TRIPS} awaited before the 2xx (BullMQ add included)`;
const TRIPS_INFO = `for information (the ≤ ${GOAL_TRIPS} goal is judged on the default, status check on)`;

/**
 * Awaited Redis round trips before the 2xx of each inbound endpoint, on the Redis store with the
 * BullMQ runner (issue 23): requests sent one at a time to a server of the suite in its own process,
 * every command of the store's client and of the runner's queue clients charged to the request in
 * flight (bench/inbound/redis-trips.ts); the background job's commands are not awaited by the answer.
 * Two servers, each with its own redis-server: the default one (checkout in trust mode: no
 * `posSalesId`) and one whose checkout has a `posSalesId`, its status API a stub on 127.0.0.1
 * (bench/inbound/status-stub.ts) that answers "Paid", so its confirmation jobs run cleanly.
 */
async function measureTrips(
  config: BenchConfig,
  log: (line: string) => void,
  goals: Goal[],
): Promise<string> {
  const lines: string[][] = [];
  const mostOf = new Map<TripCase, number>();
  const results = new Map<TripCase, Goal>();
  const count = tripCount(config);
  let stubNote = '';
  for (const statusCheck of [true, false]) {
    const cases = TRIP_CASES.filter((c) => c.statusCheck === statusCheck);
    const stub = statusCheck ? await StatusStub.start() : undefined;
    const server = new Target('redis', 'express');
    const notMeasured = (c: TripCase, why: string) =>
      results.set(c, {
        area: c.area,
        goal: c.judged ? TRIPS_GOAL : TRIPS_INFO,
        measured: why,
        met: null,
        margin: 'not measured',
      });
    try {
      if (!(await server.start(stub ? { env: { BENCH_CHECKOUT_STATUS_URL: stub.url } } : {}))) {
        log(`  round trips on BullMQ: could not start: ${server.failure}`);
        for (const c of cases) notMeasured(c, `not available: ${server.failure ?? 'redis-server?'}`);
        continue;
      }
      for (const c of cases) {
        let recorded: RequestTrips[];
        try {
          recorded = await countRoundTrips(server, c.shape, count);
        } catch (error) {
          log(
            `  round trips ${c.label} on BullMQ: failed: ${error instanceof Error ? error.message : String(error)}`,
          );
          notMeasured(c, 'failed');
          continue;
        }
        const ok = recorded.filter((r) => r.status >= 200 && r.status < 300);
        const counts = ok.map(awaitedTrips).sort((a, b) => a - b);
        const typical = typicalTrips(ok);
        const most = counts.length ? counts[counts.length - 1]! : NaN;
        const awaited = typical ? typical.beforeAck.filter((cmd) => !cmd.job) : [];
        let answers = ok.length === recorded.length ? 'all 2xx' : `${recorded.length - ok.length} not 2xx`;
        if (stub) {
          // Each callback's confirmation job asked the stub once, was confirmed, and its paid
          // event reached the host's @OnCheckoutPaid handler.
          const { counts: ran } = await server.child!.request('handled');
          const handled = (ran as Record<string, number>)[c.shape] ?? 0;
          answers += `; ${stub.paid} status checks answered "Paid" by the stub, ${handled} handler runs`;
          stubNote =
            ` The status API of the \`posSalesId\` server answered ${stub.paid} status checks "Paid" ` +
            `(${stub.unknown} other requests); its host handler ran ${handled} times.`;
        }
        log(
          `  Redis round trips before the 2xx, ${c.label}, Redis store + BullMQ: ${counts.join(', ') || 'none'} (${commandList(awaited)})` +
            (stub
              ? `; status checks answered by the stub: ${stub.paid}, ${stub.unknown} other requests`
              : ''),
        );
        lines.push([
          c.label,
          String(recorded.length),
          counts.length ? `${counts[0]}${counts[0] === most ? '' : `–${most}`}` : '—',
          commandList(awaited),
          answers,
        ]);
        const goal: Goal = {
          area: c.area,
          goal: c.judged ? TRIPS_GOAL : TRIPS_INFO,
          measured: ok.length ? `${most}: ${commandList(awaited)}` : 'no 2xx answer',
          met: ok.length === recorded.length && ok.length > 0 ? most <= GOAL_TRIPS : ok.length ? false : null,
          margin: Number.isFinite(most)
            ? most <= GOAL_TRIPS
              ? `${GOAL_TRIPS - most} to spare`
              : `${most - GOAL_TRIPS} over`
            : 'not measured',
        };
        results.set(c, goal);
        mostOf.set(c, most);
      }
    } finally {
      await server.stop();
      await stub?.close();
    }
  }
  // Trust mode: shown beside the default, not judged; why it costs what it does.
  const [defaultCase, trustCase] = TRIP_CASES;
  const trust = results.get(trustCase!);
  if (trust && trust.met !== null) {
    const more = (mostOf.get(trustCase!) ?? NaN) - (mostOf.get(defaultCase!) ?? NaN);
    trust.met = null;
    trust.info = true;
    trust.margin = Number.isFinite(more)
      ? `${more === 0 ? 'as many as' : `${Math.abs(more)} ${more > 0 ? 'more' : 'fewer'} than`} with \`posSalesId\`: ${TRUST_NOTE}`
      : TRUST_NOTE;
  }
  for (const c of TRIP_CASES) if (results.has(c)) goals.push(results.get(c)!);
  return (
    `#### Redis round trips before the 2xx, with the BullMQ runner\n\n` +
    `The suite's endpoints (Express) on the Redis store and the BullMQ runner (\`HubtelRedisModule.forRoot({ url })\`, ` +
    `\`HubtelBullmqModule.forRoot({ url })\`, defaults), a private redis-server; ${count} fresh requests per ` +
    `row sent one at a time, each after the previous one's handler ran. Every command sent by the store's ioredis ` +
    `client and by the runner's queue clients (wrapped \`sendCommand\`, in the bench's server only) is charged to the request ` +
    `in flight, before or after its answer was handed to the socket; commands of the background job (a BullMQ worker's run) are ` +
    `not awaited by the answer and not counted; a command sent while another of the request's was in flight (a parallel ` +
    `read, a mark not awaited) or in a pipeline adds no round trip of its own. The count is the largest over the requests; the ` +
    `commands are those of the most common request. The checkout callback is counted twice, on two servers of this run, ` +
    `counted the same way: with a \`posSalesId\` (the production default, which turns \`verification.confirmWithStatusCheck\` ` +
    `on: the callback is recorded as a confirmation job, and the status check runs in that job after the 2xx; the checkout ` +
    `API base URLs point at a stub of the status API on 127.0.0.1 that answers "Paid", so no request leaves the machine), ` +
    `judged against the goal; and in trust mode (no \`posSalesId\`: the callback is recorded as its paid event and the ` +
    `invoice marked paid before the 2xx), for information: ${TRUST_NOTE}.${stubNote}\n\n` +
    table(
      [
        'endpoint',
        'requests',
        'awaited round trips before the 2xx',
        'commands (most common request)',
        'answers',
      ],
      lines,
      ['l', 'r', 'r', 'l', 'l'],
    )
  );
}
