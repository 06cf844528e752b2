// ESM loader hooks (Node >= 20.6): map the package's own names to libs/*/src (like tsconfig `paths`),
// resolve the `.js` specifiers of NodeNext sources to their `.ts` files, and compile `.ts` with SWC.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import swc from '@swc/core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const LIBS = {
  '': 'core',
  '/sms': 'sms',
  '/checkout': 'checkout',
  '/service-app': 'service-app',
  '/sandbox': 'sandbox',
  '/testing': 'testing',
  '/redis': 'redis',
  '/bullmq': 'bullmq',
  '/health': 'health',
  '/metrics': 'metrics',
};
// `HUBTEL_BENCH_DIST=1` runs against the built package (dist/esm) instead of the sources.
const useDist = process.env.HUBTEL_BENCH_DIST === '1';
const libsUrl = pathToFileURL(path.join(root, 'libs')).href + '/';

// Shared with bench/lib/profile.ts, which recompiles a file to map profile positions back to it.
const SWC_OPTIONS = {
  ...JSON.parse(readFileSync(new URL('./swc-options.json', import.meta.url), 'utf8')),
  sourceMaps: 'inline',
};

// Every process started from the sources (the tests start hundreds: app replicas, the sandbox CLI,
// the CLIs) would compile the same files again; the output is kept by the hash of what produced
// it (SWC's version, the options, the file's name and text), so an edit is never served stale.
const cacheDir =
  process.env.HUBTEL_SWC_CACHE ??
  path.join(
    tmpdir(),
    'nestjs-hubtel-swc',
    createHash('sha256')
      .update(`${swc.version}\0${JSON.stringify(SWC_OPTIONS)}`)
      .digest('hex')
      .slice(0, 16),
  );

async function compile(filename) {
  const source = readFileSync(filename, 'utf8');
  const key = createHash('sha256').update(`${filename}\0${source}`).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    // not compiled yet
  }
  const { code } = await swc.transform(source, { ...SWC_OPTIONS, filename });
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Written aside, then renamed: a process reading it never sees half a file.
    const partial = `${cached}.${process.pid}.${Date.now()}`;
    writeFileSync(partial, code);
    renameSync(partial, cached);
  } catch {
    // a read-only or full temp dir: compile every time
  }
  return code;
}

export async function resolve(specifier, context, next) {
  if (specifier === '#internal') {
    const file = useDist ? ['dist', 'esm', 'core', 'internal.js'] : ['libs', 'core', 'src', 'internal.ts'];
    return { url: pathToFileURL(path.join(root, ...file)).href, shortCircuit: true };
  }
  const light = /^#light\/([a-z-]+)$/.exec(specifier);
  if (light) {
    const file = useDist ? ['dist', 'esm', light[1], 'light.js'] : ['libs', light[1], 'src', 'light.ts'];
    return { url: pathToFileURL(path.join(root, ...file)).href, shortCircuit: true };
  }
  const pkg = /^nestjs-hubtel(\/[a-z-]+)?$/.exec(specifier);
  if (pkg && !useDist) {
    const lib = LIBS[pkg[1] ?? ''];
    const file = lib?.endsWith('.ts') ? lib : `${lib}/src/index.ts`;
    if (lib) return { url: pathToFileURL(path.join(root, 'libs', file)).href, shortCircuit: true };
  }
  const parent = context.parentURL;
  if (
    parent?.startsWith('file:') &&
    parent.endsWith('.ts') &&
    (specifier.startsWith('./') || specifier.startsWith('../'))
  ) {
    // A bench or test file reaching into a lib's sources (a name the lib does not export) gets
    // the built file under HUBTEL_BENCH_DIST=1, so that it shares the package's instances.
    const libFile = useDist && !parent.startsWith(libsUrl) ? new URL(specifier, parent).href : '';
    if (libFile.startsWith(libsUrl)) {
      const [lib, src, ...rest] = libFile.slice(libsUrl.length).split('/');
      if (src === 'src')
        return next(pathToFileURL(path.join(root, 'dist', 'esm', lib, ...rest)).href, context);
    }
    if (specifier.endsWith('.js')) {
      const candidate = new URL(specifier.slice(0, -3) + '.ts', parent);
      if (existsSync(fileURLToPath(candidate))) return { url: candidate.href, shortCircuit: true };
    } else if (!/\.[cm]?[jt]s$|\.json$/.test(specifier)) {
      const candidate = new URL(specifier + '.ts', parent);
      if (existsSync(fileURLToPath(candidate))) return { url: candidate.href, shortCircuit: true };
    }
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url.startsWith('file:') && url.endsWith('.ts') && !url.includes('/node_modules/')) {
    return { format: 'module', source: await compile(fileURLToPath(url)), shortCircuit: true };
  }
  return next(url, context);
}
