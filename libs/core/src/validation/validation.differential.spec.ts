/*
 * Differential tests: for every input, the compiled validator (both engines) must report exactly
 * the {field, message} pairs that `validateSync(plainToInstance(Dto, input), { forbidUnknownValues:
 * false })` reports (its error tree flattened to dotted fields), and for accepted input return the
 * declared properties of the instance class-transformer builds. Inputs: hand-written edge cases and
 * seeded random mutations of valid bodies.
 */
import type { Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import type { ValidationIssue } from '../errors/hubtel.errors.js';
import {
  CheckoutCallbackDto,
  EverythingDto,
  HostDto,
  TreeNodeDto,
  validCheckoutCallback,
  validEverything,
} from './__fixtures__/validation-dtos.js';
import { compileValidator } from './validation.compiler.js';
import { flattenValidationErrors } from './validation.runtime.js';
import type { CompiledValidator } from './validation.types.js';

type Json = Record<string, unknown>;

// ----------------------------------------------------------------------------------------------
// Reference side.

function referenceIssues(dto: Type<unknown>, input: unknown): ValidationIssue[] {
  return flattenValidationErrors(
    validateSync(plainToInstance(dto, input) as object, { forbidUnknownValues: false }),
  );
}

/** The declared properties of a class-transformer instance, recursively, as plain data. */
function declaredNames(cls: Function): string[] {
  const names = getMetadataStorage()
    .getTargetValidationMetadatas(cls, undefined as unknown as string, false, false)
    .map((metadata) => metadata.propertyName)
    .filter((name) => typeof name === 'string');
  return [...new Set(names)];
}

function project(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(project);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const names = declaredNames(value.constructor);
  const out: Json = {};
  const keys = names.length > 0 ? names : Object.keys(value);
  for (const key of keys) {
    const item = (value as Json)[key];
    if (item !== undefined) out[key] = project(item);
  }
  return out;
}

const render = (issues: ValidationIssue[]): string[] =>
  issues.map((issue) => `${issue.field} | ${issue.message}`).sort();

/**
 * One documented difference: an array over its @ArrayMaxSize is reported by its size alone; its
 * elements (each-constraints, nested objects) are not visited. Reference issues hidden by that
 * guard are dropped before comparing.
 */
function comparable(ours: ValidationIssue[], reference: ValidationIssue[]): ValidationIssue[] {
  const guarded = ours
    .filter((issue) => /must contain no more than \d+ elements$/.test(issue.message))
    .map((issue) => issue.field);
  if (guarded.length === 0) return reference;
  const oursRendered = new Set(render(ours));
  return reference.filter((issue) => {
    const hidden = guarded.some(
      (field) =>
        issue.field.startsWith(`${field}[`) || (issue.field === field && issue.message.startsWith('each ')),
    );
    return !hidden || oursRendered.has(render([issue])[0]);
  });
}

interface Tally {
  compared: number;
  valid: number;
  referenceThrew: number;
}

function check(
  dto: Type<unknown>,
  validators: CompiledValidator<unknown>[],
  input: Json,
  tally: Tally,
): void {
  let reference: ValidationIssue[] | undefined;
  let instance: unknown;
  try {
    instance = plainToInstance(dto, input);
    reference = referenceIssues(dto, input);
  } catch {
    // class-validator's path throws on a few inputs (class-transformer calls `new 2()` for an own
    // `constructor: 2` anywhere in the body; IsNumber maxDecimalPlaces with 1e-7): a 500 behind
    // ValidationPipe. The compiled validator must still answer.
    tally.referenceThrew++;
    for (const validate of validators) expect(typeof validate(input).ok).toBe('boolean');
    return;
  }
  for (const validate of validators) {
    const result = validate(input);
    const ours = result.ok ? [] : result.issues;
    const context = `input: ${safeStringify(input)}`;
    expect({ context, issues: render(ours) }).toEqual({
      context,
      issues: render(comparable(ours, reference)),
    });
    if (result.ok) expect(result.value).toStrictEqual(project(instance));
  }
  tally.compared++;
  if (reference.length === 0) tally.valid++;
}

function safeStringify(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'number' && !Number.isFinite(item)
      ? `<${item}>`
      : item === undefined
        ? '<undefined>'
        : item,
  );
}

// ----------------------------------------------------------------------------------------------
// Random mutations (seeded: a failure reproduces).

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DELETE = Symbol('delete');

const WEIRD_VALUES: Array<() => unknown> = [
  () => DELETE,
  () => null,
  () => NaN,
  () => Infinity,
  () => -Infinity,
  () => 0,
  () => -0,
  () => 1,
  () => -1,
  () => 2,
  () => 3,
  () => 9,
  () => 1.5,
  () => 12.345,
  () => 1e-7,
  () => 1e21,
  () => 99,
  () => 100,
  () => 101,
  () => '',
  () => ' ',
  () => 'a',
  () => 'ab',
  () => 'abc',
  () => 'abcdef',
  () => 'x'.repeat(40),
  () => 'x'.repeat(5000),
  () => 'REF-1',
  () => 'ref 1',
  () => 'red',
  () => 'blue',
  () => '12',
  () => '0000',
  () => 'https://example.com/pay',
  () => 'not a url',
  () => '\u{1F600}\u{1F600}\u{1F600}',
  () => 'e\uFE0F',
  () => true,
  () => false,
  () => [],
  () => [1],
  () => [1, 2, 3],
  () => ['a'],
  () => ['a', 'b', 'c', 'd'],
  () => ['toolong'],
  () => [null],
  () => [{}],
  () => [[1]],
  () => ({}),
  () => ({ a: 1 }),
  () => ({ Name: 'x', Qty: 1 }),
  () => ({ Name: 'Tea', Qty: 2 }),
  () => ({ Code: 'a' }),
  () => ({ PaymentType: '' }),
  () => JSON.parse('{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}}'),
  () => JSON.parse('{"__proto__": {"Name": "Tea", "Qty": 2}}'),
];

const EXTRA_KEYS = [
  'Nothing',
  'Site',
  'WhenFlag',
  'Meta',
  'Free',
  'Triple',
  'Even',
  'Low',
  'Code',
  'Dup',
  'Untyped',
  'Nums',
  'Converted',
  'WithDefault',
  'OneOf',
  'Fake',
  'OnlyWhenFlagFalse',
  'Price',
  'Level',
  'Label',
  'Children',
  'SalesInvoiceId',
  'Description',
  'Channel',
  'extra',
  '__proto__',
  'constructor',
  'toString',
  'Id',
];

type Path = Array<string | number>;

/** Every place a mutation can go: existing keys and elements, plus an absent key per object. */
function paths(value: unknown, prefix: Path, out: Path[], random: () => number): Path[] {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      out.push([...prefix, index]);
      paths(item, [...prefix, index], out, random);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      out.push([...prefix, key]);
      paths((value as Json)[key], [...prefix, key], out, random);
    }
    out.push([...prefix, EXTRA_KEYS[Math.floor(random() * EXTRA_KEYS.length)]]);
  }
  return out;
}

/** Deep copy made in this realm (structuredClone's objects would come from Node's realm, not Jest's). */
function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clone) as T;
  if (value === null || typeof value !== 'object') return value;
  const copy: Json = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(copy, key, {
      value: clone((value as Json)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy as T;
}

function mutate(base: Json, random: () => number): Json {
  const input = clone(base);
  const count = 1 + Math.floor(random() * 3);
  for (let n = 0; n < count; n++) {
    const all = paths(input, [], [], random);
    const path = all[Math.floor(random() * all.length)];
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Json)[key as string], input) as
      Json | unknown[];
    const key = path[path.length - 1];
    const current = (parent as Json)[key as string];
    const roll = random();
    if (Array.isArray(current) && roll < 0.15) {
      // Grow past any ArrayMaxSize with copies of its own elements.
      const grown = [...current, ...current, ...current, ...current, ...current, ...current];
      (parent as Json)[key as string] = grown.length > 0 ? grown : ['a', 'b', 'c', 'd', 'e', 'f'];
      continue;
    }
    const replacement = WEIRD_VALUES[Math.floor(random() * WEIRD_VALUES.length)]();
    if (replacement === DELETE) {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete (parent as Json)[key as string];
    } else if (key === '__proto__' && !Array.isArray(parent)) {
      Object.defineProperty(parent, '__proto__', {
        value: replacement,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      (parent as Json)[key as string] = replacement;
    }
  }
  return input;
}

// ----------------------------------------------------------------------------------------------

const validTree = (): Json => ({
  Name: 'root',
  Children: [{ Name: 'a', Children: [{ Name: 'a1' }, { Name: 'a2', Children: [] }] }, { Name: 'b' }],
});
const validHost = (): Json => ({
  Title: 'host',
  Trimmed: { Name: '  padded  ', Count: 2 },
  People: [{ full_name: 'Ann' }, { full_name: 'Kofi' }],
});

const SUBJECTS: Array<{ dto: Type<unknown>; valid: () => Json; edge: Json[] }> = [
  {
    dto: CheckoutCallbackDto,
    valid: validCheckoutCallback,
    edge: [
      {},
      { ResponseCode: '0000', Status: 'Success' },
      { ResponseCode: '0000', Status: 'Success', Data: null },
      { ResponseCode: '0000', Status: 'Success', Data: 'x' },
      { ResponseCode: '0000', Status: 'Success', Data: [] },
      { ResponseCode: '0000', Status: 'Success', Data: [{}, 5] },
      { ResponseCode: '', Status: 5, Data: {} },
      { ...validCheckoutCallback(), Data: { ...(validCheckoutCallback().Data as Json), Amount: '12.5' } },
      { ...validCheckoutCallback(), Data: { ...(validCheckoutCallback().Data as Json), Amount: NaN } },
      { ...validCheckoutCallback(), Data: { ...(validCheckoutCallback().Data as Json), Amount: -1 } },
      {
        ...validCheckoutCallback(),
        Data: { ...(validCheckoutCallback().Data as Json), PaymentDetails: null },
      },
      { ...validCheckoutCallback(), Data: { ...(validCheckoutCallback().Data as Json), PaymentDetails: {} } },
      {
        ...validCheckoutCallback(),
        Data: { ...(validCheckoutCallback().Data as Json), ClientReference: 'r'.repeat(33) },
      },
      {
        ...validCheckoutCallback(),
        Extra: { deep: { deeper: [1, 2] } },
        Data: { ...(validCheckoutCallback().Data as Json), More: 1 },
      },
    ],
  },
  {
    dto: EverythingDto,
    valid: validEverything,
    edge: [
      {},
      { ...validEverything(), Flag: true },
      { ...validEverything(), Flag: true, WhenFlag: 'set' },
      { ...validEverything(), Flag: 'yes', OnlyWhenFlagFalse: 5 },
      { ...validEverything(), Flag: false, OnlyWhenFlagFalse: 5 },
      { ...validEverything(), Tags: ['123456'] },
      { ...validEverything(), Tags: ['\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}'] },
      { ...validEverything(), Tags: ['\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}'] },
      { ...validEverything(), Tags: 'abc' },
      { ...validEverything(), Tags: [] },
      { ...validEverything(), Tags: ['a', 'b', 'c', 'd'] },
      {
        ...validEverything(),
        Items: [{ Name: 'T', Qty: 0, Price: 1.234, Level: 2 }, 'x', null, [{ Name: 'Nested', Qty: 3 }]],
      },
      { ...validEverything(), Items: [{ Name: 'Tea', Qty: 1, Price: 1e-7 }] },
      { ...validEverything(), Items: {} },
      { ...validEverything(), Tag: [{ Code: 'z' }] },
      { ...validEverything(), Tag: null },
      { ...validEverything(), Code: 'a' },
      { ...validEverything(), Code: 'abcde' },
      { ...validEverything(), Code: 5 },
      { ...validEverything(), Code: '' },
      { ...validEverything(), Low: 3 },
      { ...validEverything(), Low: 'three' },
      { ...validEverything(), Ref: '' },
      { ...validEverything(), Ref: 5 },
      { ...validEverything(), Nothing: 'something' },
      { ...validEverything(), Nothing: '' },
      { ...validEverything(), Loose: NaN, Strict: NaN },
      { ...validEverything(), Loose: -Infinity, Strict: Infinity },
      { ...validEverything(), Color: 'Red' },
      { ...validEverything(), OneOf: 2 },
      { ...validEverything(), OneOf: NaN },
      { ...validEverything(), OneOf: 3 },
      { ...validEverything(), Converted: 'abc' },
      { ...validEverything(), Converted: true },
      { ...validEverything(), Converted: ['1'] },
      { ...validEverything(), WithDefault: null },
      { ...validEverything(), WithDefault: 5 },
      { ...validEverything(), Fake: 'nope' },
      { ...validEverything(), Dup: 1 },
      { ...validEverything(), Triple: 4, Even: 3 },
      { ...validEverything(), Untyped: 'x' },
      { ...validEverything(), Untyped: [1, { a: 1 }] },
      { ...validEverything(), Nums: [1, -1, 200] },
      { ...validEverything(), Nums: 5 },
      { ...validEverything(), Site: 'ftp://x' },
      { ...validEverything(), Meta: JSON.parse('{"__proto__": {"x": 1}, "ok": 1}') },
      { ...validEverything(), Free: JSON.parse('{"__proto__": {"x": 1}, "ok": [1, {"constructor": 2}]}') },
      { Id: 'abc', Tags: ['a'] },
    ],
  },
  {
    dto: TreeNodeDto,
    valid: validTree,
    edge: [
      { Name: 'x', Children: [{ Name: 1 }, { Children: [{ Name: null }] }] },
      { Name: 'x', Children: 'none' },
      { Name: 'x', Children: [[{ Name: 'deep' }, { Name: 2 }]] },
    ],
  },
  {
    dto: HostDto,
    valid: validHost,
    edge: [
      { Title: 'x', Trimmed: { Name: '   ' } },
      {
        Title: 'x',
        Trimmed: { Name: ' ok ', Count: 1.5 },
        People: [{ FullName: 'not exposed' }, { full_name: 5 }],
      },
      { Title: 'x', Trimmed: null, People: 'x' },
    ],
  },
];

// VALIDATOR_FUZZ_CASES=20000 for a longer local run.
const RANDOM_CASES = Number(process.env.VALIDATOR_FUZZ_CASES ?? 700);

describe.each(SUBJECTS.map((subject) => [subject.dto.name, subject] as const))(
  'compiled %s agrees with class-validator',
  (_name, subject) => {
    const validators = [
      compileValidator(subject.dto, { engine: 'codegen' }),
      compileValidator(subject.dto, { engine: 'closures' }),
    ];

    it('accepts the valid body and returns its declared properties', () => {
      const tally: Tally = { compared: 0, valid: 0, referenceThrew: 0 };
      check(subject.dto, validators, subject.valid(), tally);
      expect(tally.valid).toBe(1);
    });

    it('reports the same issues for hand-written edge cases', () => {
      const tally: Tally = { compared: 0, valid: 0, referenceThrew: 0 };
      for (const input of subject.edge) check(subject.dto, validators, input, tally);
      expect(tally.compared + tally.referenceThrew).toBe(subject.edge.length);
    });

    it(`reports the same issues for ${RANDOM_CASES} seeded random mutations`, () => {
      const random = mulberry32(Number(process.env.VALIDATOR_FUZZ_SEED ?? 0x5eed) + subject.dto.name.length);
      const tally: Tally = { compared: 0, valid: 0, referenceThrew: 0 };
      for (let i = 0; i < RANDOM_CASES; i++)
        check(subject.dto, validators, mutate(subject.valid(), random), tally);
      // The generator must produce both outcomes, or the comparison proves little.
      expect(tally.compared).toBeGreaterThan(RANDOM_CASES * 0.9);
      expect(tally.compared - tally.valid).toBeGreaterThan(RANDOM_CASES * 0.5);
      expect(tally.valid).toBeGreaterThan(RANDOM_CASES * 0.02);
    });
  },
);
