#!/usr/bin/env node
// The `hubtel-sandbox` bin: --help and usage errors answered before the sandbox (and Nest) loads.
// The logic lives in sandbox.cli.ts so tests can run it in-process.
import { argsOrAnswer } from './sandbox.args.js';

const argv = process.argv.slice(2);
if (argsOrAnswer(argv, process)) void import('./sandbox.cli.js').then(({ main }) => main(argv, process));
