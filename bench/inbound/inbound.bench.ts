import path from 'node:path';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { Child, REPO_DIR } from '../lib/ipc.js';
import {
  breakdown,
  categoryRows,
  mainThreadProfile,
  profileFlags,
  type ProfileWindow,
  type WindowBreakdown,
} from '../lib/profile.js';
import type { LoadResult } from '../lib/load.js';
import { Target, type Variant } from './target.js';
import type { RequestTrips, SentCommand } from './redis-trips.js';
import { SHAPES, SHAPE_NAMES, type ShapeName } from '../lib/shapes.js';
import { fmt, median, ratio } from '../lib/stats.js';
import { marginAtLeast, table, type Goal, type SectionResult } from '../lib/report.js';
import type { BenchConfig } from '../lib/config.js';
import { ADAPTERS, type AdapterName } from './adapters.js';

const NEST_VARIANTS: Variant[] = ['plain', 'validated', 'module', 'redis'];
const LABEL: Record<Variant, string> = {
  bare: '(a) bare node:http + JSON.parse',
  plain: '(b) Nest controller, no validation',
  validated: '(c) Nest + ValidationPipe + class-validator',
  module: '(d) nestjs-hubtel endpoint',
  redis: '(d) nestjs-hubtel endpoint, Redis store + BullMQ',
};

const VARIANT_SHORT: Record<Variant, string> = {
  bare: '(a)',
  plain: '(b)',
  validated: '(c)',
  module: '(d)',
  redis: '(d) Redis',
};

const GOAL_VS_PLAIN = 0.85;

function cellKey(shape: ShapeName, variant: Variant, adapter: string): string {
  return `${shape}|${variant}|${adapter}`;
}

function summarise(results: LoadResult[]): LoadResult | undefined {
  if (results.length === 0) return undefined;
  const pick = (f: (r: LoadResult) => number) => median(results.map(f));
  return {
    rps: pick((r) => r.rps),
    requests: pick((r) => r.requests),
    p50: pick((r) => r.p50),
    p99: pick((r) => r.p99),
    cpuUsPerReq: pick((r) => r.cpuUsPerReq),
    ...(results.every((r) => r.sideCpuUsPerReq !== undefined)
      ? { sideCpuUsPerReq: pick((r) => r.sideCpuUsPerReq!) }
      : {}),
    cpuCores: pick((r) => r.cpuCores),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    answered: results.reduce((sum, r) => sum + r.answered, 0),
    window: results[0]!.window,
  };
}

export async function runInbound(config: BenchConfig, log: (line: string) => void): Promise<SectionResult> {
  const { inbound } = config;
  const shapes = (inbound.shapes ?? SHAPE_NAMES) as ShapeName[];
  const adapters = (inbound.adapters ?? ADAPTERS) as AdapterName[];
  const variants = (inbound.variants ?? ['bare', ...NEST_VARIANTS]) as Variant[];

  const servers: Target[] = [];
  if (variants.includes('bare')) servers.push(new Target('bare', '-'));
  for (const adapter of adapters) {
    for (const variant of NEST_VARIANTS)
      if (variants.includes(variant)) servers.push(new Target(variant, adapter));
  }

  // Start every server once (each in its own process) and keep it for all rounds: idle servers
  // cost no CPU, and interleaving the variants round by round spreads the machine's drift evenly.
  await Promise.all(
    servers.map(async (server) => {
      if (!(await server.start())) {
        log(`  ${LABEL[server.variant]} on ${server.adapter}: could not start: ${server.failure}`);
      }
    }),
  );
  for (const server of servers) {
    for (const shape of shapes) {
      if (server.port && !server.serves(shape)) {
        log(`  ${LABEL[server.variant]} on ${server.adapter}: does not serve ${shape} (module not landed?)`);
      }
    }
  }

  const results = new Map<string, LoadResult[]>();
  const heapNotes: string[] = [];
  const answered = new Map<string, number>();
  const workNotes: string[] = [];
  const atRate = new Map<string, { cpuUsPerReq: number; p50: number; p99: number; bad: number }>();
  const trips = new Map<string, RequestTrips[]>();
  // Column 6 (Redis's CPU) only when the Redis-store variant ran; 7 (equal load) only when that pass ran.
  const withRedis = variants.includes('redis');
  const withEqualLoad = (cells: string[]) =>
    cells.filter((_, i) => (i !== 6 || withRedis) && (i !== 7 || inbound.fixedSec > 0));
  try {
    for (let round = 0; round < inbound.rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const shapeName of shapes) {
        for (const server of order) {
          if (!server.serves(shapeName)) continue;
          // The module's servers keep what they record (see below): each run gets a fresh
          // process, so a run does not pay for the heap earlier runs left (the baselines keep
          // nothing, so theirs stay up).
          if (server.isModule && server.runs > 0 && !inbound.keepServers) {
            if (!(await server.restart())) {
              log(`  ${server.variant}/${server.adapter}: could not restart: ${server.failure}`);
              continue;
            }
          }
          const result = await server.drive(shapeName, {
            connections: inbound.connections,
            durationSec: inbound.durationSec,
            warmupSec: inbound.warmupSec,
          });
          const key = cellKey(shapeName, server.variant, server.adapter);
          results.set(key, [...(results.get(key) ?? []), result]);
          answered.set(key, (answered.get(key) ?? 0) + result.answered);
          log(
            `  round ${round + 1}/${inbound.rounds} ${shapeName} ${server.variant}/${server.adapter}: ${fmt(result.rps)} req/s, ` +
              `p99 ${result.p99} ms, ${fmt(result.cpuUsPerReq)} µs CPU/req` +
              (result.errors || result.non2xx ? ` (${result.errors} errors, ${result.non2xx} non-2xx!)` : ''),
          );
        }
      }
    }
    // Equal load, after the rounds (warm code): CPU per request when no side is saturated.
    if (inbound.fixedSec > 0) {
      for (const shapeName of shapes) {
        for (const server of servers) {
          if (server.variant === 'bare' || !server.serves(shapeName)) continue;
          const r = await server.atRate(
            shapeName,
            inbound.fixedRate,
            inbound.fixedSec,
            Math.min(1, inbound.fixedSec),
          );
          const key = cellKey(shapeName, server.variant, server.adapter);
          atRate.set(key, r);
          answered.set(key, (answered.get(key) ?? 0) + r.answered);
          log(
            `  ${fmt(inbound.fixedRate)} req/s ${shapeName} ${server.variant}/${server.adapter}: ${fmt(r.cpuUsPerReq)} µs CPU/req${r.bad ? ` (${r.bad} bad!)` : ''}`,
          );
        }
      }
    }
    // Redis round trips per request, one request at a time, on the Redis (store + BullMQ) servers.
    for (const server of servers) {
      if (server.variant !== 'redis' || !server.port) continue;
      for (const shape of shapes) {
        if (!server.serves(shape)) continue;
        try {
          const recorded = await countRoundTrips(server, shape, tripCount(config));
          trips.set(cellKey(shape, 'redis', server.adapter), recorded);
          const key = cellKey(shape, 'redis', server.adapter);
          answered.set(key, (answered.get(key) ?? 0) + recorded.length);
          const typical = typicalTrips(recorded);
          log(
            `  Redis round trips ${shape} ${server.adapter}: ${typical ? `${awaitedTrips(typical)} awaited by the ack, ${roundTrips(typical.beforeAck) - answerTrips(typical)} of the job's run before it, ${roundTrips(typical.afterAck)} after` : 'none recorded'}`,
          );
        } catch (error) {
          log(
            `  Redis round trips ${shape} ${server.adapter}: failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    }
    // The suite's servers keep what they recorded (the store's TTLs are hours to days): say how
    // much one held at most, since a larger heap makes garbage collection dearer.
    for (const server of servers) {
      if (!server.isModule || !server.port) continue;
      // Every answered request must have run the host's code (handler or flow step): proof the
      // suite took its real path (verified, recorded, dispatched), not a refusal answered 200.
      await server.collect();
      for (const shape of shapes) {
        const sent = answered.get(cellKey(shape, server.variant, server.adapter)) ?? 0;
        const ran = server.handled[shape] ?? 0;
        const ok = ran >= sent && ran <= sent + inbound.connections * 2 * inbound.rounds;
        const store = server.variant === 'redis' ? ' (Redis + BullMQ)' : '';
        workNotes.push(
          `${server.adapter}${store} ${SHAPES[shape].label}: ${fmt(ran)} handler runs for ${fmt(sent)} answers${ok ? '' : ' ⚠'}`,
        );
        if (!ok)
          log(
            `  ⚠ ${server.variant}/${server.adapter} ${shape}: ${ran} handler runs for ${sent} answered requests`,
          );
      }
      heapNotes.push(
        `${server.adapter}${server.variant === 'redis' ? ' (Redis + BullMQ)' : ''}: ${fmt(server.largestHeap / 2 ** 20)} MB heap`,
      );
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }

  const goals: Goal[] = [];
  const parts: string[] = [];
  parts.push(
    `Load: autocannon in the runner process, ${inbound.connections} connections, ${inbound.durationSec} s per run after a ${inbound.warmupSec} s warm-up, ` +
      `${inbound.rounds} round(s) interleaved (figures are medians). Every request carries a fresh id, so the suite never takes its duplicate path. ` +
      `CPU/req is the server process's own user+system CPU (process.cpuUsage over IPC) divided by completed requests. ` +
      `Ratios: req/s of (d) over req/s of the baseline; "CPU" is baseline CPU/req over (d) CPU/req (higher is better for (d) in both). ` +
      (inbound.fixedSec > 0
        ? `"Equal load": the same CPU ratio measured after the rounds (warm code, same stores) with every server offered the same ${fmt(inbound.fixedRate)} req/s ` +
          `(open loop, undici, ${inbound.fixedSec} s): at saturation the idle side's wake-ups are charged to the busy side's write ` +
          `syscalls, which makes the slower server's CPU/req look worse than it is; at equal load neither side is saturated. `
        : '') +
      (inbound.keepServers
        ? `The (d) servers keep every session, order and callback record in their in-memory store for the store's TTLs, so they grow during ` +
          `the run (at the end: ${heapNotes.join(', ') || 'n/a'}); the stateless baselines do not. `
        : `The (d) servers keep every session, order and callback record in their in-memory store for the store's TTLs (the stateless baselines keep nothing), ` +
          `so each (d) run gets a fresh server process (warm-up included), and no run pays for the heap earlier runs left ` +
          `(largest heap after one run: ${heapNotes.join(', ') || 'n/a'}; \`--keep-servers\` keeps one process for every run instead). `) +
      `Check that (d) did the real work for every answer (host handler or flow step ran): ${workNotes.join('; ') || 'n/a'}.`,
  );
  for (const shapeName of shapes) {
    const rows: string[][] = [];
    const get = (variant: Variant, adapter: string) =>
      summarise(results.get(cellKey(shapeName, variant, adapter)) ?? []);
    const bare = get('bare', '-');
    if (bare)
      rows.push([
        'any',
        LABEL.bare,
        fmt(bare.rps),
        fmt(bare.p50),
        fmt(bare.p99),
        fmt(bare.cpuUsPerReq),
        '',
        '',
        '',
        '',
      ]);
    for (const adapter of adapters) {
      const plain = get('plain', adapter);
      const validated = get('validated', adapter);
      for (const variant of NEST_VARIANTS) {
        if (!variants.includes(variant)) continue;
        const server = servers.find((s) => s.variant === variant && s.adapter === adapter);
        const missing = server?.port && !server.serves(shapeName) ? 'not served by this build' : '';
        const r = get(variant, adapter);
        if (!r) {
          rows.push([
            adapter,
            LABEL[variant],
            'not run',
            '',
            '',
            '',
            '',
            '',
            '',
            server?.failure ? `could not start: ${server.failure.slice(0, 160)}` : missing,
          ]);
          continue;
        }
        const equal = (v: Variant) => atRate.get(cellKey(shapeName, v, adapter))?.cpuUsPerReq ?? NaN;
        let vsPlain = '';
        let vsValidated = '';
        if (variant === 'module' || variant === 'redis') {
          const at = (v: Variant) =>
            Number.isFinite(equal(v) / equal(variant))
              ? `; equal load ${ratio(equal(v) / equal(variant))}`
              : '';
          vsPlain = plain
            ? `${ratio(r.rps / plain.rps)} (CPU ${ratio(plain.cpuUsPerReq / r.cpuUsPerReq)}${at('plain')})`
            : '';
          vsValidated = validated
            ? `${ratio(r.rps / validated.rps)} (CPU ${ratio(validated.cpuUsPerReq / r.cpuUsPerReq)}${at('validated')})`
            : '';
        }
        const flagged = r.errors || r.non2xx ? ` ⚠ ${r.errors} errors, ${r.non2xx} non-2xx` : '';
        rows.push([
          adapter,
          LABEL[variant] + flagged,
          fmt(r.rps),
          fmt(r.p50),
          fmt(r.p99),
          fmt(r.cpuUsPerReq),
          r.sideCpuUsPerReq === undefined ? '' : fmt(r.sideCpuUsPerReq),
          fmt(equal(variant)),
          vsPlain,
          vsValidated,
        ]);
      }
      const mod = get('module', adapter);
      if (variants.includes('module')) {
        const failure = servers.find((s) => s.variant === 'module' && s.adapter === adapter)?.failure;
        const measured = (base: typeof plain) => (mod && base ? mod.rps / base.rps : NaN);
        const cpuMeasured = (base: typeof plain) => (mod && base ? base.cpuUsPerReq / mod.cpuUsPerReq : NaN);
        // The ratio to (c) ValidationPipe stays in the table; its 1.5x goal is retired (issue 23):
        // on Express it asked to beat a controller that does nothing.
        for (const [base, baseVariant, target, name] of [
          [plain, 'plain', GOAL_VS_PLAIN, '(b) plain Nest'],
        ] as const) {
          const value = measured(base);
          const cpu = cpuMeasured(base);
          const equalLoad =
            (atRate.get(cellKey(shapeName, baseVariant, adapter))?.cpuUsPerReq ?? NaN) /
            (atRate.get(cellKey(shapeName, 'module', adapter))?.cpuUsPerReq ?? NaN);
          goals.push({
            area: `Inbound ${SHAPES[shapeName].label}, ${adapter}`,
            goal: `≥ ${target}x req/s of ${name}`,
            measured: Number.isFinite(value)
              ? `${ratio(value)} by req/s; ${ratio(cpu)} by CPU per request` +
                (Number.isFinite(equalLoad) ? `; ${ratio(equalLoad)} by CPU at equal load` : '')
              : failure
                ? 'module endpoint not available'
                : 'not measured',
            met: Number.isFinite(value) ? value >= target : null,
            margin: Number.isFinite(value)
              ? `${marginAtLeast(value, target)} (by CPU/req: ${marginAtLeast(cpu, target)})`
              : 'not measured',
          });
        }
      }
    }
    parts.push(
      `#### ${SHAPES[shapeName].label} — \`POST ${SHAPES[shapeName].path}\`\n\n` +
        table(
          withEqualLoad([
            'adapter',
            'server',
            'req/s',
            'p50 ms',
            'p99 ms',
            'CPU µs/req',
            'Redis CPU µs/req',
            `CPU µs/req at ${fmt(inbound.fixedRate)} req/s`,
            '(d)/(b)',
            '(d)/(c)',
          ]),
          rows.map(withEqualLoad),
          ['l', 'l'],
        ),
    );
  }
  if (withRedis) {
    const redisServers = servers.filter((server) => server.variant === 'redis');
    parts.push(redisPart(shapes, adapters, redisServers, results, trips, tripCount(config)));
  }
  if (variants.includes('module')) parts.push(await inProcessPass(config, shapes, log));
  if (config.inbound.profileSec > 0) {
    parts.push(await profilePass(config, shapes, adapters, variants, log));
  }
  return { title: 'Inbound endpoints', markdown: parts.join('\n\n'), goals };
}

export function tripCount(config: BenchConfig): number {
  return config.mode === 'full' ? 20 : config.mode === 'quick' ? 10 : 3;
}

/**
 * Sends `count` fresh requests of `shape` to a Redis-store server one at a time, each after the
 * previous one's background work (host handler, records) is done, and returns the Redis commands
 * each caused before and after its answer (bench/inbound/redis-trips.ts counts them in the server).
 */
export async function countRoundTrips(
  server: Target,
  shape: ShapeName,
  count: number,
): Promise<RequestTrips[]> {
  const child = server.child!;
  const handled = async () =>
    Number(((await child.request('handled')).counts as Record<string, number>)[shape] ?? 0);
  await server.prepare(shape, count + 1);
  const seq = server.sequence(shape);
  await child.request('trips-start');
  let stopped = false;
  try {
    for (let i = 0; i < count; i++) {
      const before = await handled();
      const response = await fetch(`http://127.0.0.1:${server.port!}${SHAPES[shape].path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: seq.take().body,
      });
      await response.text();
      // The host's code runs before the answer (a flow step) or after it (callbacks): wait for it,
      // then a little longer for the records written once it is done.
      for (let waited = 0; waited < 2000 && (await handled()) <= before; waited += 5) await sleep(5);
      await sleep(30);
    }
    stopped = true;
    return (await child.request('trips-stop')).requests as RequestTrips[];
  } finally {
    if (!stopped) await child.request('trips-stop').catch(() => undefined);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Round trips among commands: a command sent in the same tick as a pipeline's first is not one. */
export function roundTrips(commands: SentCommand[]): number {
  return commands.filter((c) => !c.pipelined).length;
}

/** The round trips sent before the answer, not by a run of the job (awaited or not). */
export function answerTrips(r: RequestTrips): number {
  return roundTrips(r.beforeAck.filter((c) => !c.job));
}

/**
 * The round trips a request waited for in sequence before its 2xx: commands of the request (not
 * of a run of the job) sent while none of its others was in flight; one sent during another's
 * round trip (a parallel read, a write not awaited) or in a pipeline adds no wait of its own.
 */
export function awaitedTrips(r: RequestTrips): number {
  return r.beforeAck.filter((c) => !c.job && !c.pipelined && c.overlapping === 0).length;
}

export function signature(commands: SentCommand[]): string {
  return commands.map((c) => `\`${c.name} ${c.key}\`${c.job ? ' (job)' : ''}`).join(' → ');
}

/** The most common request among those recorded (by the commands it sent before its answer). */
export function typicalTrips(requests: RequestTrips[]): RequestTrips | undefined {
  const bySignature = new Map<string, RequestTrips[]>();
  for (const r of requests) {
    const sig = signature(r.beforeAck);
    bySignature.set(sig, [...(bySignature.get(sig) ?? []), r]);
  }
  return [...bySignature.values()].sort((a, b) => b.length - a.length)[0]?.[0];
}

/** Commands as a Markdown list item: `SET hubtel:…:<id>` → `GET …`, with parallel ones marked. */
export function commandList(commands: SentCommand[]): string {
  if (commands.length === 0) return 'none';
  return commands
    .map(
      (c) =>
        `\`${c.name} ${c.key}\`` +
        (c.job ? " (the job's run)" : '') +
        (c.pipelined ? ' (pipelined)' : c.overlapping > 0 ? ' (sent while another was in flight)' : ''),
    )
    .join(', ');
}

/**
 * The Redis rows (store + BullMQ runner) beside the in-memory ones: throughput and CPU compared
 * (the Node server's and Redis's own), and the round trips per request. The round-trip goal (issue
 * 23, ≤ 3 awaited before the 2xx per endpoint) is judged in the latency section, on every endpoint.
 */
function redisPart(
  shapes: ShapeName[],
  adapters: AdapterName[],
  servers: Target[],
  results: Map<string, LoadResult[]>,
  trips: Map<string, RequestTrips[]>,
  count: number,
): string {
  const versions = [...new Set(servers.map((s) => s.redisVersion).filter(Boolean))].join(', ');
  if (!versions) {
    // No redis-server started (not installed, or it failed): say so once, plainly.
    const why = servers.find((s) => s.failure)?.failure ?? 'no Redis server ran';
    return `### On Redis (store + BullMQ runner)\n\nNot measured: ${why}.`;
  }
  const compare: string[][] = [];
  for (const shape of shapes) {
    for (const adapter of adapters) {
      const memory = summarise(results.get(cellKey(shape, 'module', adapter)) ?? []);
      const redis = summarise(results.get(cellKey(shape, 'redis', adapter)) ?? []);
      if (!redis) continue;
      const side = redis.sideCpuUsPerReq ?? NaN;
      compare.push([
        SHAPES[shape].label,
        adapter,
        memory ? ratio(redis.rps / memory.rps) : 'n/a',
        memory ? `${fmt(memory.p99)} → ${fmt(redis.p99)}` : fmt(redis.p99),
        memory ? `${fmt(memory.cpuUsPerReq)} → ${fmt(redis.cpuUsPerReq)}` : fmt(redis.cpuUsPerReq),
        fmt(side),
        fmt(redis.cpuUsPerReq + side),
      ]);
    }
  }
  const tripRows: string[][] = [];
  const lists: string[] = [];
  for (const shape of shapes) {
    for (const adapter of adapters) {
      const recorded = trips.get(cellKey(shape, 'redis', adapter));
      if (!recorded || recorded.length === 0) continue;
      const awaited = recorded.map(awaitedTrips).sort((a, b) => a - b);
      const before = recorded.map(answerTrips).sort((a, b) => a - b);
      const jobBefore = recorded.map((r) => roundTrips(r.beforeAck) - answerTrips(r)).sort((a, b) => a - b);
      const after = recorded.map((r) => roundTrips(r.afterAck)).sort((a, b) => a - b);
      const typical = typicalTrips(recorded)!;
      const bad = recorded.filter((r) => r.status < 200 || r.status >= 300).length;
      const span = (values: number[]) =>
        values[0] === values[values.length - 1]
          ? `${values[0]}`
          : `${values[0]}–${values[values.length - 1]}`;
      tripRows.push([
        SHAPES[shape].label,
        adapter,
        fmt(recorded.length),
        span(awaited),
        span(before),
        span(jobBefore),
        span(after),
        bad ? `${bad} answered non-2xx ⚠` : 'all 2xx',
      ]);
      lists.push(
        `- ${SHAPES[shape].label}, ${adapter}: before the answer ${commandList(typical.beforeAck)}; after it ${commandList(typical.afterAck)}`,
      );
    }
  }
  return (
    `### On Redis (store + BullMQ runner)\n\n` +
    `The rows "(d) nestjs-hubtel endpoint, Redis store + BullMQ" above are (d) configured as the docs say for Redis, the ` +
    `only Redis deployment since issue 23 (\`HubtelRedisModule.forRoot({ url })\`, no \`store\` option on the modules, ` +
    `\`HubtelBullmqModule.forRoot({ url })\` on the same Redis with its defaults: every job a BullMQ job, run by the ` +
    `server's own worker), each server with a private ` +
    `redis-server ${versions || ''} on 127.0.0.1 (\`--save '' --appendonly no --maxmemory-policy noeviction\`, started and ` +
    `stopped by the bench; emptied whenever its server process is replaced, as the in-memory store is). Redis is a ` +
    `separate process: "Redis CPU" is its INFO cpu (used_cpu_user + used_cpu_sys) over the same window divided by the ` +
    `same requests. Redis, the Node server and the load generator share the machine's cores, and other work ran on it ` +
    `too: compare the two stores within this run, not across runs. The host's handlers run on the BullMQ worker after the ` +
    `answer; at saturation the worker may still hold a backlog when a run's window closes (the server waits for it to ` +
    `drain before its handler runs are counted and before it is replaced), so the CPU of the handler runs is charged only ` +
    `as far as the worker kept up within the window.\n\n` +
    table(
      [
        'endpoint',
        'adapter',
        'req/s Redis / memory',
        'p99 ms memory → Redis',
        'server CPU µs/req memory → Redis',
        'Redis CPU µs/req',
        'server + Redis CPU µs/req',
      ],
      compare,
      ['l', 'l'],
    ) +
    `\n\n#### Redis round trips per request\n\n` +
    `${fmt(count)} fresh requests per endpoint sent one at a time to the Redis-store server (after the measured rounds), ` +
    `each after the previous one's host handler ran. In the server, every command the store's ioredis client sends is ` +
    `charged to the request in flight, before or after its answer is handed to the socket (\`res.end\`); a pipeline or ` +
    `MULTI would count once. The store's client and the BullMQ runner's queue clients are both recorded: before its 2xx an ` +
    `inbound request writes the job's record (set-if-absent) and adds its BullMQ job (one EVALSHA), besides what the ` +
    `endpoint itself reads or writes. The job's run (BullMQ's worker, in the same process) is not awaited by the answer, ` +
    `but its first commands may go out before \`res.end\`; they are told apart by the command's async stack ` +
    `(\`InboundPipeline.execute\` or the worker's frames on it) and counted in their own column. "Awaited" leaves out ` +
    `commands sent while another of the request's own was in flight (no wait of their own). The goal (≤ 3 awaited per ` +
    `endpoint, issue 23) is judged in the callback-to-handler latency section, on every endpoint.\n\n` +
    table(
      [
        'endpoint',
        'adapter',
        'requests',
        'awaited round trips before the answer',
        "request's round trips before the answer",
        "the job's run's, sent before the answer",
        'sent after the answer',
        'answers',
      ],
      tripRows,
      ['l', 'l'],
    ) +
    `\n\nThe commands of a typical request, in the order sent (\`<id>\` is the request's own id):\n\n${lists.join('\n')}`
  );
}

/**
 * Our code alone: the module services behind the endpoints called in process with parsed bodies
 * (no HTTP, no framework), fresh keys, background work awaited. Its CPU per call is the floor of
 * what (d) adds to a plain controller. With profiling on, a second, profiled run says which part
 * of our code that is.
 */
async function inProcessPass(
  config: BenchConfig,
  shapes: ShapeName[],
  log: (line: string) => void,
): Promise<string> {
  const count = config.mode === 'full' ? 50_000 : config.mode === 'quick' ? 5_000 : 2_000;
  const measure = async (nodeFlags: string[]) => {
    const child = new Child('inbound/in-process.ts', [], { nodeFlags });
    const windows: ProfileWindow[] = [];
    const cpu = new Map<ShapeName, number>();
    try {
      await child.ready;
      for (const shape of shapes) {
        const r = await child.request('run', { shape, count });
        cpu.set(shape, Number(r.cpuUs));
        windows.push({ label: shape, startUs: Number(r.startUs), endUs: Number(r.endUs), requests: count });
      }
    } finally {
      await child.stop(30_000);
    }
    return { cpu, windows };
  };
  let plain: Map<ShapeName, number>;
  try {
    plain = (await measure([])).cpu;
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    log(`  in-process: failed: ${message}`);
    return `Our code alone (in process): not measured (${message}).`;
  }
  for (const [shape, us] of plain) log(`  in process ${shape}: ${fmt(us, 1)} µs CPU per call`);
  const rows = shapes.map((shape) => [SHAPES[shape].label, fmt(plain.get(shape) ?? NaN, 1)]);
  let text =
    `### Our code alone, in process\n\n` +
    `The module services behind the endpoints (\`CheckoutService.handleCallback\`, \`ServiceFlowService.handle\`, ` +
    `\`FulfillmentService.receive\`) called directly with parsed bodies, ${fmt(count)} fresh keys, 50 at a time, ` +
    `background work (recording, dispatch to the host handler) awaited: no HTTP, no framework. Its CPU per call is ` +
    `what (d) cannot avoid adding to a plain controller (CPU/req of (b) + this ≈ the best (d) can be).\n\n` +
    table(['endpoint', 'CPU µs per call'], rows, ['l']);
  if (config.profile) {
    const dir = path.join(REPO_DIR, '.tmp', 'bench-profiles', 'in-process');
    await rm(dir, { recursive: true, force: true });
    try {
      const { windows } = await measure(profileFlags(dir));
      const file = await mainThreadProfile(dir);
      if (!file) throw new Error('no main-thread profile written');
      const columns = await breakdown(file, windows);
      text +=
        `\n\nWhere that time goes (a profiled run; sampled µs per call, so totals differ a little from the figures above):\n\n` +
        table(
          ['µs per call', ...columns.map((c) => SHAPES[c.label as ShapeName].label)],
          categoryRows(columns, 1, 2),
          ['l'],
        ) +
        '\n\n' +
        columns
          .map(
            (c) =>
              `- ${SHAPES[c.label as ShapeName].label}, our functions inclusive µs (self): ` +
              c.ours
                .slice(0, 10)
                .map((f) => `\`${f.name}\` ${fmt(f.totalUs, 2)} (${fmt(f.selfUs, 2)})`)
                .join('; '),
          )
          .join('\n');
    } catch (error) {
      log(`  in-process profile: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
  }
  return text;
}

/**
 * Where the time goes: fresh (b) and (d) servers under `node --cpu-prof`, each shape driven for a
 * few seconds; the profile is cut to the measured windows and its CPU charged per request to
 * our validator, pipeline, store, guards, the modules, Nest, the HTTP framework, GC and Node.
 * Separate from the measured rounds because the profiler itself costs CPU.
 */
async function profilePass(
  config: BenchConfig,
  shapes: ShapeName[],
  adapters: AdapterName[],
  variants: Variant[],
  log: (line: string) => void,
): Promise<string> {
  const dir = path.join(REPO_DIR, '.tmp', 'bench-profiles', 'inbound');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  // (b) and (d): what our code adds to a plain controller.
  const profiled = (['plain', 'module'] as Variant[]).filter((v) => variants.includes(v));
  const sections: string[] = [
    `### Where the time goes (CPU profiles)`,
    `Separate pass: fresh servers under \`node --cpu-prof\`, each shape driven ${config.inbound.profileSec} s ` +
      `(after a warm-up); samples inside the measured window only, charged per request (µs) by the script that ran them ` +
      `(native code such as JSON.parse or RegExp is charged to its caller). The profiler adds some overhead, so totals ` +
      `run above the CPU/req measured above. Profiles: \`.tmp/bench-profiles/inbound/\`.`,
  ];
  for (const adapter of adapters) {
    const columns: { label: string; breakdown: WindowBreakdown }[] = [];
    const ourRows: string[] = [];
    for (const variant of profiled) {
      const name = `${variant}-${adapter}`;
      // One directory per server: the loader-hooks thread writes its own profile next to the main one.
      const childDir = path.join(dir, name);
      const target = new Target(variant, adapter);
      const windows: ProfileWindow[] = [];
      try {
        if (!(await target.start({ nodeFlags: profileFlags(childDir) }))) {
          throw new Error(target.failure);
        }
        for (const shapeName of shapes) {
          if (!target.serves(shapeName)) continue;
          const r = await target.drive(shapeName, {
            connections: config.inbound.connections,
            durationSec: config.inbound.profileSec,
            warmupSec: Math.max(0.5, config.inbound.warmupSec),
          });
          windows.push({ label: `${shapeName}`, ...r.window, requests: r.requests });
        }
      } catch (error) {
        log(
          `  profile ${variant}/${adapter}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        );
        await target.stop();
        continue;
      }
      await target.stop(30_000);
      const main = await mainThreadProfile(childDir);
      if (!main) {
        log(`  profile ${variant}/${adapter}: no main-thread profile written`);
        continue;
      }
      const file = path.join(dir, `${name}.cpuprofile`);
      await rename(main, file);
      await rm(childDir, { recursive: true, force: true });
      await writeFile(path.join(dir, `${name}.windows.json`), JSON.stringify(windows, null, 2));
      for (const b of await breakdown(file, windows)) {
        columns.push({
          label: `${VARIANT_SHORT[variant]} ${SHAPES[b.label as ShapeName].label}`,
          breakdown: b,
        });
        if (variant === 'module') {
          ourRows.push(
            `- ${SHAPES[b.label as ShapeName].label}: ` +
              b.ours
                .slice(0, 8)
                .map((f) => `\`${f.name}\` ${fmt(f.totalUs, 1)} µs (self ${fmt(f.selfUs, 1)})`)
                .join('; '),
          );
        }
      }
      log(`  profiled ${variant}/${adapter}`);
    }
    if (columns.length === 0) continue;
    const rows = categoryRows(columns.map((c) => c.breakdown));
    sections.push(
      `#### ${adapter}\n\n` + table(['µs per request', ...columns.map((c) => c.label)], rows, ['l']),
    );
    if (ourRows.length) {
      sections.push(
        `Our functions in (d) on ${adapter}, inclusive µs/req (self in brackets), largest first:\n\n${ourRows.join('\n')}`,
      );
    }
  }
  return sections.join('\n\n');
}
