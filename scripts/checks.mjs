#!/usr/bin/env node
// `npm test`'s static checks side by side: type-check, lint, format check. tsc alone keeps one core
// busy, so on two cores the three take about as long as the type-check. Each one's output is
// printed whole when it ends (no interleaving); the run fails if any of them failed.
import { spawn } from 'node:child_process';

const results = await Promise.all(
  ['typecheck', 'lint', 'format:check'].map((name) =>
    new Promise((resolve) => {
      const child = spawn('npm', ['run', '--silent', name], {
        shell: process.platform === 'win32',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.on('error', (error) => resolve({ name, code: 1, output: String(error) }));
      child.on('close', (code) => resolve({ name, code, output }));
    }).then((result) => {
      process.stdout.write(`> npm run ${result.name}: exit ${result.code}\n${result.output}`);
      return result;
    }),
  ),
);
const failed = results.filter((result) => result.code !== 0).map((result) => result.name);
if (failed.length > 0) {
  console.error(`npm test: ${failed.join(', ')} failed`);
  process.exit(1);
}
