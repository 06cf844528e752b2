import type { Type } from '@nestjs/common';
import { _, Ajv, type ErrorObject, type KeywordCxt, type Name, type ValidateFunction } from 'ajv';
import { isDefined, isNotEmpty, matches, maxLength } from 'class-validator';
import type { ValidationIssue } from '../errors/hubtel.errors.js';
import { dtoJsonSchema, IGNORED, type DtoShape } from './validation.schema.js';

/** `value`: a fresh plain object of the DTO's declared properties only (nested ones too). */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** A validator built once per DTO class by `compileValidator()`; safe to call concurrently. */
export type CompiledValidator<T> = (input: unknown) => ValidationResult<T>;

let shared: Ajv | undefined;

/**
 * One Ajv for the suite, with keywords that call class-validator's own checks where JSON Schema
 * disagrees (validator.js counts no more characters than UTF-16 units: `cvMaxLength` calls it past it).
 */
function ajv(): Ajv {
  if (shared) return shared;
  const instance = new Ajv({ allErrors: true, verbose: true, strict: true });
  const call = (cxt: KeywordCxt, fn: Function): Name => cxt.gen.scopeValue('func', { ref: fn });
  const add = (
    keyword: string,
    type: 'string' | 'number' | undefined,
    schemaType: 'number' | 'object' | 'boolean',
    code: (cxt: KeywordCxt) => void,
  ) => instance.addKeyword({ keyword, ...(type && { type }), schemaType, code });
  add('cvMaxLength', 'string', 'number', (cxt) =>
    cxt.fail(_`${cxt.data}.length > ${cxt.schema} && !${call(cxt, maxLength)}(${cxt.data}, ${cxt.schema})`),
  );
  add('cvMatches', 'string', 'object', (cxt) => {
    const { source, flags } = cxt.schema as { source: string; flags: string };
    const regex = cxt.gen.scopeValue('pattern', { ref: new RegExp(source, flags) });
    cxt.fail(_`!${call(cxt, matches)}(${cxt.data}, ${regex})`);
  });
  add('cvNotEmpty', undefined, 'boolean', (cxt) => cxt.fail(_`!${call(cxt, isNotEmpty)}(${cxt.data})`));
  add('cvDefined', undefined, 'boolean', (cxt) => cxt.fail(_`!${call(cxt, isDefined)}(${cxt.data})`));
  return (shared = instance);
}

export interface CompileValidatorOptions {
  /** Refuse undeclared fields (`whitelist` + `forbidNonWhitelisted`). Default false: accepted, not copied. */
  forbidUnknown?: boolean;
}

const caches = {
  open: new WeakMap<Function, CompiledValidator<unknown>>(),
  closed: new WeakMap<Function, CompiledValidator<unknown>>(),
};

/**
 * The validator of a class-validator DTO, compiled once through JSON Schema and Ajv: it accepts what
 * `validate(plainToInstance(Dto, body))` does on parsed JSON, one issue per bad field, and returns the
 * declared fields only. Throws `HUBTEL_CONFIG_INVALID` for a rule without an exact JSON Schema form.
 */
export function compileValidator<T>(
  dto: Type<T>,
  options: CompileValidatorOptions = {},
): CompiledValidator<T> {
  const cache = options.forbidUnknown ? caches.closed : caches.open;
  const cached = cache.get(dto);
  if (cached) return cached as CompiledValidator<T>;
  const { schema, root, shapes } = dtoJsonSchema(dto, options);
  const check = ajv().compile(schema);
  const project = projector(root, shapes, new Map());
  const validator: CompiledValidator<T> = (input) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      const message = `request body must be a JSON object, got ${kindOf(input)}`;
      return { ok: false, issues: [{ field: '(body)', message }] };
    }
    if (check(input)) return { ok: true, value: project(input) as T };
    return { ok: false, issues: issuesOf(check) };
  };
  cache.set(dto, validator as CompiledValidator<unknown>);
  return validator;
}

type Projector = (input: object) => Record<string, unknown>;

/** Copies an accepted body's declared fields; nested copiers are resolved ahead, not per request. */
function projector(
  shapeName: string,
  shapes: Map<string, DtoShape>,
  built: Map<string, Projector>,
): Projector {
  const known = built.get(shapeName);
  if (known) return known;
  const shape = shapes.get(shapeName)!;
  const fields: { key: string; nested: Projector | undefined }[] = [];
  const project: Projector = (input) => {
    const out: Record<string, unknown> = {};
    for (const { key, nested } of fields) {
      if (!Object.hasOwn(input, key)) continue;
      const value = (input as Record<string, unknown>)[key];
      if (value === undefined) continue;
      out[key] = nested && value !== null && typeof value === 'object' ? nested(value) : value;
    }
    return out;
  };
  // Registered before its fields: a DTO may nest itself.
  built.set(shapeName, project);
  for (const key of shape.keys) {
    const nested = Object.hasOwn(shape.nested, key) ? shape.nested[key] : undefined;
    fields.push({ key, nested: nested === undefined ? undefined : projector(nested, shapes, built) });
  }
  return project;
}

/** One issue per field: the first of its errors by rank (missing, then wrong type, then the rest). */
function issuesOf(check: ValidateFunction): ValidationIssue[] {
  const best = new Map<string, { rank: number; message: string }>();
  for (const error of check.errors ?? []) {
    const field = fieldOf(error);
    const described = describe(error, field);
    if (!described) continue;
    const known = best.get(field);
    if (!known || described.rank < known.rank) best.set(field, described);
  }
  return [...best].map(([field, { message }]) => ({ field, message }));
}

function fieldOf(error: ErrorObject): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') path.push((error.params as { missingProperty: string }).missingProperty);
  if (error.keyword === 'additionalProperties')
    path.push((error.params as { additionalProperty: string }).additionalProperty);
  return path.join('.');
}

/** The message of each plain keyword after the field's path, and its rank (missing, wrong type, the rest). */
const MESSAGES: Record<string, [rank: number, message: (schema: any) => string]> = {
  required: [0, () => 'is required'],
  cvDefined: [0, () => 'is required (got null)'],
  cvNotEmpty: [2, () => 'must not be empty'],
  cvMaxLength: [3, (max) => `must be at most ${max} characters long`],
  minimum: [3, (min) => `must be at least ${min}`],
  exclusiveMinimum: [3, (min) => `must be greater than ${min}`],
  maximum: [3, (max) => `must be at most ${max}`],
  enum: [3, (values: unknown[]) => `must be one of ${values.map(String).join(', ')}`],
};

function describe(error: ErrorObject, field: string): { rank: number; message: string } | undefined {
  const schema = error.schema as unknown;
  const plain = MESSAGES[error.keyword];
  if (plain) return { rank: plain[0], message: `${field} ${plain[1](schema)}` };
  switch (error.keyword) {
    case 'type': {
      if (error.data === null) return { rank: 0, message: `${field} is required (got null)` };
      const wanted = (error.params as { type: string }).type.replace('integer', 'an integer number');
      return { rank: 1, message: `${field} must be ${article(wanted)}, got ${kindOf(error.data)}` };
    }
    case 'cvMatches': {
      const { source, flags, message } = schema as { source: string; flags: string; message?: string };
      return { rank: 3, message: message ?? `${field} must match /${source}/${flags}` };
    }
    case 'additionalProperties': {
      const properties = (error.parentSchema as { properties: Record<string, { $comment?: string }> })
        .properties;
      const known = Object.keys(properties).filter((key) => properties[key]!.$comment !== IGNORED);
      return { rank: 0, message: `${field} is not a known field (${known.join(', ')})` };
    }
    case 'if':
      return undefined; // the wrapper of an optional field; the failing rule is reported itself
    default:
      return { rank: 4, message: `${field} is invalid` };
  }
}

function article(type: string): string {
  return type.startsWith('an ') ? type : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** What a value is, for a message that must not echo it: `null`, `nothing`, `an array`, `a string`... */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return article(typeof value);
}
