#!/usr/bin/env node
// The `hubtel-sandbox` bin. --help and usage errors are answered by sandbox.args.ts alone; the
// sandbox (and Nest with it) loads only to run. The logic lives in sandbox.cli.ts so tests can run it in-process.
import { answeredUsage } from './sandbox.args.js';

const argv = process.argv.slice(2);
if (!answeredUsage(argv, process)) void import('./sandbox.cli.js').then(({ main }) => main(argv));
