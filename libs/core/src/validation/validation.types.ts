import type { ValidationIssue } from '../errors/hubtel.errors.js';

/**
 * Outcome of a compiled validator. `value` is a fresh plain object holding only the DTO's declared
 * properties (recursively for nested DTOs), not a class instance: handlers read data, they do not
 * call DTO methods, and building instances would cost what compiling saves.
 */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** A validator built once per DTO class by `compileValidator()`; safe to call concurrently. */
export type CompiledValidator<T> = (input: unknown) => ValidationResult<T>;

export interface CompileValidatorOptions {
  /** class-validator groups to validate (same meaning as `validate(obj, { groups })`). */
  groups?: string[];
  /** Same as class-validator's `always` option. */
  always?: boolean;
  /** Same as class-validator's `strictGroups` option. */
  strictGroups?: boolean;
  /**
   * Deepest nesting (objects and arrays) accepted below the root, default 32. Only recursive DTOs,
   * arrays of arrays under `@ValidateNested()` and free-form objects can reach it; deeper input
   * gets an issue instead of recursing (a hostile body must not exhaust the stack).
   */
  maxDepth?: number;
  /** Copy the rejected value into each issue when it is a primitive (default false: no echo). */
  includeValues?: boolean;
  /**
   * `codegen` compiles each DTO to one straight-line function (`new Function`); `closures` runs the
   * same plan through pre-built closures (for hosts started with
   * `--disallow-code-generation-from-strings`). `auto` (default) uses codegen when allowed.
   */
  engine?: 'auto' | 'codegen' | 'closures';
}
