#!/usr/bin/env node
// `npm test`: the static checks (scripts/checks.mjs) and the whole Jest suite side by side; the
// arguments go to Jest. The checks run at a lower priority: they take the CPU that Jest's end-to-end
// specs leave idle while they wait on child processes and timers, instead of holding Jest back
// for their whole length. The run fails if either failed.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';

function run(args, { nice = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    if (nice && child.pid !== undefined) {
      try {
        setPriority(child.pid, 10); // its own children (tsc, eslint, prettier) inherit it
      } catch {
        // not permitted here: it runs at the normal priority
      }
    }
    child.on('error', () => resolve(1));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const [checks, jest] = await Promise.all([
  run(['scripts/checks.mjs'], { nice: true }),
  run([
    '--experimental-vm-modules',
    '--disable-warning=ExperimentalWarning',
    'node_modules/jest/bin/jest.js',
    ...process.argv.slice(2),
  ]),
]);
if (checks !== 0) console.error('npm test: the static checks failed (their output is above)');
process.exit(checks !== 0 ? checks : jest);
