#!/usr/bin/env node
// The `hubtel-sandbox` bin. The logic lives in sandbox.cli.ts so tests can run it in-process.
import { main } from './sandbox.cli.js';

void main();
