#!/usr/bin/env node
// Answers --help and usage errors before the command (and Nest) loads; trigger.cli.ts runs it (in tests too).
import { answeredUsage } from '#light/sandbox';
import { DEAD_LETTERS_OPTIONS, DEAD_LETTERS_USAGE, TRIGGER_CLI_USAGE, TRIGGER_OPTIONS } from './cli.usage.js';

const argv = process.argv.slice(2);
const answered =
  argv[0] === 'dead-letters'
    ? answeredUsage('hubtel-trigger', DEAD_LETTERS_USAGE, DEAD_LETTERS_OPTIONS, argv.slice(1), process)
    : answeredUsage('hubtel-trigger', TRIGGER_CLI_USAGE, TRIGGER_OPTIONS, argv, process);
if (answered !== undefined) process.exitCode = answered;
else
  void import('./trigger.cli.js').then(async ({ runTriggerCli }) => {
    process.exitCode = await runTriggerCli(argv, process);
  });
