import { length as cvLength, maxLength as cvMaxLength, minLength as cvMinLength } from 'class-validator';

/**
 * A class-validator constraint the compiler evaluates itself. `test` is the closure form (closure
 * engine, compile-time self-check); `expr` writes the same test as a JS expression over the variable
 * named `v`, with every non-literal value passed through `ref` (never spliced into the source).
 * Both receive one element when the decorator has `{ each: true }`.
 */
export interface InlineCheck {
  test(value: unknown): boolean;
  expr(v: string, ref: (value: unknown) => string): string;
}

type InlineFactory = (constraints: readonly unknown[]) => InlineCheck | undefined;

const isRegExp = (value: unknown): value is RegExp =>
  Object.prototype.toString.call(value) === '[object RegExp]';

/** Strict-equality membership like `list.some(x => x === v)`: a Set minus NaN (=== never matches NaN). */
function strictSet(list: readonly unknown[]): Set<unknown> {
  return new Set(list.filter((item) => !(typeof item === 'number' && Number.isNaN(item))));
}

/**
 * class-validator counts decimals as `String(n).split('.')[1].length` and throws a TypeError for
 * exponent forms without a dot (1e-7). Same count where it works; the real count where it throws.
 */
function decimalPlaces(value: number): number {
  if (value % 1 === 0) return 0;
  const text = value.toString();
  const dot = text.indexOf('.');
  if (dot >= 0) return text.length - dot - 1;
  const exponent = /e-(\d+)$/.exec(text);
  return exponent ? Number(exponent[1]) : 0;
}

function numberCheck(options: {
  allowNaN?: boolean;
  allowInfinity?: boolean;
  maxDecimalPlaces?: number;
}): InlineCheck {
  const allowNaN = !!options.allowNaN;
  const allowInfinity = !!options.allowInfinity;
  const maxDecimalPlaces = options.maxDecimalPlaces;
  const plain = !allowNaN && !allowInfinity && maxDecimalPlaces === undefined;
  const test = (value: unknown): boolean => {
    if (typeof value !== 'number') return false;
    if (value === Infinity || value === -Infinity) return allowInfinity;
    if (Number.isNaN(value)) return allowNaN;
    if (maxDecimalPlaces !== undefined && decimalPlaces(value) > maxDecimalPlaces) return false;
    return true;
  };
  return {
    test,
    expr: (v, ref) => (plain ? `(typeof ${v} === "number" && Number.isFinite(${v}))` : `${ref(test)}(${v})`),
  };
}

/*
 * String lengths: validator.js counts a surrogate pair or a character + variation selector as one,
 * so its length is between a third of `.length` and `.length`. Cheap bounds decide almost every
 * string; only the band in between calls class-validator's own function.
 */
function maxLengthCheck(max: number): InlineCheck {
  const test = (value: unknown): boolean =>
    typeof value === 'string' &&
    (value.length <= max || (value.length <= 3 * max && cvMaxLength(value, max)));
  return {
    test,
    expr: (v, ref) => `(typeof ${v} === "string" && (${v}.length <= ${ref(max)} || ${ref(test)}(${v})))`,
  };
}

function minLengthCheck(min: number): InlineCheck {
  const test = (value: unknown): boolean =>
    typeof value === 'string' &&
    (value.length >= 3 * min || (value.length >= min && cvMinLength(value, min)));
  return {
    test,
    expr: (v, ref) => `(typeof ${v} === "string" && (${v}.length >= ${ref(3 * min)} || ${ref(test)}(${v})))`,
  };
}

function lengthCheck(min: number, max: number): InlineCheck {
  const test = (value: unknown): boolean =>
    typeof value === 'string' &&
    ((value.length <= max && value.length >= 3 * min) || cvLength(value, min, max));
  return {
    test,
    expr: (v, ref) =>
      `(typeof ${v} === "string" && ((${v}.length <= ${ref(max)} && ${v}.length >= ${ref(3 * min)}) || ${ref(test)}(${v})))`,
  };
}

const simple = (test: (value: unknown) => boolean, expr: (v: string) => string): InlineCheck => ({
  test,
  expr: (v) => expr(v),
});

/**
 * The built-in decorators compiled inline, by constraint name. A factory returns undefined when
 * the decorator's arguments are unusual enough that class-validator's own function should run.
 * Every entry is also checked against that function at compile time (validation.metadata.ts).
 */
export const INLINE_CHECKS: Readonly<Record<string, InlineFactory>> = {
  isDefined: () =>
    simple(
      (x) => x !== undefined && x !== null,
      (v) => `(${v} !== undefined && ${v} !== null)`,
    ),
  isNotEmpty: () =>
    simple(
      (x) => x !== '' && x !== null && x !== undefined,
      (v) => `(${v} !== "" && ${v} !== null && ${v} !== undefined)`,
    ),
  isEmpty: () =>
    simple(
      (x) => x === '' || x === null || x === undefined,
      (v) => `(${v} === "" || ${v} === null || ${v} === undefined)`,
    ),
  isString: () =>
    simple(
      (x) => typeof x === 'string' || x instanceof String,
      (v) => `(typeof ${v} === "string" || ${v} instanceof String)`,
    ),
  isNumber: ([options]) => {
    if (options === undefined) return numberCheck({});
    return options !== null && typeof options === 'object' ? numberCheck(options) : undefined;
  },
  isInt: () =>
    simple(
      (x) => typeof x === 'number' && Number.isInteger(x),
      (v) => `(typeof ${v} === "number" && Number.isInteger(${v}))`,
    ),
  isBoolean: () =>
    simple(
      (x) => typeof x === 'boolean' || x instanceof Boolean,
      (v) => `(typeof ${v} === "boolean" || ${v} instanceof Boolean)`,
    ),
  isObject: () =>
    simple(
      (x) => x != null && (typeof x === 'object' || typeof x === 'function') && !Array.isArray(x),
      (v) =>
        `(${v} != null && (typeof ${v} === "object" || typeof ${v} === "function") && !Array.isArray(${v}))`,
    ),
  isArray: () =>
    simple(
      (x) => Array.isArray(x),
      (v) => `Array.isArray(${v})`,
    ),
  arrayNotEmpty: () =>
    simple(
      (x) => Array.isArray(x) && x.length > 0,
      (v) => `(Array.isArray(${v}) && ${v}.length > 0)`,
    ),
  arrayMaxSize: ([max]) => ({
    test: (x) => Array.isArray(x) && x.length <= (max as number),
    expr: (v, ref) => `(Array.isArray(${v}) && ${v}.length <= ${ref(max)})`,
  }),
  arrayMinSize: ([min]) => ({
    test: (x) => Array.isArray(x) && x.length >= (min as number),
    expr: (v, ref) => `(Array.isArray(${v}) && ${v}.length >= ${ref(min)})`,
  }),
  isIn: ([values]) => {
    if (!Array.isArray(values))
      return simple(
        () => false,
        () => 'false',
      );
    const set = strictSet(values);
    return { test: (x) => set.has(x), expr: (v, ref) => `${ref(set)}.has(${v})` };
  },
  isNotIn: ([values]) => {
    if (!Array.isArray(values))
      return simple(
        () => true,
        () => 'true',
      );
    const set = strictSet(values);
    return { test: (x) => !set.has(x), expr: (v, ref) => `!${ref(set)}.has(${v})` };
  },
  // `Object.values(entity).includes(v)`: SameValueZero, exactly what Set#has does.
  isEnum: ([entity]) => {
    if (entity === null || typeof entity !== 'object') return undefined;
    const set = new Set(Object.keys(entity).map((key) => (entity as Record<string, unknown>)[key]));
    return { test: (x) => set.has(x), expr: (v, ref) => `${ref(set)}.has(${v})` };
  },
  equals: ([expected]) => ({ test: (x) => x === expected, expr: (v, ref) => `(${v} === ${ref(expected)})` }),
  notEquals: ([expected]) => ({
    test: (x) => x !== expected,
    expr: (v, ref) => `(${v} !== ${ref(expected)})`,
  }),
  maxLength: ([max]) => (typeof max === 'number' ? maxLengthCheck(max) : undefined),
  minLength: ([min]) => (typeof min === 'number' && !Number.isNaN(min) ? minLengthCheck(min) : undefined),
  isLength: ([min, max]) =>
    typeof min === 'number' && !Number.isNaN(min) && typeof max === 'number'
      ? lengthCheck(min, max)
      : undefined,
  min: ([bound]) =>
    typeof bound === 'number'
      ? {
          test: (x) => typeof x === 'number' && x >= bound,
          expr: (v, ref) => `(typeof ${v} === "number" && ${v} >= ${ref(bound)})`,
        }
      : simple(
          () => false,
          () => 'false',
        ),
  max: ([bound]) =>
    typeof bound === 'number'
      ? {
          test: (x) => typeof x === 'number' && x <= bound,
          expr: (v, ref) => `(typeof ${v} === "number" && ${v} <= ${ref(bound)})`,
        }
      : simple(
          () => false,
          () => 'false',
        ),
  isPositive: () =>
    simple(
      (x) => typeof x === 'number' && x > 0,
      (v) => `(typeof ${v} === "number" && ${v} > 0)`,
    ),
  isNegative: () =>
    simple(
      (x) => typeof x === 'number' && x < 0,
      (v) => `(typeof ${v} === "number" && ${v} < 0)`,
    ),
  // A global or sticky RegExp carries state between calls (lastIndex): leave those to class-validator.
  matches: ([pattern, modifiers]) => {
    let regexp: RegExp;
    try {
      regexp = isRegExp(pattern) ? pattern : new RegExp(pattern as string, modifiers as string | undefined);
    } catch {
      return undefined;
    }
    if (regexp.global || regexp.sticky) return undefined;
    return {
      test: (x) => typeof x === 'string' && regexp.test(x),
      expr: (v, ref) => `(typeof ${v} === "string" && ${ref(regexp)}.test(${v}))`,
    };
  },
};
