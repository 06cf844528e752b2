#!/usr/bin/env node
// Answers --help and usage errors before the sandbox (and Nest) loads; sandbox.cli.ts runs it (in tests too).
import { argsOrAnswer } from './sandbox.args.js';

const argv = process.argv.slice(2);
if (argsOrAnswer(argv, process)) void import('./sandbox.cli.js').then(({ main }) => main(argv, process));
