#!/usr/bin/env node
// The shape of a library's import graph, for issue 33's before/after figures (folders by feature,
// no import circle): files per folder, import edges among the library's own files, import levels
// and import circles, and lines of library code.
//   node scripts/import-graph.mjs [folder ...] [--json]
// Default folders: libs/service-app/src libs/checkout/src. What is counted:
// - files: the .ts files under the folder, except *.spec.ts and anything in a __tests__ folder
//   (test-only code); the same rule gives the line counts, here and for all of libs/;
// - lines: every line of those files, blank and comment lines included (as `wc -l`);
// - imports: every module specifier of a file as the TypeScript compiler's pre-processor reads it
//   (import, import type, export ... from, import()); a specifier is an edge when it resolves to
//   another counted file of the same folder (relative paths, and the package's own entry names,
//   e.g. `#internal`); a file importing another twice is one edge;
// - levels: a file importing nothing of its own is level 0, else one more than the highest level
//   it imports; the files of one circle share a level (a circle is one step);
// - circles: the strongly connected components of more than one file.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ENTRY_POINTS, repoRoot } from './api-names.mjs';

const DEFAULT_FOLDERS = ['libs/service-app/src', 'libs/checkout/src'];

/** Non-test TypeScript files under `dir`, as absolute paths, sorted. */
function libraryFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '__tests__' && entry.name !== 'node_modules') out.push(...libraryFiles(full));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
      out.push(full);
    }
  }
  return out.sort();
}

function lineCount(text) {
  return text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

const entryFiles = new Map(ENTRY_POINTS.map((e) => [e.name, path.join(repoRoot, e.file)]));

/** The file a specifier names, or undefined for another package. */
function resolveSpecifier(fromFile, specifier) {
  if (entryFiles.has(specifier)) return entryFiles.get(specifier);
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(fromFile), specifier);
  const stem = base.replace(/\.(m|c)?js$/, '');
  const candidates = [`${stem}.ts`, base, path.join(base, 'index.ts')];
  return candidates.find((c) => c.endsWith('.ts') && fs.existsSync(c));
}

/** Tarjan's strongly connected components; returns a component index per node. */
function components(nodes, edges) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const comp = new Map();
  let counter = 0;
  let compCount = 0;
  const visit = (v) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v) === index.get(v)) {
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        comp.set(w, compCount);
      } while (w !== v);
      compCount++;
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return comp;
}

function analyse(folderArg) {
  const dir = path.resolve(folderArg);
  const rel = (f) => path.relative(dir, f).split(path.sep).join('/');
  const files = libraryFiles(dir);
  const own = new Set(files);
  const edges = new Map(files.map((f) => [f, new Set()]));
  const perFolder = {};
  let lines = 0;
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    lines += lineCount(text);
    const folder = path.dirname(rel(file));
    perFolder[folder] = (perFolder[folder] ?? 0) + 1;
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      const target = resolveSpecifier(file, fileName);
      if (target && target !== file && own.has(target)) edges.get(file).add(target);
    }
  }

  // Circles, then levels over the graph of circles (a file outside any circle is its own node).
  const comp = components(files, edges);
  const members = new Map();
  for (const f of files) members.set(comp.get(f), [...(members.get(comp.get(f)) ?? []), f]);
  const level = new Map();
  const next = new Map(); // per component, the component its longest chain goes through next
  const levelOf = (c) => {
    if (level.has(c)) return level.get(c);
    let best = 0;
    for (const f of members.get(c)) {
      for (const t of edges.get(f)) {
        const d = comp.get(t);
        if (d !== c && levelOf(d) + 1 > best) {
          best = levelOf(d) + 1;
          next.set(c, d);
        }
      }
    }
    level.set(c, best);
    return best;
  };
  for (const c of members.keys()) levelOf(c);
  let top;
  for (const c of members.keys()) if (top === undefined || level.get(c) > level.get(top)) top = c;
  const chain = [];
  for (let c = top; c !== undefined; c = next.get(c)) chain.push(members.get(c).map(rel).sort().join(' + '));

  const circles = [...members.values()].filter((m) => m.length > 1).map((m) => m.map(rel).sort());
  return {
    folder: path.relative(repoRoot, dir).split(path.sep).join('/'),
    files: files.length,
    filesPerFolder: Object.fromEntries(Object.entries(perFolder).sort(([a], [b]) => a.localeCompare(b))),
    lines,
    importEdges: [...edges.values()].reduce((n, s) => n + s.size, 0),
    deepestLevel: top === undefined ? 0 : level.get(top),
    longestChain: chain,
    circles,
  };
}

function libsLines() {
  const files = libraryFiles(path.join(repoRoot, 'libs'));
  const lines = files.reduce((n, f) => n + lineCount(fs.readFileSync(f, 'utf8')), 0);
  return { files: files.length, lines };
}

function markdown(results, libs) {
  const n = (x) => x.toLocaleString('en-US');
  const out = [
    '| Library | Files (per folder) | Own import edges | Import levels | Import circles | Lines |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    const folders = Object.entries(r.filesPerFolder)
      .map(([f, c]) => `${f === '.' ? '(top)' : `${f}/`} ${c}`)
      .join(', ');
    const circles =
      r.circles.length === 0
        ? '0'
        : `${r.circles.length} (${r.circles.map((c) => c.length).join(', ')} files)`;
    out.push(
      `| \`${r.folder}\` | ${r.files}: ${folders} | ${r.importEdges} | ${r.deepestLevel + 1} (levels 0–${r.deepestLevel}) | ${circles} | ${n(r.lines)} |`,
    );
  }
  out.push(
    `| all of \`libs/\` | ${libs.files} | | | | ${n(libs.lines)} |`,
    '',
    'Counted: `.ts` files except `*.spec.ts` and `__tests__/` folders; lines as `wc -l` (blank and comment',
    'lines included). An edge is one file importing another of the same library (import, import type,',
    'export from, import()), counted once per pair; level 0 imports nothing of its own, the files of a circle',
    'share a level; a circle is a strongly connected component of more than one file.',
  );
  for (const r of results) {
    out.push('', `\`${r.folder}\`, longest chain: ${r.longestChain.map((f) => `\`${f}\``).join(' → ')}`);
    for (const c of r.circles) out.push(`- circle of ${c.length}: ${c.map((f) => `\`${f}\``).join(', ')}`);
  }
  return out.join('\n');
}

const args = process.argv.slice(2);
const json = args.includes('--json');
const folders = args.filter((a) => !a.startsWith('--'));
const results = (folders.length > 0 ? folders : DEFAULT_FOLDERS.map((f) => path.join(repoRoot, f))).map(
  analyse,
);
const libs = libsLines();
process.stdout.write(
  json ? `${JSON.stringify({ libraries: results, libs }, null, 2)}\n` : `${markdown(results, libs)}\n`,
);
