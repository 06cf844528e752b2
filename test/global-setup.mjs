// Before the e2e specs: the TypeScript their child processes run, compiled once for the run (see
// bench/loader/compile-tree.mjs). Should compiling fail, children run through the loader as before
// (as they do with HUBTEL_JS_TREE set empty: TypeScript lines in their stack traces).
import { rmSync } from 'node:fs';
import { compileTree } from '../bench/loader/compile-tree.mjs';

export default function globalSetup() {
  try {
    process.env.HUBTEL_JS_TREE ??= compileTree();
  } catch (error) {
    console.warn(`Children run through bench/loader: compiling them failed: ${error}`);
  }
  process.env.HUBTEL_CHILD_LOG = new URL(`../.tmp/child-starts.${process.pid}.log`, import.meta.url).pathname;
  rmSync(process.env.HUBTEL_CHILD_LOG, { force: true });
}
