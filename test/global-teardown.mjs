// After the e2e specs: how many TypeScript children the run started, and how (bench/loader/entry.mjs).
import { readFileSync, rmSync } from 'node:fs';

export default function globalTeardown() {
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
    `\nTypeScript child processes started: ${lines.length} (${count('js')} from compiled JavaScript, ${count('loader')} through bench/loader)`,
  );
}
