// Before the e2e specs: the TypeScript their child processes run, compiled once for the run (see
// bench/loader/compile-tree.mjs). Should compiling fail, children run through the loader as before
// (as they do with HUBTEL_JS_TREE set empty: TypeScript lines in their stack traces).
// The builds the run makes are logged (scripts/build.mjs, NESTJS_HUBTEL_BUILD_LOG).
// Then one redis-server per Jest worker (test/support/redis-server.ts, `redisDatabase`).
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileTree } from '../bench/loader/compile-tree.mjs';

export default async function globalSetup(globalConfig) {
  try {
    process.env.HUBTEL_JS_TREE ??= compileTree();
  } catch (error) {
    console.warn(`Children run through bench/loader: compiling them failed: ${error}`);
  }
  process.env.HUBTEL_CHILD_LOG = new URL(`../.tmp/child-starts.${process.pid}.log`, import.meta.url).pathname;
  rmSync(process.env.HUBTEL_CHILD_LOG, { force: true });
  // The builds of the package and the example app (scripts/build.mjs): not HUBTEL_-named, as the
  // tests running a user's shell drop those (docs-commands) but keep NESTJS_HUBTEL_BUILD_CACHE.
  process.env.NESTJS_HUBTEL_BUILD_LOG = new URL(
    `../.tmp/builds.${process.pid}.log`,
    import.meta.url,
  ).pathname;
  mkdirSync(path.dirname(process.env.NESTJS_HUBTEL_BUILD_LOG), { recursive: true });
  rmSync(process.env.NESTJS_HUBTEL_BUILD_LOG, { force: true });
  if (!process.env.HUBTEL_JS_TREE) return; // each file starts its own
  const support = path.join(process.env.HUBTEL_JS_TREE, 'test', 'support', 'redis-server.js');
  const { redisBinary, startWorkerServers } = await import(pathToFileURL(support).href);
  if (!redisBinary.available) return;
  const servers = await startWorkerServers(globalConfig.maxWorkers);
  process.env.HUBTEL_TEST_REDIS = servers.ports;
  globalThis.hubtelWorkerRedis = servers; // for test/global-teardown.mjs
}
