#!/usr/bin/env node
// The `hubtel-trigger` bin. --help and malformed arguments are answered from the usage alone; the
// command (and Nest with it) loads only to run. The logic lives in trigger.cli.ts so tests can run it in-process.
import { answeredUsage } from './cli.args.js';
import { DEAD_LETTERS_OPTIONS, DEAD_LETTERS_USAGE, TRIGGER_CLI_USAGE, TRIGGER_OPTIONS } from './cli.usage.js';

const argv = process.argv.slice(2);
const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
const answered =
  argv[0] === 'dead-letters'
    ? answeredUsage('hubtel-trigger', DEAD_LETTERS_USAGE, DEAD_LETTERS_OPTIONS, argv.slice(1), io)
    : answeredUsage('hubtel-trigger', TRIGGER_CLI_USAGE, TRIGGER_OPTIONS, argv, io);
if (answered !== undefined) process.exitCode = answered;
else
  void import('./trigger.cli.js').then(async ({ runTriggerCli }) => {
    process.exitCode = await runTriggerCli(argv, io);
  });
