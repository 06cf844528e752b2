/*
 * Micro-benchmark of DTO validation per body, on the suite's three inbound DTOs: the suite's
 * validator (class-validator-jsonschema → JSON Schema → Ajv, libs/core/src/validation) against
 * class-validator itself as Nest's ValidationPipe runs it (plainToInstance + validate). CPU only,
 * one process, no HTTP: it isolates the validation cost the HTTP benchmark measures end to end.
 *
 *   node --import ./bench/loader/register.mjs bench/validator.bench.ts [--quick]
 *
 * Prints µs per body for valid and invalid bodies. Not a test: nothing here asserts timings.
 */
import { plainToInstance } from 'class-transformer';
import { validate, validateSync } from 'class-validator';
import { compileValidator } from '#internal';
import { CheckoutCallbackDto } from 'nestjs-hubtel/checkout';
import { FulfillmentRequestDto, ServiceFlowRequestDto } from 'nestjs-hubtel/service-app';

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
    for (let i = 0; i < bodies.length; i++) sink = isAsync ? await run(bodies[i]!) : run(bodies[i]!);
    ops += bodies.length;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return (elapsed * 1000) / ops;
}

/** Each inbound DTO with a contract-shaped valid body and an invalid one (two bad fields). */
const DTOS: Array<{ name: string; dto: new () => object; valid: object; invalid: object }> = [
  {
    name: 'checkout callback',
    dto: CheckoutCallbackDto,
    valid: {
      ResponseCode: '0000',
      Status: 'Success',
      Data: {
        CheckoutId: '6f3a0e5c1b2d4e8f9a7b6c5d4e3f2a1b',
        SalesInvoiceId: '9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f',
        ClientReference: 'order-00042',
        Status: 'Success',
        Amount: 0.8,
        CustomerPhoneNumber: '233241234567',
        PaymentDetails: { MobileMoneyNumber: '233241234567', PaymentType: 'mobilemoney', Channel: 'mtn-gh' },
        Description: 'The MTN Mobile Money payment has been approved and processed successfully.',
      },
    },
    invalid: {
      ResponseCode: '0000',
      Data: { CheckoutId: '', ClientReference: 'order-00042', Status: 'Success', Amount: '12.50' },
    },
  },
  {
    name: 'service-flow step',
    dto: ServiceFlowRequestDto,
    valid: {
      Type: 'Initiation',
      Mobile: '233241234567',
      SessionId: '3c796dac28174f739de4262d08409c51',
      ServiceCode: '711',
      Message: '*711#',
      Operator: 'vodafone',
      Sequence: 1,
      ClientState: '',
      Platform: 'USSD',
    },
    invalid: { Type: 'hello', Mobile: '233241234567', SessionId: '', ServiceCode: '711', Message: 3 },
  },
  {
    name: 'fulfillment request',
    dto: FulfillmentRequestDto,
    valid: {
      SessionId: '3c796dac28174f739de4262d08409c51',
      OrderId: 'ac3307bcca7445618071e6b0e41b50b5',
      ExtraData: {},
      OrderInfo: {
        CustomerMobileNumber: '233241234567',
        Status: 'Paid',
        OrderDate: '2023-11-06T15:16:50.3581338+00:00',
        Currency: 'GHS',
        Subtotal: 1.0,
        Items: [{ ItemId: 'a', Name: 'x', Quantity: 1, UnitPrice: 1.0 }],
        Payment: {
          PaymentType: 'mobilemoney',
          AmountPaid: 1.0,
          PaymentDate: '2023-11-06T15:16:50Z',
          IsSuccessful: true,
        },
      },
    },
    invalid: { SessionId: '3c796dac28174f739de4262d08409c51', OrderId: '', ExtraData: [] },
  },
];

// Pools of distinct parsed bodies, as a body parser hands them over; none of the validators
// mutates its input, so the pools are reused.
const POOL = 1000;
const pool = (body: object): Record<string, unknown>[] => {
  const text = JSON.stringify(body);
  return Array.from({ length: POOL }, () => JSON.parse(text) as Record<string, unknown>);
};

interface Case {
  name: string;
  run: (body: Record<string, unknown>) => unknown;
  bodies: Record<string, unknown>[];
  isAsync?: boolean;
}
const cases: Case[] = [];
for (const { name, dto, valid, invalid } of DTOS) {
  const ajv = compileValidator(dto);
  for (const [kind, bodies] of [
    ['valid', pool(valid)],
    ['invalid', pool(invalid)],
  ] as const) {
    cases.push(
      { name: `${name}, ${kind}: Ajv (JSON Schema from the DTO)`, run: (body) => ajv(body), bodies },
      {
        name: `${name}, ${kind}: class-validator, plainToInstance + validateSync`,
        run: (body) => validateSync(plainToInstance(dto, body)),
        bodies,
      },
      {
        name: `${name}, ${kind}: class-validator, plainToInstance + await validate (ValidationPipe)`,
        run: (body) => validate(plainToInstance(dto, body)),
        bodies,
        isAsync: true,
      },
    );
  }
}

// Rounds interleave the cases so that noise from other processes spreads over all of them.
const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (const c of cases) await batch(c.run, c.bodies, !!c.isAsync); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const c of cases) samples.get(c.name)!.push(await batch(c.run, c.bodies, !!c.isAsync));
}
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(`\nDTO validation per body, Node ${process.version}, median of ${ROUNDS} interleaved rounds\n`);
console.log('| case | µs/body |');
console.log('|---|---:|');
for (const [name, values] of samples) console.log(`| ${name} | ${median(values).toFixed(2)} |`);
if (sink === Symbol.for('never')) console.log(sink);
