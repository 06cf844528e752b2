#!/usr/bin/env node
/**
 * `node bench/compare-inbound.mjs --ref=REV [--passes=3] [--duration=S] [--adapters=express,fastify]
 *   [--shapes=checkout-callback,service-flow,fulfillment]`
 *
 * The inbound endpoints' CPU per request of an older commit's code beside this tree's, measured in
 * one session: each pass runs the older tree's own inbound bench (module variant), then this
 * tree's, alternating which goes first, so the machine's drift falls on both alike (a noisy
 * 2-core machine swings absolute figures 3-5x between sessions; only a ratio measured this way can
 * be read). Prints one Markdown table: median CPU/req per endpoint and adapter, old, new, new/old.
 *
 * The older tree is a detached `git worktree` under the system temp folder sharing this tree's
 * node_modules; it is removed at the end.
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    ref: { type: 'string' },
    passes: { type: 'string', default: '3' },
    duration: { type: 'string', default: '4' },
    adapters: { type: 'string', default: 'express,fastify' },
    shapes: { type: 'string', default: 'checkout-callback,service-flow,fulfillment' },
  },
});
if (!values.ref) {
  console.error(
    'usage: node bench/compare-inbound.mjs --ref=REV [--passes=N] [--duration=S] [--adapters=…] [--shapes=…]',
  );
  process.exit(2);
}
const passes = Number(values.passes);
const git = (...args) => execFileSync('git', ['-C', here, ...args], { encoding: 'utf8' }).trim();
const oldSha = git('rev-parse', '--short', values.ref);
const newSha =
  git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--', 'libs') ? '+dirty' : '');

const scratch = mkdtempSync(path.join(tmpdir(), 'hubtel-compare-'));
const oldTree = path.join(scratch, oldSha);
git('worktree', 'add', '--detach', oldTree, values.ref);
symlinkSync(path.join(here, 'node_modules'), path.join(oldTree, 'node_modules'));

/** One inbound bench of `tree`; resolves to { "shape|adapter": µs CPU/req }. */
function runBench(tree, label, pass) {
  const out = path.join(scratch, `${label}-${pass}.md`);
  const args = [
    '--import',
    './bench/loader/register.mjs',
    'bench/run.ts',
    '--only=inbound',
    '--variants=module',
    '--no-profile',
    '--rounds=1',
    `--duration=${values.duration}`,
    `--adapters=${values.adapters}`,
    `--shapes=${values.shapes}`,
    `--out=${out}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: tree, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (chunk) => (text += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      const cells = {};
      // "  round 1/1 checkout-callback module/express: 1,234 req/s, p99 9 ms, 512 µs CPU/req"
      for (const m of text.matchAll(/round \d+\/\d+ (\S+) module\/(\w+): .*?([\d,.]+) µs CPU\/req(.*)/g)) {
        if (/non-2xx!|errors/.test(m[4])) continue; // a run with failures measures nothing
        cells[`${m[1]}|${m[2]}`] = Number(m[3].replace(/,/g, ''));
      }
      if (code !== 0 || Object.keys(cells).length === 0) {
        reject(new Error(`bench in ${tree} exited ${code} with no figures:\n${text.slice(-2000)}`));
      } else resolve(cells);
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

const runs = { old: [], new: [] };
try {
  for (let pass = 0; pass < passes; pass++) {
    const order = pass % 2 === 0 ? ['old', 'new'] : ['new', 'old'];
    for (const label of order) {
      const tree = label === 'old' ? oldTree : here;
      console.error(`pass ${pass + 1}/${passes}: ${label} (${label === 'old' ? oldSha : newSha})`);
      runs[label].push(await runBench(tree, label, pass));
    }
  }
} finally {
  try {
    git('worktree', 'remove', '--force', oldTree);
  } catch {
    /* already gone */
  }
  if (existsSync(scratch)) rmSync(scratch, { recursive: true, force: true });
}

const keys = [...new Set(runs.new.flatMap((cells) => Object.keys(cells)))];
console.log(`| endpoint | adapter | old ${oldSha} µs | new ${newSha} µs | new / old |`);
console.log('|---|---|---:|---:|---:|');
for (const key of keys) {
  const [shape, adapter] = key.split('|');
  const o = median(runs.old.map((c) => c[key]).filter((v) => v !== undefined));
  const n = median(runs.new.map((c) => c[key]).filter((v) => v !== undefined));
  console.log(`| ${shape} | ${adapter} | ${o.toFixed(0)} | ${n.toFixed(0)} | ${(n / o).toFixed(2)} |`);
}
console.log(
  `\n${passes} passes, alternating; each a fresh server process per endpoint, ${values.duration} s of load; median per cell.`,
);
