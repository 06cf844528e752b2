#!/usr/bin/env node
// The `hubtel-trigger` bin. The logic lives in trigger.cli.ts so tests can run it in-process.
import { runTriggerCli } from './trigger.cli.js';

void runTriggerCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
}).then((exitCode) => {
  process.exitCode = exitCode;
});
