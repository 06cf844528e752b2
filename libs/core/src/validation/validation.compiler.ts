import type { Type } from '@nestjs/common';
import { HubtelError, HubtelValidationError, type ValidationIssue } from '../errors/hubtel.errors.js';
import { closureClassFn } from './validation.closures.js';
import { codegenAvailable, codegenClassFn } from './validation.codegen.js';
import { describeType, ROOT_NOT_OBJECT } from './validation.messages.js';
import { ValidationPlanner, type ClassPlan } from './validation.metadata.js';
import { ValidationRuntime } from './validation.runtime.js';
import type { CompiledValidator, CompileValidatorOptions, ValidationResult } from './validation.types.js';

/*
 * Where the compiled validator knowingly differs from validateSync(plainToInstance(Dto, body)):
 * - A body that is not an object gets one issue on field '' (class-validator accepts a string).
 * - An array over its @ArrayMaxSize gets only that issue: its elements are not visited.
 * - Nesting deeper than `maxDepth` (default 32) gets an issue instead of recursing.
 * - A constraint that throws, or answers a Promise, rejects the value (class-validator throws, or
 *   skips it in validateSync); so does IsNumber({ maxDecimalPlaces }) on 1e-7, where it throws.
 *   Bodies that make class-transformer throw (an own `constructor: 2` in a free-form object) are
 *   answered normally.
 * - Custom constraints, @ValidateIf conditions and message functions get the raw input object as
 *   `args.object` (not a class instance: no class defaults, no @Type conversions, no methods).
 *   Custom constraint instances are resolved from class-validator's container once, on first use.
 * - `@Type(() => X)` functions are called once, at compile time; discriminators fall back.
 * - `value` is plain data: declared properties only; free-form objects (no @Type class, or one
 *   without rules) copied without `__proto__`, `constructor` and other Object.prototype names.
 * - Input is JSON data: Set/Map values are not treated as collections by `each` checks.
 */
const DEFAULT_MAX_DEPTH = 32;

/** One compiled validator per DTO class and option set; classes can be garbage-collected. */
const cache = new WeakMap<Function, Map<string, CompiledValidator<unknown>>>();

interface Resolved {
  groups?: string[];
  always: boolean;
  strictGroups: boolean;
  maxDepth: number;
  includeValues: boolean;
  engine: 'codegen' | 'closures';
}

function resolveOptions(dto: Function, options: CompileValidatorOptions): Resolved {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 1) {
    throw new HubtelError(
      'HUBTEL_CONFIG_INVALID',
      `compileValidator(${dto.name}): maxDepth must be a positive integer`,
    );
  }
  const wanted = options.engine ?? 'auto';
  if (wanted === 'codegen' && !codegenAvailable()) {
    throw new HubtelError(
      'HUBTEL_CONFIG_INVALID',
      `compileValidator(${dto.name}): code generation is disabled in this process; use engine "closures" or "auto"`,
    );
  }
  return {
    groups: options.groups,
    always: !!options.always,
    strictGroups: !!options.strictGroups,
    maxDepth,
    includeValues: !!options.includeValues,
    engine: wanted === 'closures' || (wanted === 'auto' && !codegenAvailable()) ? 'closures' : 'codegen',
  };
}

function planRoot(dto: Function, resolved: Resolved): { planner: ValidationPlanner; root: ClassPlan } {
  if (typeof dto !== 'function') {
    throw new HubtelError('HUBTEL_CONFIG_INVALID', 'compileValidator() needs a DTO class');
  }
  const planner = new ValidationPlanner(resolved);
  if (!planner.declaresRules(dto)) {
    // Almost always a mistake (no decorators, or decorators registered in another class-validator
    // copy); accepting every body silently would be worse than failing at bootstrap.
    throw new HubtelError('HUBTEL_CONFIG_INVALID', `${dto.name} declares no class-validator rules`);
  }
  return { planner, root: planner.plan(dto) };
}

/**
 * Compiles a class-validator DTO into a function that validates a parsed JSON body the way
 * `validateSync(plainToInstance(Dto, body), { forbidUnknownValues: false })` does: same rules,
 * same messages, dotted fields (`Data.PaymentDetails.Channel`, `Items[2].Value`). Unknown fields
 * are accepted and left out of `value`. Built-in constraints are evaluated inline; any other
 * constraint runs class-validator's own function; classes using class-transformer features beyond
 * `@Type()` are validated by class-validator itself. Cached per class and options.
 *
 * @throws HubtelError `HUBTEL_CONFIG_INVALID` for a class without rules, an async constraint, or a
 * property named like an Object.prototype member.
 */
export function compileValidator<T>(
  dto: Type<T>,
  options: CompileValidatorOptions = {},
): CompiledValidator<T> {
  const resolved = resolveOptions(dto, options);
  const key = JSON.stringify(resolved);
  let perClass = cache.get(dto);
  const cached = perClass?.get(key);
  if (cached) return cached as CompiledValidator<T>;

  const { root } = planRoot(dto, resolved);
  const runtime = new ValidationRuntime({
    ...resolved,
    build: resolved.engine === 'codegen' ? codegenClassFn : closureClassFn,
  });
  const validateRoot = runtime.fnFor(root);

  const validator: CompiledValidator<T> = (input: unknown): ValidationResult<T> => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      return { ok: false, issues: [{ field: '', message: ROOT_NOT_OBJECT(describeType(input)) }] };
    }
    const issues: ValidationIssue[] = [];
    const value = validateRoot(input as Record<string, unknown>, '', issues, 0);
    return issues.length === 0 ? { ok: true, value: value as T } : { ok: false, issues };
  };

  if (!perClass) cache.set(dto, (perClass = new Map()));
  perClass.set(key, validator as CompiledValidator<unknown>);
  return validator;
}

/** Validates and returns the accepted value, or throws HubtelValidationError listing the issues. */
export function validateOrThrow<T>(dto: Type<T>, input: unknown, options?: CompileValidatorOptions): T {
  const result = compileValidator(dto, options)(input);
  if (result.ok) return result.value;
  throw new HubtelValidationError(describeIssues(dto.name, result.issues), result.issues);
}

/** `Invalid CheckoutCallbackDto: Data.Amount: Amount must be a number ...; ... (and 3 more)`. */
export function describeIssues(what: string, issues: ValidationIssue[], limit = 5): string {
  const listed = issues
    .slice(0, limit)
    .map((issue) => (issue.field ? `${issue.field}: ${issue.message}` : issue.message))
    .join('; ');
  const more = issues.length > limit ? ` (and ${issues.length - limit} more)` : '';
  return `Invalid ${what}: ${listed}${more}`;
}

export interface ValidatorReport {
  engine: 'codegen' | 'closures';
  classes: Array<{
    name: string;
    /** `compiled`, or `fallback` (validated by class-validator itself) with the reason. */
    mode: 'compiled' | 'fallback';
    reason?: string;
    properties: Array<{
      name: string;
      /** Constraints the compiler evaluates itself. */
      inline: string[];
      /** Constraints evaluated by calling class-validator's constraint function. */
      delegated: string[];
      optional: boolean;
      nested?: string;
    }>;
  }>;
}

/** How a DTO is (or would be) compiled: which constraints run inline, which delegate, which classes fall back. */
export function inspectValidator(dto: Type<unknown>, options: CompileValidatorOptions = {}): ValidatorReport {
  const resolved = resolveOptions(dto, options);
  const { root } = planRoot(dto, resolved);
  const report: ValidatorReport = { engine: resolved.engine, classes: [] };
  const seen = new Set<ClassPlan>();
  const visit = (plan: ClassPlan): void => {
    if (seen.has(plan)) return;
    seen.add(plan);
    report.classes.push({
      name: plan.name,
      mode: plan.mode,
      ...(plan.fallbackReason ? { reason: plan.fallbackReason } : {}),
      properties: plan.props.map((prop) => {
        const checks = prop.groups.flat();
        return {
          name: prop.name,
          inline: checks.filter((check) => check.inline).map((check) => check.key),
          delegated: checks.filter((check) => !check.inline).map((check) => check.key),
          optional: prop.optional,
          ...(prop.nested ? { nested: prop.nested.child?.name ?? '(untyped)' } : {}),
        };
      }),
    });
    for (const prop of plan.props) if (prop.nested?.child) visit(prop.nested.child);
  };
  visit(root);
  return report;
}
