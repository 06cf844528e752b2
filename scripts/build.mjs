#!/usr/bin/env node
// Builds the published dual package from libs/*/src (specs excluded):
//   dist/esm/<lib>/**.js + .d.ts    tsc (NodeNext), decorators and their metadata as tsc emits them
//   dist/cjs/<lib>/**.cjs + .d.cts  the same JS with only its module syntax converted by SWC
// The CommonJS files use the .cjs/.d.cts extensions instead of a nested {"type":"commonjs"}
// package.json on purpose: a nested package.json would become the "package scope" of those files
// and break Node's (and Jest's, and TypeScript's) package self-reference, which is how
// `require('nestjs-hubtel')` inside dist/cjs/sms finds the CommonJS core — one core instance per
// format, no relative paths between libs.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { appendFileSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import swc from '@swc/core';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const esmDir = path.join(root, 'dist', 'esm');
const cjsDir = path.join(root, 'dist', 'cjs');
const started = Date.now();

const problems = [];
const rel = (p) => path.relative(root, p);

async function walk(dir) {
  const out = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(full)));
    else out.push(full);
  }
  return out;
}

async function exists(p) {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

// 0. NESTJS_HUBTEL_BUILD_CACHE=<dir> (test/setup.ts sets it for the tests that build copies of the
// repo): a build of the same inputs is copied from there, not compiled again; a new one is kept.
// One build per key at a time: the others wait on its lock, then copy it (two Jest workers
// compiling the same sources at once would each take a core for the same result).
const cacheDir = process.env.NESTJS_HUBTEL_BUILD_CACHE;
const app = process.argv.includes('--app');
const cached = cacheDir && path.join(cacheDir, await inputsKey());
if (cached) await lockBuild(`${cached}.lock`);
async function inputsKey() {
  const hash = createHash('sha256');
  const inputs = app
    ? [
        ...(await walk(path.join(root, 'src'))),
        ...(await walk(esmDir).catch(() => [])).filter((f) => f.endsWith('.d.ts')),
        ...['tsconfig.app.json', 'package-lock.json'].map((name) => path.join(root, name)),
      ]
    : (await walk(path.join(root, 'libs'))).filter((f) => /[\\/]src[\\/]/.test(f));
  for (const name of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs'])
    inputs.push(path.join(root, name));
  for (const file of inputs.sort()) hash.update(`${rel(file)}\0`).update(await fs.readFile(file));
  for (const name of ['typescript', '@swc/core']) hash.update(require(`${name}/package.json`).version);
  return hash.update(`${app}${process.version}`).digest('hex').slice(0, 16);
}
/** Takes the lock directory (released when this process exits), waiting while a live build holds it. */
async function lockBuild(lock) {
  await fs.mkdir(path.dirname(lock), { recursive: true });
  for (let waited = 0; ; waited += 500) {
    try {
      await fs.mkdir(lock);
      await fs.writeFile(path.join(lock, 'pid'), String(process.pid));
      process.on('exit', () => rmSync(lock, { recursive: true, force: true }));
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    // A holder that died (killed mid-build) leaves its lock: taken over once its pid is gone.
    const holder = Number(await fs.readFile(path.join(lock, 'pid'), 'utf8').catch(() => 0));
    if ((holder && !alive(holder)) || waited > 20 * 60_000)
      await fs.rm(lock, { recursive: true, force: true });
    if (waited % 30_000 === 0 && waited > 0)
      console.log(`build: waiting for ${holder}'s build of the same sources`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}
const outputs = app ? ['app'] : ['esm', 'cjs'];
if (cached && (await exists(path.join(cached, 'done')))) {
  for (const dir of outputs) {
    await fs.rm(path.join(root, 'dist', dir), { recursive: true, force: true });
    await fs.cp(path.join(cached, dir), path.join(root, 'dist', dir), { recursive: true });
  }
  console.log(
    `build: dist/${outputs.join(' + dist/')} copied from NESTJS_HUBTEL_BUILD_CACHE (the same inputs built before)`,
  );
  record('copied');
  process.exit(0);
}

// `--app` (npm run build:app): the example app (src/) into dist/app, against the package's build.
if (app) {
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.app.json'], {
      cwd: root,
      stdio: 'inherit',
    });
  } catch {
    process.exit(1);
  }
  await keep();
  process.exit(0);
}

// 1. ESM + declarations with tsc.
await fs.rm(esmDir, { recursive: true, force: true });
await fs.rm(cjsDir, { recursive: true, force: true });
try {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
} catch {
  console.error('build: tsc failed (see above); nothing was built.');
  process.exit(1);
}

// tsc mirrors libs/<lib>/src/...; publish it as dist/esm/<lib>/... (no lib imports another by path,
// so dropping the `src` level changes no import).
const libs = [];
for (const entry of await fs.readdir(esmDir, { withFileTypes: true })) {
  if (!entry.isDirectory()) continue;
  const lib = path.join(esmDir, entry.name);
  const src = path.join(lib, 'src');
  if (!(await exists(src))) continue;
  const tmp = `${lib}.__tmp`;
  await fs.rename(src, tmp);
  await fs.rm(lib, { recursive: true, force: true });
  await fs.rename(tmp, lib);
  libs.push(entry.name);
}

// 1b. `#internal` (the libraries' shared code, libs/core/src/internal.ts) and `#light/<lib>` (what
// the bins load, libs/<lib>/src/light.ts) are no entry points of the package: each import of one
// becomes a relative path inside the same build, so it reaches the one core instance of that
// format and applications cannot import it by name.
const sharedFile = (name) =>
  name === '#internal' ? 'core/internal.js' : `${name.slice('#light/'.length)}/light.js`;
for (const file of await walk(esmDir)) {
  if (!/\.(js|d\.ts)$/.test(file)) continue;
  const code = await fs.readFile(file, 'utf8');
  if (!/#internal|#light\//.test(code)) continue;
  await fs.writeFile(
    file,
    code.replace(
      /(\bfrom\s*|\bimport\(\s*|\bimport\s+)(["'])(#internal|#light\/[a-z-]+)\2/g,
      (_m, ctx, q, name) => {
        const target = path.relative(path.dirname(file), path.join(esmDir, sharedFile(name)));
        return `${ctx}${q}${target.startsWith('.') ? target : `./${target}`}${q}`;
      },
    ),
  );
}

// 2. Non-TypeScript assets next to the code (templates, static pages) go to both builds.
for (const lib of libs) {
  const srcRoot = path.join(root, 'libs', lib, 'src');
  for (const file of await walk(srcRoot)) {
    if (file.endsWith('.ts') || /(^|[\\/])__(tests|fixtures)__[\\/]/.test(file)) continue;
    const relPath = path.relative(srcRoot, file);
    for (const out of [esmDir, cjsDir]) {
      await fs.mkdir(path.dirname(path.join(out, lib, relPath)), { recursive: true });
      await fs.copyFile(file, path.join(out, lib, relPath));
    }
  }
}

// 3. CommonJS: convert module syntax only; everything else stays as tsc emitted it.
const relativeJs = /(\.{1,2}\/[^"'\n]*?)\.js(["'])/;
function toCjsSpecifiers(code, contexts) {
  return code.replace(
    new RegExp(`(${contexts})(\\s*)(["'])${relativeJs.source}`, 'g'),
    (_m, ctx, ws, q1, spec, q2) => `${ctx}${ws}${q1}${spec}.cjs${q2}`,
  );
}

function rewriteImportMeta(code, file) {
  // No import.meta in CommonJS: map the forms Node gives ESM to their CommonJS equivalents.
  const out = code
    .replace(/\bimport\.meta\.dirname\b/g, '__dirname')
    .replace(/\bimport\.meta\.filename\b/g, '__filename')
    .replace(/\bimport\.meta\.url\b/g, 'require("node:url").pathToFileURL(__filename).href');
  if (/\bimport\.meta\b/.test(out)) {
    problems.push(`${rel(file)}: uses import.meta beyond url/dirname/filename; cannot be built as CommonJS`);
  }
  return out;
}

const esmFiles = await walk(esmDir);
for (const file of esmFiles) {
  const target = path.join(cjsDir, path.relative(esmDir, file));
  if (file.endsWith('.d.ts')) {
    const dts = await fs.readFile(file, 'utf8');
    // Declarations must name other libs by package name; a path out of the lib would pull the
    // ESM declarations of another lib into a CommonJS program (or break outright once published).
    for (const m of dts.matchAll(/(?:from|import\(|import)\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      const resolved = path.resolve(path.dirname(file), m[1]);
      const lib = path.relative(esmDir, file).split(path.sep)[0];
      const internal =
        resolved === path.join(esmDir, 'core', 'internal.js') ||
        resolved === path.join(esmDir, path.relative(esmDir, resolved).split(path.sep)[0], 'light.js');
      if (!internal && !resolved.startsWith(path.join(esmDir, lib) + path.sep)) {
        problems.push(
          `${rel(file)}: declaration refers to "${m[1]}" outside its lib; export the type from the lib's index and import it by package name`,
        );
      }
    }
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(
      target.replace(/\.d\.ts$/, '.d.cts'),
      toCjsSpecifiers(dts, String.raw`\bfrom|\bimport\(|\bimport|\brequire\(`),
    );
  } else if (file.endsWith('.js')) {
    const code = rewriteImportMeta(await fs.readFile(file, 'utf8'), file);
    let out;
    try {
      out = await swc.transform(code, {
        filename: file,
        swcrc: false,
        configFile: false,
        isModule: true,
        sourceMaps: false,
        jsc: {
          parser: { syntax: 'ecmascript' },
          target: 'es2022',
          keepClassNames: true,
          externalHelpers: false,
        },
        module: { type: 'commonjs', strictMode: true, importInterop: 'swc' },
      });
    } catch (err) {
      problems.push(`${rel(file)}: SWC could not convert it to CommonJS: ${err.message ?? err}`);
      continue;
    }
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target.replace(/\.js$/, '.cjs'), toCjsSpecifiers(out.code, String.raw`\brequire\(`));
  }
}

// 4. Every path package.json promises must exist.
const pkg = JSON.parse(await fs.readFile(path.join(root, 'package.json'), 'utf8'));
const promised = new Set();
const collect = (v) => {
  if (typeof v === 'string') promised.add(v);
  else if (v && typeof v === 'object') Object.values(v).forEach(collect);
};
collect(pkg.exports);
collect(pkg.bin);
for (const file of await walk(path.join(root, 'dist'))) {
  if (
    /\.(c?js|d\.c?ts)$/.test(file) &&
    /["'](#internal|#light\/[a-z-]+)["']/.test(await fs.readFile(file, 'utf8'))
  )
    problems.push(`${rel(file)}: still imports #internal or #light (not rewritten to a relative path)`);
}
for (const field of ['main', 'types', 'module']) if (pkg[field]) promised.add(pkg[field]);
for (const target of promised) {
  if (target.includes('*')) continue;
  if (!(await exists(path.join(root, target))))
    problems.push(`package.json points at ${target}, which was not built`);
}

if (problems.length) {
  console.error(`build: ${problems.length} problem(s):\n  - ${problems.join('\n  - ')}`);
  process.exit(1);
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`build: dist/esm + dist/cjs for ${libs.join(', ')} in ${seconds}s`);
await keep();
/**
 * NESTJS_HUBTEL_BUILD_LOG (test/global-setup.mjs sets it): a line per build, compiled or copied, so
 * a test run can say how many times it compiled the same sources (test/global-teardown.mjs).
 */
function record(how) {
  const log = process.env.NESTJS_HUBTEL_BUILD_LOG;
  try {
    if (log) appendFileSync(log, `${app ? 'app' : 'package'}\t${how}\n`);
  } catch {
    // a count left out of the run's summary, not a failed build
  }
}
async function keep() {
  record('compiled');
  if (!cached) return;
  // Written aside, then renamed into place: a concurrent build never sees half of it.
  const aside = `${cached}.${process.pid}`;
  for (const dir of outputs)
    await fs.cp(path.join(root, 'dist', dir), path.join(aside, dir), { recursive: true });
  await fs.writeFile(path.join(aside, 'done'), '');
  await fs.rename(aside, cached).catch(() => fs.rm(aside, { recursive: true, force: true }));
  // The three newest builds are kept: the cache follows the sources, it does not collect them.
  const entries = await fs.readdir(cacheDir, { withFileTypes: true });
  const builds = await Promise.all(
    entries
      .filter((e) => e.isDirectory() && /^[0-9a-f]{16}$/.test(e.name))
      .map(async (e) => ({
        dir: path.join(cacheDir, e.name),
        at: (await fs.stat(path.join(cacheDir, e.name))).mtimeMs,
      })),
  );
  for (const { dir } of builds.sort((a, b) => b.at - a.at).slice(3))
    await fs.rm(dir, { recursive: true, force: true });
}
