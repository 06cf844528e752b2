/**
 * `npm run bench` — measures the suite against the baselines a user would compare it to, in one
 * run, and writes bench/RESULTS.md. `npm run bench -- --quick` for a short run (about 2 minutes).
 * Options: --only=inbound,sms,sessions,latency  --out=FILE  --profile (CPU profiles of the Nest
 * servers into .tmp/bench-profiles/)  --duration=S --rounds=N --connections=N  --shapes=… --variants=… --adapters=…
 * --rates=… (variants: bare, plain, validated, module, redis — the last is (d) on the Redis store and
 * the BullMQ runner, on a private redis-server the bench starts; --rates: the latency section's
 * two-replica rows, suite and bare BullMQ baseline at each, default 100,300,500).
 * One row alone: `node --import ./bench/loader/register.mjs bench/latency/bullmq-row.ts --rates=100`
 * (the two-replica rows; prints, writes nothing), or `npm run bench -- --quick --only=latency
 * --adapters=express --rates=100 --out=/tmp/latency.md` (that section at one rate).
 */
import os from 'node:os';
import path from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import prettier from 'prettier';
import { BENCH_DIR, REPO_DIR } from './lib/ipc.js';
import { parseArgs, type BenchConfig } from './lib/config.js';
import { table, type Goal, type SectionResult } from './lib/report.js';
import { fmt } from './lib/stats.js';

const SECTIONS: Record<
  string,
  {
    title: string;
    load: () => Promise<(config: BenchConfig, log: (line: string) => void) => Promise<SectionResult>>;
  }
> = {
  inbound: {
    title: 'Inbound endpoints',
    load: async () => (await import('./inbound/inbound.bench.js')).runInbound,
  },
  sms: { title: 'SMS fan-out', load: async () => (await import('./sms/sms.bench.js')).runSms },
  sessions: {
    title: 'Service-flow sessions',
    load: async () => (await import('./sessions/sessions.bench.js')).runSessionsSection,
  },
  latency: {
    title: 'Callback-to-handler latency',
    load: async () => (await import('./latency/latency.bench.js')).runLatency,
  },
};

/** Which code was measured: the commit, and whether libs/ had uncommitted changes (shared tree). */
function codeVersion(): string {
  if (process.env.HUBTEL_BENCH_DIST === '1') return 'the built package (dist/esm, HUBTEL_BENCH_DIST=1)';
  if (process.env.HUBTEL_BENCH_COMMIT) return `commit ${process.env.HUBTEL_BENCH_COMMIT} (clean snapshot)`;
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: REPO_DIR,
      encoding: 'utf8',
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'libs'], {
      cwd: REPO_DIR,
      encoding: 'utf8',
    }).trim();
    return `commit ${commit}${dirty ? ' with uncommitted changes in libs/ (figures may not match the commit)' : ' (libs/ clean)'}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

function machine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  return [
    `- CPU: ${cpus.length} × ${model}${cpus[0]?.speed ? ` @ ${cpus[0].speed} MHz` : ''}`,
    `- Memory: ${fmt(os.totalmem() / 1024 ** 3, 1)} GiB`,
    `- OS: ${os.type()} ${os.release()} (${os.arch()})`,
    `- Node ${process.version}; load generator (autocannon) and servers share the machine, each in its own process`,
    `- Code: ${codeVersion()}`,
  ].join('\n');
}

/** A section's part of RESULTS.md: its goals (with when it ran, and the load then) and its text. */
interface SectionBlocks {
  goals: string;
  body: string;
}

/**
 * The blocks of each section in an earlier RESULTS.md, by title: a run of some sections
 * (`--only`) keeps the others' as they were measured, dated, instead of dropping them.
 */
function earlierBlocks(text: string, titles: string[]): Map<string, SectionBlocks> {
  const lines = text.split('\n');
  const found = new Map<string, SectionBlocks>();
  const blockFrom = (start: number, ends: (line: string) => boolean) => {
    let end = start + 1;
    while (end < lines.length && !ends(lines[end]!)) end++;
    return lines.slice(start, end).join('\n').trim();
  };
  for (const title of titles) {
    const goalsAt = lines.findIndex((line) => line.startsWith(`### ${title} — `));
    const bodyAt = lines.findIndex((line) => line === `## ${title}`);
    if (goalsAt < 0 || bodyAt < 0) continue;
    found.set(title, {
      goals: blockFrom(goalsAt, (line) => line.startsWith('### ') || line.startsWith('## ')),
      body: blockFrom(bodyAt, (line) => line.startsWith('## ')),
    });
  }
  return found;
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2), path.join(BENCH_DIR, 'RESULTS.md'));
  const started = Date.now();
  const log = (line: string) => console.log(line);
  log(`nestjs-hubtel bench (${config.mode}); sections: ${[...config.only].join(', ')}`);
  const earlier = earlierBlocks(
    await readFile(config.out, 'utf8').catch(() => ''),
    Object.values(SECTIONS).map((section) => section.title),
  );
  const mark = (met: boolean | null) => (met === null ? '— not measured' : met ? '✅ met' : '❌ not met');
  const blocks: SectionBlocks[] = [];
  const kept: string[] = [];
  for (const [name, section] of Object.entries(SECTIONS)) {
    if (!config.only.has(name)) {
      const before = earlier.get(section.title);
      if (before) {
        blocks.push(before);
        kept.push(section.title);
      }
      continue;
    }
    log(`\n## ${section.title}`);
    const sectionStart = Date.now();
    // The machine's load just before the section: a verdict on a busy machine reads differently.
    const load = os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ');
    let result: SectionResult;
    try {
      const run = await section.load();
      result = await run(config, log);
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      log(`  failed: ${message}`);
      result = {
        title: section.title,
        markdown: `Not measured: the section failed:\n\n\`\`\`\n${message.slice(0, 2000)}\n\`\`\``,
        goals: [],
      };
    }
    log(`  (${((Date.now() - sectionStart) / 1000).toFixed(0)} s)`);
    blocks.push({
      goals: [
        `### ${section.title} — run of ${new Date(sectionStart).toISOString()}, machine load before it ${load} (1, 5, 15 min)`,
        ``,
        goalsTable(result.goals, mark),
      ].join('\n'),
      body: [`## ${section.title}`, ``, result.markdown].join('\n'),
    });
  }
  const totalSec = (Date.now() - started) / 1000;
  const markdown = [
    `# nestjs-hubtel benchmark results`,
    ``,
    `Generated by \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\` on ${new Date().toISOString()} (took ${totalSec.toFixed(0)} s).` +
      ` Ratios are measured within the same run and are what the goals are judged on; absolute figures are for reference only (the machine is shared and noisy).`,
    ``,
    `Why the goals are met or missed, which part of the code costs what, and what would change it: [FINDINGS.md](./FINDINGS.md) ` +
      `(written against the committed run of this file).`,
    ``,
    `Run it: \`npm ci && npm run bench\` (about 15 minutes; writes this file), \`npm run bench -- --quick\` (about 2 minutes, ` +
      `smaller samples, no profiles). Options: \`--only=inbound,sms,sessions,latency\`, \`--out=FILE\`, \`--profile[=S]\` / ` +
      `\`--no-profile\`, \`--equal-load[=RATE]\` (CPU/req with every server offered the same req/s), \`--keep-servers\` (one process per (d) server for every run), \`--duration=S\`, \`--rounds=N\`, \`--connections=N\`, \`--adapters=express,fastify\`, ` +
      `\`--variants=bare,plain,validated,module,redis\`, \`--shapes=checkout-callback,service-flow,fulfillment\`, \`--recipients=N\`, ` +
      `\`--big-recipients=N\`, \`--sessions=N\`, \`--rates=100,300,500\` (the latency section's two-replica rows). One row alone: ` +
      `\`node --import ./bench/loader/register.mjs bench/latency/bullmq-row.ts --rates=100\` (the suite's two replicas and the bare ` +
      `BullMQ baseline at one rate, 5 s each, \`--quick\` for 1 s; prints the figures and the ratio, writes nothing), or ` +
      `\`npm run bench -- --quick --only=latency --adapters=express --rates=100 --out=/tmp/latency.md\` (that section at one rate, ` +
      `about 40 s). The Redis parts (variant \`redis\`: the Redis store with the BullMQ runner, the only Redis deployment since ` +
      `issue 23; Redis memory per session; the two-replica rows; the round trips) start and stop ` +
      `their own private redis-server (Redis 6 or later, \`apt-get install redis-server\`); without it they say so and are not measured. Every server, sender and fake API runs in its own process (TypeScript ` +
      `sources through bench/loader, no build step; \`HUBTEL_BENCH_DIST=1\` measures the built dist/esm instead); CPU profiles ` +
      `land in \`.tmp/bench-profiles/\`.`,
    ``,
    `## Machine`,
    ``,
    machine(),
    ``,
    `## Goals`,
    ``,
    kept.length
      ? `Sections not run this time (${kept.join(', ')}) are kept from their own earlier run, dated below.\n`
      : '',
    ...blocks.flatMap((block) => [block.goals, ``]),
    ...blocks.flatMap((block) => [block.body, ``]),
  ].join('\n');
  // Formatted like the rest of the repository, so `npm run format:check` stays clean after a run.
  const formatted = await prettier.format(markdown, {
    ...((await prettier.resolveConfig(config.out)) ?? {}),
    parser: 'markdown',
  });
  await writeFile(config.out, formatted);
  log(`\nwrote ${config.out} (${totalSec.toFixed(0)} s)`);
}

function goalsTable(goals: Goal[], mark: (met: boolean | null) => string): string {
  if (!goals.length) return '_No goals measured in this run._';
  return table(
    ['area', 'goal', 'measured', 'verdict', 'by how much'],
    goals.map((g) => [
      g.area,
      g.goal,
      g.measured,
      g.info ? 'ℹ️ information, not judged' : mark(g.met),
      g.margin,
    ]),
    ['l', 'l', 'l', 'l', 'l'],
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
