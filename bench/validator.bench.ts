/*
 * Micro-benchmark of the compiled DTO validator (libs/core/src/validation) against what Nest's
 * ValidationPipe does per request (plainToInstance + class-validator validate), on the contract's
 * checkout web-callback body. CPU only, one process, no HTTP: it isolates the validation cost the
 * HTTP benchmark (issue 7) measures end to end.
 *
 *   node --import ./bench/loader/register.mjs bench/validator.bench.ts [--quick]
 *
 * Prints µs per operation for valid and invalid bodies, both compiler engines, and the speed-up.
 * Not a test: nothing here asserts timings.
 */
import { plainToInstance } from 'class-transformer';
import { validate, validateSync } from 'class-validator';
import { compileValidator } from '../libs/core/src/validation/validation.compiler.js';
import {
  CheckoutCallbackDto,
  validCheckoutCallback,
} from '../libs/core/src/validation/__fixtures__/validation-dtos.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 7;
const MIN_MS = quick ? 100 : 300;

let sink: unknown;

/** µs/op of one timed batch of at least MIN_MS. */
async function batch(
  run: (body: Record<string, unknown>) => unknown,
  bodies: Record<string, unknown>[],
  isAsync: boolean,
): Promise<number> {
  let ops = 0;
  let elapsed = 0;
  const start = process.hrtime.bigint();
  while (elapsed < MIN_MS) {
    for (let i = 0; i < bodies.length; i++) sink = isAsync ? await run(bodies[i]) : run(bodies[i]);
    ops += bodies.length;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return (elapsed * 1000) / ops;
}

// Pools of distinct parsed bodies, as a body parser hands them over; none of the validators
// mutates its input, so the pools are reused. Parsing is timed separately (it is the same for all).
const POOL = 1000;
const validText = JSON.stringify(validCheckoutCallback());
const invalid = validCheckoutCallback();
(invalid.Data as Record<string, unknown>).Amount = '12.50';
(invalid.Data as Record<string, unknown>).ClientReference = '';
const invalidText = JSON.stringify(invalid);
const validBodies = Array.from({ length: POOL }, () => JSON.parse(validText) as Record<string, unknown>);
const invalidBodies = Array.from({ length: POOL }, () => JSON.parse(invalidText) as Record<string, unknown>);

const codegen = compileValidator(CheckoutCallbackDto, { engine: 'codegen' });
const closures = compileValidator(CheckoutCallbackDto, { engine: 'closures' });
const options = { forbidUnknownValues: false };

interface Case {
  name: string;
  run: (body: Record<string, unknown>) => unknown;
  bodies: Record<string, unknown>[];
  isAsync?: boolean;
}
const PIPE = 'class-validator, ValidationPipe path (plainToInstance + await validate)';
const cases: Case[] = [
  { name: 'JSON.parse of the body (reference)', run: () => JSON.parse(validText), bodies: validBodies },
  { name: 'compiled, codegen engine', run: (body) => codegen(body), bodies: validBodies },
  { name: 'compiled, closures engine', run: (body) => closures(body), bodies: validBodies },
  {
    name: 'class-validator, plainToInstance + validateSync',
    run: (body) => validateSync(plainToInstance(CheckoutCallbackDto, body), options),
    bodies: validBodies,
  },
  {
    name: PIPE,
    run: (body) => validate(plainToInstance(CheckoutCallbackDto, body), options),
    bodies: validBodies,
    isAsync: true,
  },
  { name: 'invalid body: compiled, codegen engine', run: (body) => codegen(body), bodies: invalidBodies },
  { name: 'invalid body: compiled, closures engine', run: (body) => closures(body), bodies: invalidBodies },
  {
    name: 'invalid body: ' + PIPE,
    run: (body) => validate(plainToInstance(CheckoutCallbackDto, body), options),
    bodies: invalidBodies,
    isAsync: true,
  },
];

// Rounds interleave the cases so that noise from other processes spreads over all of them.
const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (const c of cases) await batch(c.run, c.bodies, !!c.isAsync); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const c of cases) samples.get(c.name)!.push(await batch(c.run, c.bodies, !!c.isAsync));
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const times = new Map([...samples].map(([name, values]) => [name, median(values)]));

console.log(
  `\nCheckout web-callback DTO (3 classes, 14 properties), Node ${process.version}, median of ${ROUNDS} interleaved rounds\n`,
);
console.log('| case | µs/op |');
console.log('|---|---:|');
for (const [name, value] of times) console.log(`| ${name} | ${value.toFixed(3)} |`);
const ratio = (slow: string, fast: string): string => (times.get(slow)! / times.get(fast)!).toFixed(0);
console.log(
  `\nspeed-up over the ValidationPipe path, valid body: codegen ${ratio(PIPE, 'compiled, codegen engine')}x, closures ${ratio(PIPE, 'compiled, closures engine')}x`,
);
console.log(
  `speed-up over the ValidationPipe path, invalid body: codegen ${ratio('invalid body: ' + PIPE, 'invalid body: compiled, codegen engine')}x, closures ${ratio('invalid body: ' + PIPE, 'invalid body: compiled, closures engine')}x`,
);
if (sink === Symbol.for('never')) console.log(sink);
