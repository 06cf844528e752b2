#!/usr/bin/env node
// The `hubtel-simulate` bin. The logic lives in simulate.cli.ts so tests can run it in-process.
import 'reflect-metadata';
import { runSimulateCli } from './simulate.cli.js';

void runSimulateCli(
  process.argv.slice(2),
  { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
  (simulator) => {
    // A signal hangs up like the user would: the session is released before exiting.
    process.once('SIGTERM', () => simulator.interrupt());
    process.once('SIGINT', () => simulator.interrupt());
  },
).then((exitCode) => process.exit(exitCode));
