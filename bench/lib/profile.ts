import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import swc from '@swc/core';

const SWC_OPTIONS = JSON.parse(
  readFileSync(new URL('../loader/swc-options.json', import.meta.url), 'utf8'),
) as swc.Options;
const sourceMaps = new Map<string, SourceMap | null>();

/**
 * The TypeScript line of a position in the code the loader ran: the file is compiled again with
 * the loader's options (same output) and its source map read. Profiles name lines of the
 * compiled code, which decorators and stripped types move away from the source's.
 */
function sourceLine(url: string, line: number, column: number): number {
  let map = sourceMaps.get(url);
  if (map === undefined) {
    map = null;
    try {
      const filename = fileURLToPath(url);
      const out = swc.transformSync(readFileSync(filename, 'utf8'), {
        ...SWC_OPTIONS,
        filename,
        sourceMaps: true,
      });
      if (out.map) map = new SourceMap(JSON.parse(out.map));
    } catch {
      // Unknown or changed file: keep the compiled line.
    }
    sourceMaps.set(url, map);
  }
  const entry = map?.findEntry(line, column) as { originalLine?: number } | undefined;
  return entry?.originalLine !== undefined ? entry.originalLine + 1 : line + 1;
}

/**
 * Reads a V8 CPU profile (`node --cpu-prof`) and attributes the CPU time spent inside given
 * windows (µs on the process's monotonic clock) to parts of the stack: our validator, pipeline,
 * store, guards and module code; Nest's core; the HTTP framework; the event emitter; GC; Node.
 * Native frames without a script (JSON.parse, RegExp, ...) are charged to the nearest caller that
 * has one, so "validator" includes the regular expressions it runs.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileWindow {
  label: string;
  startUs: number;
  endUs: number;
  requests: number;
}

const CATEGORIES: [string, RegExp][] = [
  ['ours: validator', /\/libs\/core\/src\/validation\//],
  [
    'ours: inbound pipeline',
    /\/libs\/core\/src\/inbound\/inbound-(pipeline|job|lease|attempt|dispatch|takeover)/,
  ],
  ['ours: store', /\/libs\/core\/src\/store\//],
  ['ours: guards / route options', /\/libs\/core\/src\/inbound\/inbound-(access|controller)/],
  ['ours: HTTP transport', /\/libs\/core\/src\/http\//],
  ['ours: phone numbers', /\/libs\/core\/src\/phone\//],
  ['ours: log redaction', /\/libs\/core\/src\/logging\//],
  ['ours: other core (errors, events, options)', /\/libs\/core\/src\//],
  ['ours: checkout module', /\/libs\/checkout\/src\//],
  ['ours: service-app module', /\/libs\/service-app\/src\//],
  ['ours: sms module', /\/libs\/sms\/src\//],
  ['bench app (host handlers, DTOs, inputs)', /\/bench\//],
  ['class-validator / class-transformer', /\/node_modules\/(class-validator|class-transformer|validator)\//],
  ['Nest core (router, pipes, guards, interceptors)', /\/node_modules\/@nestjs\/(core|common)\//],
  ['Nest event emitter', /\/node_modules\/(@nestjs\/event-emitter|eventemitter2)\//],
  ['Nest platform adapter', /\/node_modules\/@nestjs\/platform-/],
  [
    'axios (+ @nestjs/axios, rxjs)',
    /\/node_modules\/(axios|@nestjs\/axios|rxjs|follow-redirects|form-data|proxy-from-env|https?-proxy-agent|agent-base)\//,
  ],
  ['undici', /\/node_modules\/undici\//],
  [
    'Express (+ body-parser, router)',
    /\/node_modules\/(express|body-parser|router|raw-body|finalhandler|send|type-is|content-type|on-finished|iconv-lite|qs|depd|http-errors|statuses|mime|accepts|negotiator|media-typer|cookie|vary|parseurl|path-to-regexp|encodeurl|escape-html|etag|fresh|range-parser|proxy-addr|ipaddr\.js|forwarded|merge-descriptors|utils-merge|setprototypeof|inherits|debug|ms|destroy|unpipe|bytes|safe-buffer)\//,
  ],
  [
    'Fastify',
    /\/node_modules\/(fastify|@fastify\/[^/]+|find-my-way|avvio|light-my-request|fast-json-stringify|secure-json-parse|toad-cache|abstract-logging|pino|process-warning|rfdc|fast-decode-uri-component|fast-querystring|ret|safe-regex2|middie|path-to-regexp|reusify|fastq)\//,
  ],
  ['other node_modules', /\/node_modules\//],
  ['Node.js (http, streams, timers, ...)', /^node:|^internal\//],
];

function categorise(url: string): string | undefined {
  if (!url) return undefined;
  for (const [name, pattern] of CATEGORIES) if (pattern.test(url)) return name;
  return 'other';
}

export interface WindowBreakdown {
  label: string;
  requests: number;
  /** µs of CPU per request by category (self time), largest first. */
  categories: [string, number][];
  /** Our own functions (libs/): self and inclusive µs per request, by inclusive time. */
  ours: { name: string; selfUs: number; totalUs: number }[];
  /** Sampled CPU per request (excludes idle), to compare with the measured CPU/req. */
  totalUs: number;
}

export async function breakdown(file: string, windows: ProfileWindow[]): Promise<WindowBreakdown[]> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  // Category of a node: its own script's, else its nearest caller's (natives run for their caller).
  const categoryCache = new Map<number, string>();
  const categoryOf = (id: number): string => {
    const cached = categoryCache.get(id);
    if (cached) return cached;
    const node = byId.get(id)!;
    const name = node.callFrame.functionName;
    let category: string;
    if (name === '(garbage collector)') category = 'GC';
    else if (name === '(idle)') category = 'idle';
    else if (name === '(program)') category = 'V8 / native (program)';
    else {
      const own = categorise(node.callFrame.url);
      const up = parent.get(id);
      category =
        own ??
        (up !== undefined && byId.get(up)!.callFrame.functionName !== '(root)'
          ? categoryOf(up)
          : 'V8 / native (program)');
    }
    categoryCache.set(id, category);
    return category;
  };
  const frameName = (node: ProfileNode) => {
    const url = node.callFrame.url;
    const file = url.slice(url.lastIndexOf('/libs/') + 1).replace(/\.ts$/, '');
    const line = sourceLine(url, node.callFrame.lineNumber, node.callFrame.columnNumber);
    return `${node.callFrame.functionName || '(anonymous)'} (${file}:${line})`;
  };
  const isOurs = (node: ProfileNode) => node.callFrame.url.includes('/libs/');

  const results: WindowBreakdown[] = [];
  for (const window of windows) {
    const categories = new Map<string, number>();
    const self = new Map<string, number>();
    const total = new Map<string, number>();
    let time = profile.startTime;
    let sampled = 0;
    for (let i = 0; i < profile.samples.length; i++) {
      time += profile.timeDeltas[i] ?? 0;
      if (time < window.startUs || time > window.endUs) continue;
      const weight = profile.timeDeltas[i + 1] ?? 0;
      const id = profile.samples[i]!;
      const category = categoryOf(id);
      if (category === 'idle') continue;
      sampled += weight;
      categories.set(category, (categories.get(category) ?? 0) + weight);
      const seen = new Set<string>();
      let first = true;
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const node = byId.get(at)!;
        if (isOurs(node)) {
          const name = frameName(node);
          if (first) self.set(name, (self.get(name) ?? 0) + weight);
          if (!seen.has(name)) {
            seen.add(name);
            total.set(name, (total.get(name) ?? 0) + weight);
          }
        }
        // Natives (no script) charged to their caller: keep "first" until a real frame is met.
        if (node.callFrame.url) first = false;
      }
    }
    const per = (us: number) => (window.requests > 0 ? us / window.requests : NaN);
    results.push({
      label: window.label,
      requests: window.requests,
      totalUs: per(sampled),
      categories: [...categories]
        .map(([name, us]) => [name, per(us)] as [string, number])
        .sort((a, b) => b[1] - a[1]),
      ours: [...total]
        .map(([name, us]) => ({ name, totalUs: per(us), selfUs: per(self.get(name) ?? 0) }))
        .sort((a, b) => b.totalUs - a.totalUs),
    });
  }
  return results;
}

/** Node flags that make a child write its CPU profiles into `dir` (one directory per child). */
export function profileFlags(dir: string): string[] {
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/**
 * The main thread's profile in `dir`: default names are CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile,
 * and the loader-hooks thread writes its own next to it.
 */
export async function mainThreadProfile(dir: string): Promise<string | undefined> {
  const { readdir } = await import('node:fs/promises');
  const path = await import('node:path');
  const main = (await readdir(dir)).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  return main === undefined ? undefined : path.join(dir, main);
}

/** Markdown rows: one per category, one column per breakdown, values scaled by `scale`. */
export function categoryRows(columns: WindowBreakdown[], scale = 1, digits = 1): string[][] {
  const categories = new Map<string, number>();
  for (const column of columns) {
    for (const [name, us] of column.categories) categories.set(name, Math.max(categories.get(name) ?? 0, us));
  }
  const fmt = (us: number) => (us * scale).toFixed(digits);
  const rows = [...categories]
    .sort((a, b) => b[1] - a[1])
    .map(([name]) => [
      name,
      ...columns.map((c) => {
        const us = c.categories.find(([n]) => n === name)?.[1] ?? 0;
        return us * scale >= 0.5 * 10 ** -digits ? fmt(us) : '';
      }),
    ]);
  rows.push(['**total sampled CPU**', ...columns.map((c) => `**${fmt(c.totalUs)}**`)]);
  return rows;
}
