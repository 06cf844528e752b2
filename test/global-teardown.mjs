// After the e2e specs: the workers' redis-servers stopped (test/global-setup.mjs); how many
// TypeScript children the run started, and how (bench/loader/entry.mjs), and how many redis-servers;
// how many builds of the package and the example app were compiled and how many copied from the
// cache of the same sources (scripts/build.mjs): one compile of each per run is the aim.
import { readFileSync, rmSync } from 'node:fs';

export default async function globalTeardown() {
  await globalThis.hubtelWorkerRedis?.dispose();
  builds();
  const log = process.env.HUBTEL_CHILD_LOG;
  if (!log) return;
  let lines = [];
  try {
    lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } catch {
    return; // no child started
  }
  rmSync(log, { force: true });
  const count = (mode) => lines.filter((line) => line.startsWith(`${mode}\t`)).length;
  console.log(
    `\nTypeScript child processes started: ${count('js') + count('loader')} (${count('js')} from compiled JavaScript, ${count('loader')} through bench/loader); redis-servers started: ${count('redis')}`,
  );
}

function builds() {
  const log = process.env.NESTJS_HUBTEL_BUILD_LOG;
  let lines = [];
  try {
    lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } catch {
    return; // nothing built
  }
  rmSync(log, { force: true });
  const count = (what, how) => lines.filter((line) => line === `${what}\t${how}`).length;
  const of = (what) => `${count(what, 'compiled')} compiled, ${count(what, 'copied')} copied`;
  console.log(`\nBuilds: the package ${of('package')}; the example app ${of('app')}`);
}
