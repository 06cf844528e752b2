import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import fc from 'fast-check';
import { compileValidator, type CompileValidatorOptions } from '#internal';
import { CheckoutCallbackDto } from 'nestjs-hubtel/checkout';
import { FulfillmentRequestDto, ServiceFlowRequestDto } from 'nestjs-hubtel/service-app';
import { CreateInvoiceDto } from '../libs/checkout/src/invoices/invoice.dto.js';
import {
  declareCredentials,
  HubtelHttpOptions,
  HubtelShutdownOptions,
} from '../libs/core/src/options/hubtel-options.dto.js';
import {
  CheckoutHandlerOptions,
  CheckoutReconciliationOptions,
  CheckoutVerificationOptions,
} from '../libs/checkout/src/checkout.option-sections.js';
import { CheckoutModuleOptions } from '../libs/checkout/src/checkout.options.js';
import {
  ServiceAppMessagesOptions,
  ServiceAppStatusCheckOptions,
  ServiceAppVerificationOptions,
} from '../libs/service-app/src/service-app.option-sections.js';
import { ServiceAppModuleOptions } from '../libs/service-app/src/service-app.options.js';
import { SandboxOptionsDto } from '../libs/sandbox/src/sandbox.options.dto.js';
import { SmsModuleOptions } from '../libs/sms/src/sms.options.js';
import { SandboxPayBodyDto, SandboxServicePaymentBodyDto } from '../libs/sandbox/src/admin.dto.js';
import { dtoJsonSchema, type DtoShape } from '../libs/core/src/validation/validation.schema.js';

/*
 * Differential proof: on thousands of generated JSON bodies per DTO — the inbound bodies, the
 * sandbox's admin bodies, createInvoice's input, the shared module options; missing fields, wrong
 * types, extra fields, lengths at and around every limit, unicode including surrogates and
 * variation selectors, nested shapes — the suite's validator (JSON Schema + Ajv) accepts exactly the bodies
 * class-validator accepts when run as a `ValidationPipe` runs it (`plainToInstance`, then
 * `validate`: default options, or whitelist + forbidNonWhitelisted where unknown fields are
 * refused), and names the same bad fields.
 */

/**
 * Bodies per DTO, by how deep its DTOs nest: the corpus must reach every (field, class-validator
 * constraint) pair, and an accepted body, on each DTO. Measured over two seeds at 3,000 bodies
 * each: a flat DTO reached all its pairs within 300 bodies, a DTO nesting one level within 750,
 * and only the deeper ones (a constraint two levels down, e.g. the callback's
 * `Data.PaymentDetails`) needed up to 3,000. Each budget leaves that at least twice over.
 */
const RUNS = Number(process.env.HUBTEL_DIFFERENTIAL_RUNS ?? 3_000);
const RUNS_BY_DEPTH = [RUNS / 3, RUNS / 2, RUNS];
const LIMITS = [0, 1, 16, 32, 64, 128, 256, 1_024, 4_096];

/**
 * Characters where class-validator's length (validator.js) and a naive one disagree, or any code
 * point but a lone surrogate: fast-check's `binary` unit drawn as it draws it (an index onto the
 * code points), without the 1.1M-entry reverse map its `fc.string` builds first.
 */
const unit = fc.oneof(
  fc.constantFrom('a', 'Z', ' ', 'é', '\u{1F600}', '\uFE0F', '\uFE0E', '\uD800', '\uDC00', '\u0000', '\n'),
  fc.nat({ max: 0x10ffff - 0x800 }).map((i) => String.fromCodePoint(i < 0xd800 ? i : i + 0x800)),
);
/** One string arbitrary per length, built once: building one costs more than drawing from it. */
const ofLength = new Map<number, fc.Arbitrary<string>>();
const edgeString = fc
  .constantFrom(...LIMITS)
  .chain((limit) => fc.integer({ min: Math.max(0, limit - 2), max: limit + 2 }))
  .chain((length) => {
    let strings = ofLength.get(length);
    if (!strings) ofLength.set(length, (strings = fc.string({ unit, minLength: length, maxLength: length })));
    return strings;
  });
const typeWord = fc.constantFrom(
  'initiation',
  'Response',
  'RELEASE',
  'timeout',
  'Initiation ',
  'respons',
  'release\n',
  'InItIaTiOn',
);
const scalar = fc.oneof(
  edgeString,
  typeWord,
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', null, true, false, 0, -0, -1, 0.5, 1e21, -1e-7, 12.345),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);
/** Whether a JSON value holds a `__proto__` key at any depth (refused before validation, as extraKey says). */
function holdsProtoKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, child]) => key === '__proto__' || holdsProtoKey(child));
}
/** Any JSON value a field may hold: fast-check's, less the `__proto__` keys it generates on purpose. */
const jsonAny = fc.jsonValue({ maxDepth: 2 }).filter((value) => !holdsProtoKey(value));
/** Keys a body may carry besides the declared ones (not `__proto__` nor `constructor`: refused before validation). */
const extraKey = fc.oneof(
  fc
    .string({ minLength: 1, maxLength: 12 })
    .filter((key) => !(key in Object.prototype) && key !== '__proto__'),
  // Object.prototype names: class-transformer never copies them, so class-validator never sees them.
  fc.constantFrom('toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'),
);

/** Bodies of a DTO: each declared key missing or holding anything (nested DTOs included), plus extra keys. */
function bodyOf(shapes: Map<string, DtoShape>, name: string, depth: number): fc.Arbitrary<unknown> {
  const shape = shapes.get(name)!;
  const field = (key: string): fc.Arbitrary<unknown> => {
    const nested = shape.nested[key];
    const child = nested && depth < 3 ? bodyOf(shapes, nested, depth + 1) : undefined;
    return fc.oneof(scalar, jsonAny, ...(child ? [child, fc.array(child, { maxLength: 2 })] : []));
  };
  const declared = fc.record(Object.fromEntries(shape.keys.map((key) => [key, field(key)])), {
    requiredKeys: [],
  });
  return withExtras(declared);
}

/** How many levels of DTOs nest under `name` (0: a flat DTO). */
function depthOf(shapes: Map<string, DtoShape>, name: string): number {
  const below = Object.values(shapes.get(name)!.nested).map((child) => 1 + depthOf(shapes, child));
  return Math.max(0, ...below);
}

/** Extra keys in one body of three (an admin body refuses them, so more would hide the rest). */
function withExtras(body: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const extras = fc.oneof(
    { arbitrary: fc.constant({}), weight: 2 },
    {
      arbitrary: fc.dictionary(extraKey, fc.oneof(scalar, jsonAny), {
        minKeys: 1,
        maxKeys: 3,
      }),
      weight: 1,
    },
  );
  return fc.tuple(body, extras).map(([own, extra]) => ({ ...extra, ...own }));
}

/**
 * A valid sample with each field (at every level) kept, replaced by anything, or removed: bodies
 * near the line, so that many pass and the refusals are often a single field.
 */
function mutated(sample: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  return mutatedFields(sample, keepWeight(sample));
}

/**
 * How often a field is kept, against 1 for replaced and 1 for removed: about one field in seven
 * changes, but in a sample of many fields (the module options have thirty) about one in all the
 * sample changes, so that a steady share of bodies stays valid whatever the sample's size.
 */
function keepWeight(sample: Record<string, unknown>): number {
  const count = (value: Record<string, unknown>): number =>
    Object.values(value).reduce<number>(
      (sum, child) =>
        sum + (child !== null && typeof child === 'object' ? 1 + count(child as Record<string, unknown>) : 1),
      0,
    );
  return Math.max(12, Math.round(1.5 * count(sample)));
}

function mutatedFields(sample: Record<string, unknown>, keep: number): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(sample).map(([key, value]) => {
    const kept: fc.Arbitrary<unknown> =
      value !== null && typeof value === 'object'
        ? mutatedFields(value as Record<string, unknown>, keep)
        : fc.constant(value);
    const anything = fc.oneof(scalar, jsonAny);
    return [
      key,
      fc.oneof(
        { arbitrary: kept, weight: keep },
        { arbitrary: anything, weight: 1 },
        { arbitrary: fc.constant(undefined), weight: 1 },
      ),
    ] as const;
  });
  return withExtras(
    fc.record(Object.fromEntries(entries)).map((body) => {
      for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
      return body;
    }),
  );
}

/** What reaches a validator: parsed JSON (no undefined, no -0 survives, keys as sent). */
const asJson = (body: unknown): unknown => JSON.parse(JSON.stringify(body)) as unknown;

/** class-validator's bad fields, dotted; under a field that fails itself, its children are not counted. */
function classValidatorFields(errors: ValidationError[], path = ''): string[] {
  const fields: string[] = [];
  for (const error of errors) {
    const field = path ? `${path}.${error.property}` : error.property;
    if (error.constraints && Object.keys(error.constraints).length > 0) fields.push(field);
    else fields.push(...classValidatorFields(error.children ?? [], field));
  }
  return fields;
}

/** Each DTO with a valid body (every field present); the admin body refuses unknown fields. */
const DTOS: Array<[string, new () => object, Record<string, unknown>, CompileValidatorOptions?]> = [
  [
    'CheckoutCallbackDto',
    CheckoutCallbackDto,
    {
      ResponseCode: '0000',
      Status: 'Success',
      Data: {
        CheckoutId: 'c1',
        SalesInvoiceId: 's1',
        ClientReference: 'r1',
        Status: 'Success',
        Amount: 0.8,
        CustomerPhoneNumber: '233241234567',
        PaymentDetails: { MobileMoneyNumber: '233241234567', PaymentType: 'mobilemoney', Channel: 'mtn-gh' },
        Description: 'ok',
      },
    },
  ],
  [
    'ServiceFlowRequestDto',
    ServiceFlowRequestDto,
    {
      Type: 'Initiation',
      Message: '*711#',
      ServiceCode: '711',
      Operator: 'mtn',
      ClientState: '',
      Mobile: '233241234567',
      SessionId: 's1',
      Sequence: 1,
    },
  ],
  [
    'FulfillmentRequestDto',
    FulfillmentRequestDto,
    { OrderId: 'o1', SessionId: 's1', ExtraData: { a: 1 }, OrderInfo: { Status: 'Paid', Items: [] } },
  ],
  [
    'SandboxPayBodyDto (unknown fields refused)',
    SandboxPayBodyDto,
    {
      outcome: 'paid',
      phone: '0241234567',
      channel: 'mtn-gh',
      deliver: true,
      fault: {
        drop: false,
        duplicate: 2,
        concurrent: false,
        delayMs: 10,
        amount: 1,
        checkoutId: 'c1',
        forge: false,
      },
    },
    { forbidUnknown: true },
  ],
  [
    'SandboxServicePaymentBodyDto (unknown fields refused)',
    SandboxServicePaymentBodyDto,
    { amount: 12.5, orderId: 'o1' },
    { forbidUnknown: true },
  ],
  [
    'HubtelHttpOptions (module options)',
    HubtelHttpOptions,
    {
      timeoutMs: 15_000,
      retry: { maxAttempts: 3, baseDelayMs: 250, maxDelayMs: 5_000 },
      defaultCountryCode: '233',
    },
  ],
  ['a key pair (module options)', declareCredentials(), { clientId: 'id', clientSecret: 'secret' }],
  [
    'SmsModuleOptions (module options)',
    SmsModuleOptions,
    {
      clientId: 'id',
      clientSecret: 'secret',
      timeoutMs: 15_000,
      retry: { maxAttempts: 3, baseDelayMs: 250, maxDelayMs: 5_000 },
      senderId: 'Shop',
      maxSenderLength: 11,
      maxContentLength: 160,
      batchSize: 100,
      concurrency: 4,
    },
  ],
  [
    'CheckoutReconciliationOptions (checkout options)',
    CheckoutReconciliationOptions,
    {
      enabled: true,
      delayMs: 60_000,
      intervalMs: 60_000,
      maxIntervalMs: 3_600_000,
      giveUpAfterMs: 86_400_000,
      concurrency: 4,
    },
  ],
  [
    'CheckoutVerificationOptions (checkout options)',
    CheckoutVerificationOptions,
    {
      amountTolerance: { absolute: 0.5, percent: 1 },
      allowOverpayment: false,
      confirmWithStatusCheck: true,
      recheck: { attempts: 2, delayMs: 1_000, maxDelayMs: 5_000 },
    },
  ],
  ['HubtelShutdownOptions (module options)', HubtelShutdownOptions, { shutdownGraceMs: 5_000 }],
  [
    'CheckoutHandlerOptions (checkout options)',
    CheckoutHandlerOptions,
    {
      retry: { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 30_000, deadlineMs: 3_600_000 },
      recordTtlMs: 86_400_000,
      shutdownGraceMs: 5_000,
    },
  ],
  [
    'CheckoutModuleOptions (checkout options)',
    CheckoutModuleOptions,
    {
      clientId: 'id',
      clientSecret: 'secret',
      timeoutMs: 15_000,
      retry: { maxAttempts: 3, baseDelayMs: 250, maxDelayMs: 5_000 },
      merchantAccountNumber: '2017101',
      posSalesId: 'POS_1-a',
      descriptionSpecialCharacters: 'strip',
      reconciliation: { enabled: true, delayMs: 60_000 },
      verification: { allowOverpayment: false, recheck: { attempts: 2 } },
      handlers: { retry: { maxAttempts: 5 }, recordTtlMs: 86_400_000, shutdownGraceMs: 5_000 },
      invoiceTtlMs: 2_592_000_000,
      maxCallbackBodyBytes: 65_536,
    },
  ],
  [
    'ServiceAppStatusCheckOptions (service-app options)',
    ServiceAppStatusCheckOptions,
    { clientId: 'id', clientSecret: 'secret', posSalesId: '11684', timeoutMs: 15_000 },
  ],
  [
    'ServiceAppVerificationOptions (service-app options)',
    ServiceAppVerificationOptions,
    {
      enabled: true,
      recheckForMs: 600_000,
      recheckDelay: { baseDelayMs: 2_000, maxDelayMs: 60_000 },
      amountTolerance: 0.5,
    },
  ],
  [
    'ServiceAppModuleOptions (service-app options)',
    ServiceAppModuleOptions,
    {
      callbackCredentials: { clientId: 'id', clientSecret: 'secret' },
      callbackTimeoutMs: 10_000,
      callbackRetry: { baseDelayMs: 2_000, maxDelayMs: 300_000, deadlineMs: 3_600_000 },
      fulfillmentRetry: { maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 60_000 },
      sessionTtlMs: 600_000,
      sessionStartTtlMs: 60_000,
      cartTtlMs: 600_000,
      stepBudgetMs: 4_000,
      requireCart: true,
      statusCheck: { clientId: 'id', clientSecret: 'secret', posSalesId: '11684' },
      verification: { enabled: true, amountTolerance: 0 },
      maxPendingSessions: 1_000,
      defaultCountryCode: '233',
      shutdownGraceMs: 5_000,
    },
  ],
  [
    'ServiceAppMessagesOptions (service-app options, unknown fields refused)',
    ServiceAppMessagesOptions,
    { sessionExpired: 'Dial again.', busy: 'Busy.', released: '', tooShort: 'At least {min}.' },
    { forbidUnknown: true },
  ],
  [
    'SandboxOptionsDto (sandbox options)',
    SandboxOptionsDto,
    {
      port: 0,
      posSalesId: '2000000',
      dashboard: true,
      recordLimit: 10_000,
      credentials: {
        sms: { clientId: 'id', clientSecret: 'secret' },
        api: { clientId: 'a', clientSecret: 'b' },
      },
      sms: { maxRecipients: 100, rate: 0.03, deliveryDelayMs: 0 },
      checkout: { chargeRate: 0.01, minAmount: 1 },
    },
  ],
  [
    'CreateInvoiceDto (createInvoice input)',
    CreateInvoiceDto,
    {
      totalAmount: 10.5,
      description: 'Two tickets',
      clientReference: 'order-1',
      callbackUrl: 'https://shop.test/cb',
      returnUrl: 'https://shop.test/ok',
      cancellationUrl: 'https://shop.test/no',
      payeeName: 'Ama',
      payeeMobileNumber: '0241234567',
      payeeEmail: 'ama@shop.test',
      merchantAccountNumber: '11684',
      metadata: { order: 1 },
    },
  ],
];

describe.each(DTOS)('%s: the validator agrees with class-validator', (_name, dto, sample, options = {}) => {
  const { root, shapes } = dtoJsonSchema(dto);
  const runs = RUNS_BY_DEPTH[Math.min(depthOf(shapes, root), 2)]!;
  const ours = compileValidator(dto, options);
  // A user's ValidationPipe: default options, or whitelist + forbidNonWhitelisted for forbidUnknown.
  const pipeOptions = options.forbidUnknown ? { whitelist: true, forbidNonWhitelisted: true } : {};
  const reference = async (body: unknown): Promise<string[]> =>
    classValidatorFields(await validate(plainToInstance(dto, body) as object, pipeOptions)).sort();

  it(`on ${runs} generated bodies`, async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(bodyOf(shapes, root, 0), mutated(sample)).map(asJson), async (body) => {
        const expected = await reference(body);
        const result = ours(body);
        if (result.ok) accepted++;
        const fields = result.ok ? [] : result.issues.map((issue) => issue.field).sort();
        // Jest's matcher only on a difference: thousands of passing calls cost more than the rest.
        if (JSON.stringify(fields) !== JSON.stringify(expected)) expect(fields).toEqual(expected);
      }),
      { numRuns: runs },
    );
    // The corpus must reach both sides of the line, or agreeing would prove little.
    expect(accepted).toBeGreaterThan(runs / 20);
    expect(accepted).toBeLessThan(runs * 0.9);
  }, 180_000); // thousands of class-validator runs: slow on a busy machine

  it('on bodies that are not objects (refused by both; class-validator throws on null)', async () => {
    for (const body of [null, 'x', 7, true, [], [{}]]) {
      expect(ours(body).ok).toBe(false);
      const refused = await (async () => validate(plainToInstance(dto, body) as object, pipeOptions))().then(
        (errors) => errors.length > 0,
        () => true,
      );
      expect(refused).toBe(true);
    }
  });
});
