// ESM loader hooks (Node >= 20.6): map the package's own names to libs/*/src (like tsconfig `paths`),
// resolve the `.js` specifiers of NodeNext sources to their `.ts` files, and compile `.ts` with SWC.
import { existsSync, readFileSync } from 'node:fs';
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

export async function resolve(specifier, context, next) {
  if (specifier === '#internal') {
    const file = useDist ? ['dist', 'esm', 'core', 'internal.js'] : ['libs', 'core', 'src', 'internal.ts'];
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
    const filename = fileURLToPath(url);
    const { code } = await swc.transform(readFileSync(filename, 'utf8'), { ...SWC_OPTIONS, filename });
    return { format: 'module', source: code, shortCircuit: true };
  }
  return next(url, context);
}
