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
import { SHAPES, SHAPE_NAMES, type ShapeName } from '../lib/shapes.js';
import { fmt, median, ratio } from '../lib/stats.js';
import { marginAtLeast, table, type Goal, type SectionResult } from '../lib/report.js';
import type { BenchConfig } from '../lib/config.js';
import { ADAPTERS, type AdapterName } from './adapters.js';

const NEST_VARIANTS: Variant[] = ['plain', 'validated', 'module'];
const LABEL: Record<Variant, string> = {
  bare: '(a) bare node:http + JSON.parse',
  plain: '(b) Nest controller, no validation',
  validated: '(c) Nest + ValidationPipe + class-validator',
  module: '(d) nestjs-hubtel endpoint',
};

const VARIANT_SHORT: Record<Variant, string> = { bare: '(a)', plain: '(b)', validated: '(c)', module: '(d)' };

const GOAL_VS_PLAIN = 0.85;
const GOAL_VS_VALIDATED = 1.5;

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
  // The equal-load column (index 6) only when that pass ran.
  const withEqualLoad = (cells: string[]) => (inbound.fixedSec > 0 ? cells : cells.filter((_, i) => i !== 6));
  try {
    for (let round = 0; round < inbound.rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const shapeName of shapes) {
        for (const server of order) {
          if (!server.serves(shapeName)) continue;
          // The module's servers keep what they record (see below): each run gets a fresh
          // process, so a run does not pay for the heap earlier runs left (the baselines keep
          // nothing, so theirs stay up).
          if (server.variant === 'module' && server.runs > 0 && !inbound.keepServers) {
            if (!(await server.restart())) {
              log(`  module/${server.adapter}: could not restart: ${server.failure}`);
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
    // The suite's servers keep what they recorded (the store's TTLs are hours to days): say how
    // much one held at most, since a larger heap makes garbage collection dearer.
    for (const server of servers) {
      if (server.variant !== 'module' || !server.port) continue;
      // Every answered request must have run the host's code (handler or flow step): proof the
      // suite took its real path (verified, recorded, dispatched), not a refusal answered 200.
      await server.collect();
      for (const shape of shapes) {
        const sent = answered.get(cellKey(shape, 'module', server.adapter)) ?? 0;
        const ran = server.handled[shape] ?? 0;
        const ok = ran >= sent && ran <= sent + inbound.connections * 2 * inbound.rounds;
        workNotes.push(
          `${server.adapter} ${SHAPES[shape].label}: ${fmt(ran)} handler runs for ${fmt(sent)} answers${ok ? '' : ' ⚠'}`,
        );
        if (!ok)
          log(`  ⚠ module/${server.adapter} ${shape}: ${ran} handler runs for ${sent} answered requests`);
      }
      heapNotes.push(`${server.adapter}: ${fmt(server.largestHeap / 2 ** 20)} MB heap`);
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
            server?.failure ? `could not start: ${server.failure.slice(0, 160)}` : missing,
          ]);
          continue;
        }
        const equal = (v: Variant) => atRate.get(cellKey(shapeName, v, adapter))?.cpuUsPerReq ?? NaN;
        let vsPlain = '';
        let vsValidated = '';
        if (variant === 'module') {
          const at = (v: Variant) =>
            Number.isFinite(equal(v) / equal('module'))
              ? `; equal load ${ratio(equal(v) / equal('module'))}`
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
        for (const [base, baseVariant, target, name] of [
          [plain, 'plain', GOAL_VS_PLAIN, '(b) plain Nest'],
          [validated, 'validated', GOAL_VS_VALIDATED, '(c) ValidationPipe'],
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
            `CPU µs/req at ${fmt(inbound.fixedRate)} req/s`,
            '(d)/(b)',
            '(d)/(c)',
          ]),
          rows.map(withEqualLoad),
          ['l', 'l'],
        ),
    );
  }
  if (variants.includes('module')) parts.push(await inProcessPass(config, shapes, log));
  if (config.inbound.profileSec > 0) {
    parts.push(await profilePass(config, shapes, adapters, variants, log));
  }
  return { title: 'Inbound endpoints', markdown: parts.join('\n\n'), goals };
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
