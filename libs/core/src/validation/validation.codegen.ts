import type { CheckPlan, ClassPlan, PropPlan } from './validation.metadata.js';
import { TOO_DEEP_MARK, type ClassFn, type ValidationRuntime } from './validation.runtime.js';

/*
 * The codegen engine: writes one straight-line function per DTO class (no loops over metadata, no
 * per-check calls for the built-in constraints) and compiles it with `new Function`. It is the
 * closure engine (validation.closures.ts) unrolled; the differential tests run both.
 *
 * Nothing from the input ever reaches the source. The source holds: property names from the DTO
 * class, written as JSON string literals; numbered references `rN` to values passed in an array
 * (constraints, messages, sets, regexps, functions); fixed code.
 */

let codegenAllowed: boolean | undefined;

/** False when the process forbids code generation (`--disallow-code-generation-from-strings`). */
export function codegenAvailable(): boolean {
  if (codegenAllowed === undefined) {
    try {
      codegenAllowed = new Function('return 1')() === 1;
    } catch {
      codegenAllowed = false;
    }
  }
  return codegenAllowed;
}

class Source {
  readonly refs: unknown[] = [];
  readonly lines: string[] = [];

  ref = (value: unknown): string => {
    this.refs.push(value);
    return `r${this.refs.length - 1}`;
  };

  line(text: string): void {
    this.lines.push(text);
  }
}

export function codegenClassFn(plan: ClassPlan, runtime: ValidationRuntime): ClassFn {
  const src = new Source();
  const { ref } = src;
  const helpers = {
    proto: ref(Object.getPrototypeOf),
    objectProto: ref(Object.prototype),
    enumerable: ref(Object.prototype.propertyIsEnumerable),
    pushAt: ref(runtime.pushAt),
    pushTooDeep: ref(runtime.pushTooDeep),
    copy: ref(runtime.copyPlain),
    tooDeep: ref(TOO_DEEP_MARK),
    nest: ref(runtime.nest),
    defaults: plan.createDefaults ? ref(plan.createDefaults) : '',
  };

  src.line('const out = {};');
  src.line(`const foreign = ${helpers.proto}(o) !== ${helpers.objectProto};`);
  src.line('let v, m, big, defaults;');
  plan.props.forEach((prop, index) => writeProperty(src, prop, index, runtime, helpers));
  src.line('return out;');

  const body = [
    '"use strict";',
    ...src.refs.map((_, i) => `const r${i} = R[${i}];`),
    'return function validateObject(o, path, issues, depth) {',
    ...src.lines.map((text) => `  ${text}`),
    '};',
  ].join('\n');
  return new Function('R', body)(src.refs) as ClassFn;
}

type Helpers = Record<
  | 'proto'
  | 'objectProto'
  | 'enumerable'
  | 'pushAt'
  | 'pushTooDeep'
  | 'copy'
  | 'tooDeep'
  | 'nest'
  | 'defaults',
  string
>;

function writeProperty(
  src: Source,
  prop: PropPlan,
  index: number,
  runtime: ValidationRuntime,
  h: Helpers,
): void {
  const { ref } = src;
  const key = JSON.stringify(prop.name);
  const label = `p${index}`;
  const field = `(path === "" ? ${key} : path + ${JSON.stringify('.' + prop.name)})`;

  src.line(`${label}: {`);
  src.line(`v = o[${key}];`);
  src.line(`if (v !== undefined && foreign && !${h.enumerable}.call(o, ${key})) v = undefined;`);
  if (prop.hasDefault) {
    src.line(`if (v === undefined) v = (defaults || (defaults = ${h.defaults}()))[${key}];`);
    if (prop.convert) src.line(`else v = ${ref(prop.convert)}(v);`);
  } else if (prop.convert) {
    src.line(`if (v !== undefined) v = ${ref(prop.convert)}(v);`);
  }
  if (!prop.nested) {
    src.line(`if (v !== null && typeof v === "object") {`);
    src.line(`  v = ${h.copy}(v, depth);`);
    src.line(`  if (v === ${h.tooDeep}) { ${h.pushTooDeep}(issues, ${field}); break ${label}; }`);
    src.line('}');
  }

  const conditions: string[] = [];
  if (prop.optional) conditions.push('v !== null', 'v !== undefined');
  for (const condition of prop.conditions) conditions.push(`${ref(condition)}(o, v)`);
  if (conditions.length > 0) src.line(`if (${conditions.join(' && ')}) {`);

  if (prop.sizeGuard !== undefined)
    src.line(`big = Array.isArray(v) && !(v.length <= ${ref(prop.sizeGuard)});`);
  else src.line('big = false;');

  for (const group of prop.groups) {
    if (group.length === 1) {
      writeCheck(src, group[0], (message) => `${h.pushAt}(issues, path, ${key}, ${message}, v);`);
    } else {
      src.line('m = undefined;');
      for (const check of group) writeCheck(src, check, (message) => `m = ${message};`);
      src.line(`if (m !== undefined) ${h.pushAt}(issues, path, ${key}, m, v);`);
    }
  }

  if (prop.nested) {
    const nested = ref(prop.nested);
    src.line('if (v !== undefined && !big) {');
    if (prop.nested.child) {
      const child = ref(runtime.fnFor(prop.nested.child));
      src.line(
        `  if (v !== null && typeof v === "object" && !Array.isArray(v) && depth < ${ref(runtime.maxDepth)}) v = ${child}(v, ${field}, issues, depth + 1);`,
      );
      src.line(`  else v = ${h.nest}(${nested}, v, ${field}, issues, depth);`);
    } else {
      src.line(`  v = ${h.nest}(${nested}, v, ${field}, issues, depth);`);
    }
    src.line('}');
  }

  if (conditions.length > 0) src.line('}');
  src.line(`if (v !== undefined) out[${key}] = v;`);
  src.line('}');
}

/** Writes one constraint; `onFail(messageExpression)` is the statement run when it fails. */
function writeCheck(src: Source, check: CheckPlan, onFail: (message: string) => string): void {
  const { ref } = src;
  const message =
    check.staticMessage !== undefined ? ref(check.staticMessage) : `${ref(check.message)}(o, v)`;
  const fail = onFail(message);
  const open = check.validateIf ? `if (${ref(check.validateIf)}(o, v)) {` : '';
  if (open) src.line(open);
  if (!check.inline) {
    src.line(`if (!${ref(check.run)}(o, v, big)) ${fail}`);
  } else if (check.each) {
    src.line('if (Array.isArray(v)) {');
    src.line(
      `  if (!big) for (let i = 0; i < v.length; i++) { const e = v[i]; if (!(${check.inline.expr('e', ref)})) { ${fail} break; } }`,
    );
    src.line(`} else if (!(${check.inline.expr('v', ref)})) ${fail}`);
  } else {
    src.line(`if (!(${check.inline.expr('v', ref)})) ${fail}`);
  }
  if (open) src.line('}');
}
