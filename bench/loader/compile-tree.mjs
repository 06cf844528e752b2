// Compiles the TypeScript that child processes run (libs/, src/, bench/, test/support/) once, with
// the loader's SWC options, into .tmp/js/<hash of the sources>/: a child then runs plain `node`
// there (entry.mjs), without the loader's off-thread hooks on every module it imports (Nest's
// included), which cost it about 60% more CPU. The tree's package.json maps the package's own
// names (`nestjs-hubtel[/x]`, `#internal`) as tsconfig `paths` and the loader do; the repo's
// node_modules is found from there as from the sources.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import swc from '@swc/core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIRS = ['libs', 'src', 'bench', 'test/support'];
const SWC_OPTIONS = JSON.parse(readFileSync(new URL('./swc-options.json', import.meta.url), 'utf8'));
const LIBS = ['sms', 'checkout', 'service-app', 'sandbox', 'testing', 'redis', 'bullmq', 'health', 'metrics'];

function* files(dir) {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'results') yield* files(rel);
    } else if (/\.(ts|mjs|json)$/.test(entry.name) && !/\.(d|spec|e2e-spec)\.ts$/.test(entry.name)) {
      yield rel;
    }
  }
}

/** Compiles the tree (unless a tree of the same sources is there) and returns its directory. */
export function compileTree() {
  const sources = DIRS.flatMap((dir) => [...files(dir)]).sort();
  const hash = createHash('sha256').update(`${swc.version}\0${JSON.stringify(SWC_OPTIONS)}`);
  const texts = new Map(sources.map((rel) => [rel, readFileSync(path.join(root, rel), 'utf8')]));
  for (const [rel, text] of texts) hash.update(`\0${rel}\0${text}`);
  const base = path.join(root, '.tmp', 'js');
  const dir = path.join(base, hash.digest('hex').slice(0, 16));
  if (existsSync(path.join(dir, 'package.json'))) return dir;

  // Built aside, then renamed: a run never sees half a tree (a concurrent run's rename wins).
  const partial = `${dir}.${process.pid}.partial`;
  for (const [rel, text] of texts) {
    const out = path.join(partial, rel.replace(/\.ts$/, '.js'));
    mkdirSync(path.dirname(out), { recursive: true });
    if (!rel.endsWith('.ts')) cpSync(path.join(root, rel), out);
    else writeFileSync(out, swc.transformSync(text, { ...SWC_OPTIONS, filename: rel }).code);
  }
  const exports = { '.': './libs/core/src/index.js' };
  for (const lib of LIBS) exports[`./${lib}`] = `./libs/${lib}/src/index.js`;
  const manifest = {
    name: 'nestjs-hubtel',
    private: true,
    type: 'module',
    exports,
    imports: { '#internal': './libs/core/src/internal.js', '#light/*': './libs/*/src/light.js' },
  };
  writeFileSync(path.join(partial, 'package.json'), JSON.stringify(manifest, null, 2));
  try {
    renameSync(partial, dir);
  } catch {
    rmSync(partial, { recursive: true, force: true });
  }
  // Trees of older sources go after a day (a concurrent run may still be using a recent one).
  for (const old of readdirSync(base)) {
    const oldDir = path.join(base, old);
    if (oldDir !== dir && Date.now() - statSync(oldDir).mtimeMs > 86_400_000)
      rmSync(oldDir, { recursive: true, force: true });
  }
  return dir;
}
