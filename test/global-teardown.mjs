// After the e2e specs: the workers' redis-servers stopped (test/global-setup.mjs); how many
// TypeScript children the run started, and how (bench/loader/entry.mjs), and how many redis-servers.
import { readFileSync, rmSync } from 'node:fs';

export default async function globalTeardown() {
  await globalThis.hubtelWorkerRedis?.dispose();
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
