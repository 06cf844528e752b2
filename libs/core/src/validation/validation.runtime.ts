import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import type { ValidationIssue } from '../errors/hubtel.errors.js';
import { FALLBACK_FAILED, TOO_DEEP } from './validation.messages.js';
import type { ClassPlan, NestedPlan, PlanOptions } from './validation.metadata.js';

/**
 * Validates one object of a DTO class: appends issues (fields prefixed with `path`) and returns the
 * object's accepted value. `depth` counts the objects and arrays above it.
 */
export type ClassFn = (
  object: Record<string, unknown>,
  path: string,
  issues: ValidationIssue[],
  depth: number,
) => Record<string, unknown>;

/** Returned by `copyPlain` for a value nested deeper than `maxDepth`. */
export const TOO_DEEP_MARK: unique symbol = Symbol('too deep');

/** Names class-transformer never copies onto a plain object (they resolve to Object.prototype). */
const PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));

export const joinPath = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);

const isPrimitive = (value: unknown): boolean =>
  value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

export interface RuntimeOptions extends PlanOptions {
  maxDepth: number;
  includeValues: boolean;
  /** Builds the function for a compiled class plan (the chosen engine). */
  build: (plan: ClassPlan, runtime: ValidationRuntime) => ClassFn;
}

/** What both engines share: nesting, copying, issues, and the class-validator fallback. */
export class ValidationRuntime {
  readonly maxDepth: number;
  private readonly functions = new Map<ClassPlan, ClassFn>();

  constructor(private readonly options: RuntimeOptions) {
    this.maxDepth = options.maxDepth;
  }

  /** The function for a plan, built once; a plan still being built (a DTO nesting itself) gets a forwarder. */
  fnFor(plan: ClassPlan): ClassFn {
    const known = this.functions.get(plan);
    if (known) return known;
    // The forwarder only runs at validation time, after `built` is assigned below.
    const forward: ClassFn = (object, path, issues, depth) => built(object, path, issues, depth);
    this.functions.set(plan, forward);
    const built: ClassFn = plan.mode === 'fallback' ? this.fallbackFn(plan) : this.options.build(plan, this);
    this.functions.set(plan, built);
    return built;
  }

  readonly push = (issues: ValidationIssue[], field: string, message: string, value: unknown): void => {
    issues.push(
      this.options.includeValues && isPrimitive(value) ? { field, message, value } : { field, message },
    );
  };

  /** Same as `push` with the field given as path + property (built only on failure). */
  readonly pushAt = (
    issues: ValidationIssue[],
    path: string,
    name: string,
    message: string,
    value: unknown,
  ): void => {
    this.push(issues, joinPath(path, name), message, value);
  };

  readonly pushTooDeep = (issues: ValidationIssue[], field: string): void => {
    issues.push({ field, message: TOO_DEEP(this.maxDepth) });
  };

  /**
   * A free-form value (no `@Type()` class) as class-transformer would hand it over: a fresh copy
   * without `__proto__`, `constructor` or other Object.prototype names, nesting bounded.
   */
  readonly copyPlain = (value: unknown, depth: number): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (depth + 1 > this.maxDepth) return TOO_DEEP_MARK;
    if (Array.isArray(value)) {
      const copy: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        const item = this.copyPlain(value[i], depth + 1);
        if (item === TOO_DEEP_MARK) return TOO_DEEP_MARK;
        copy.push(item);
      }
      return copy;
    }
    if (value instanceof Date) return new Date(value.valueOf());
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      if (PROTOTYPE_KEYS.has(key)) continue;
      const item = this.copyPlain((value as Record<string, unknown>)[key], depth + 1);
      if (item === TOO_DEEP_MARK) return TOO_DEEP_MARK;
      if (item !== undefined) copy[key] = item;
    }
    return copy;
  };

  /**
   * `@ValidateNested()` on a value that is not undefined, as class-validator walks it: arrays
   * element by element (whatever `each` says), objects through their `@Type()` class, anything else
   * is an issue on that field. Returns the accepted value.
   */
  readonly nest = (
    plan: NestedPlan,
    value: unknown,
    field: string,
    issues: ValidationIssue[],
    depth: number,
  ): unknown => {
    if (value === undefined) return undefined;
    if (value !== null && typeof value === 'object') {
      if (depth + 1 > this.maxDepth) {
        this.pushTooDeep(issues, field);
        return undefined;
      }
      if (Array.isArray(value)) {
        const accepted: unknown[] = [];
        for (let i = 0; i < value.length; i++)
          accepted.push(this.nest(plan, value[i], `${field}[${i}]`, issues, depth + 1));
        return accepted;
      }
      if (plan.child)
        return this.fnFor(plan.child)(value as Record<string, unknown>, field, issues, depth + 1);
      const copy = this.copyPlain(value, depth);
      if (copy === TOO_DEEP_MARK) {
        this.pushTooDeep(issues, field);
        return undefined;
      }
      return copy;
    }
    this.push(issues, field, plan.staticMessage ?? plan.message(value), value);
    return value;
  };

  /**
   * A class the compiler leaves to class-validator (class-transformer features it does not
   * reproduce): exactly `validateSync(plainToInstance(cls, object))` for this subtree.
   */
  private fallbackFn(plan: ClassPlan): ClassFn {
    const { groups, always, strictGroups } = this.options;
    const validatorOptions = { forbidUnknownValues: false, groups, always, strictGroups };
    return (object, path, issues, depth) => {
      // The copy drops the keys class-transformer skips anyway, and the ones it crashes on (an own
      // `constructor` that is not a function makes it call `new 2()`), and bounds the nesting.
      const copy = this.copyPlain(object, depth - 1);
      if (copy === TOO_DEEP_MARK) {
        this.pushTooDeep(issues, path);
        return {};
      }
      try {
        const instance = plainToInstance(plan.cls as new () => object, copy) as Record<string, unknown>;
        appendFlattened(
          validateSync(instance, validatorOptions),
          path,
          false,
          issues,
          this.options.includeValues,
        );
        return this.project(instance, plan, depth);
      } catch {
        issues.push({ field: path, message: FALLBACK_FAILED });
        return {};
      }
    };
  }

  /** The declared properties of an instance class-transformer built, as plain objects. */
  private project(
    instance: Record<string, unknown>,
    plan: ClassPlan,
    depth: number,
  ): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const prop of plan.props) {
      const value = instance[prop.name];
      if (value === undefined) continue;
      const child = prop.nested?.child;
      out[prop.name] = child && depth < this.maxDepth ? this.projectNested(value, child, depth + 1) : value;
    }
    return out;
  }

  private projectNested(value: unknown, plan: ClassPlan, depth: number): unknown {
    if (Array.isArray(value))
      return depth < this.maxDepth ? value.map((item) => this.projectNested(item, plan, depth + 1)) : value;
    if (value !== null && typeof value === 'object')
      return this.project(value as Record<string, unknown>, plan, depth);
    return value;
  }
}

/**
 * Flattens class-validator's ValidationError tree into issues with dotted fields (`Data.Amount`,
 * `Items[2].Name`), one per failed constraint, in class-validator's order. Messages are kept as
 * class-validator wrote them (no path prefix).
 */
export function flattenValidationErrors(errors: ValidationError[], path = ''): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  appendFlattened(errors, path, false, issues, false);
  return issues;
}

function appendFlattened(
  errors: ValidationError[],
  path: string,
  inArray: boolean,
  issues: ValidationIssue[],
  includeValues: boolean,
): void {
  for (const error of errors) {
    const field =
      error.property === undefined
        ? path
        : inArray
          ? `${path}[${error.property}]`
          : joinPath(path, error.property);
    if (error.constraints) {
      for (const message of Object.values(error.constraints)) {
        issues.push(
          includeValues && isPrimitive(error.value)
            ? { field, message, value: error.value }
            : { field, message },
        );
      }
    }
    if (error.children && error.children.length > 0) {
      appendFlattened(error.children, field, Array.isArray(error.value), issues, includeValues);
    }
  }
}
