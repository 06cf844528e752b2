// How a child process runs one of the repo's TypeScript files: from the JavaScript tree the test
// run compiled (HUBTEL_JS_TREE, set by test/global-setup.mjs: see compile-tree.mjs) when it holds
// the file, otherwise through the loader hooks (register.mjs), which need no build step.
// HUBTEL_CHILD_LOG, when set, gets a line per start: how many a run makes, and how.
import { appendFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
// Decorator metadata is recorded only if reflect-metadata is there before the first class loads.
const reflectMetadata = createRequire(import.meta.url).resolve('reflect-metadata');

/** The node arguments (before the program's own) that run `file`, a `.ts` path. */
export function tsNodeArgs(file) {
  const tree = process.env.HUBTEL_JS_TREE;
  const absolute = path.resolve(root, file);
  // A file of the repo, or of the tree itself (a compiled child starting another).
  const rel =
    tree && !path.relative(tree, absolute).startsWith('..')
      ? path.relative(tree, absolute)
      : path.relative(root, absolute);
  const compiled = tree && !rel.startsWith('..') && path.join(tree, rel.replace(/\.ts$/, '.js'));
  const js = compiled && process.env.HUBTEL_BENCH_DIST !== '1' && existsSync(compiled);
  if (process.env.HUBTEL_CHILD_LOG)
    appendFileSync(process.env.HUBTEL_CHILD_LOG, `${js ? 'js' : 'loader'}\t${rel}\n`);
  return js
    ? ['--import', reflectMetadata, compiled]
    : ['--import', path.join(here, 'register.mjs'), absolute];
}
