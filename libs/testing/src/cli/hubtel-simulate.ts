#!/usr/bin/env node
// Answers --help and usage errors before the command (and Nest) loads; simulate.cli.ts runs it (in tests too).
import { answeredUsage } from '#light/sandbox';
import { SIMULATE_CLI_USAGE, SIMULATE_OPTIONS } from './cli.usage.js';

const argv = process.argv.slice(2);
const run = async () => {
  await import('reflect-metadata');
  const { runSimulateCli } = await import('./simulate.cli.js');
  return runSimulateCli(argv, process, (simulator) => {
    // A signal hangs up like the user would: the session is released before exiting.
    process.once('SIGTERM', () => simulator.interrupt());
    process.once('SIGINT', () => simulator.interrupt());
  });
};
void Promise.resolve(
  answeredUsage('hubtel-simulate', SIMULATE_CLI_USAGE, SIMULATE_OPTIONS, argv, process) ?? run(),
).then((exitCode) => process.exit(exitCode));
