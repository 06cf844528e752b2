import type { ValidationIssue } from '../errors/hubtel.errors.js';
import type { CheckPlan, ClassPlan, PropPlan } from './validation.metadata.js';
import { joinPath, TOO_DEEP_MARK, type ClassFn, type ValidationRuntime } from './validation.runtime.js';

/*
 * The closure engine: runs a class plan with pre-built closures, no code generation. Same steps,
 * same order as the code the codegen engine writes (validation.codegen.ts); the differential tests
 * run both. Used where `new Function` is not allowed, and as the readable reference.
 */

const isEnumerable = Object.prototype.propertyIsEnumerable;

function checkPasses(check: CheckPlan, object: object, value: unknown, tooBig: boolean): boolean {
  if (!check.inline) return check.run!(object, value, tooBig);
  if (check.each && Array.isArray(value)) {
    if (tooBig) return true;
    for (let i = 0; i < value.length; i++) if (!check.inline.test(value[i])) return false;
    return true;
  }
  return check.inline.test(value);
}

export function closureClassFn(plan: ClassPlan, runtime: ValidationRuntime): ClassFn {
  const props = plan.props;
  const createDefaults = plan.createDefaults;
  const children = new Map<PropPlan, ClassFn>();
  for (const prop of props) if (prop.nested?.child) children.set(prop, runtime.fnFor(prop.nested.child));

  return (object, path, issues: ValidationIssue[], depth) => {
    const out: Record<string, unknown> = {};
    // A plain JSON object only inherits from Object.prototype; anything else is read own-keys only,
    // like class-transformer's Object.keys() copy.
    const foreign = Object.getPrototypeOf(object) !== Object.prototype;
    let defaults: Record<string, unknown> | undefined;

    for (const prop of props) {
      const name = prop.name;
      let value = object[name];
      if (value !== undefined && foreign && !isEnumerable.call(object, name)) value = undefined;
      if (value === undefined) {
        if (prop.hasDefault) value = (defaults ??= createDefaults!())[name];
      } else if (prop.convert) {
        value = prop.convert(value);
      }
      if (!prop.nested && value !== null && typeof value === 'object') {
        value = runtime.copyPlain(value, depth);
        if (value === TOO_DEEP_MARK) {
          runtime.pushTooDeep(issues, joinPath(path, name));
          continue;
        }
      }

      let active = !(prop.optional && (value === null || value === undefined));
      for (let i = 0; active && i < prop.conditions.length; i++) active = !!prop.conditions[i](object, value);
      if (active) {
        const sizeGuard = prop.sizeGuard;
        const tooBig =
          sizeGuard !== undefined && Array.isArray(value) && !(value.length <= (sizeGuard as number));
        for (const group of prop.groups) {
          let message: string | undefined;
          for (const check of group) {
            if (check.validateIf && !check.validateIf(object, value)) continue;
            if (!checkPasses(check, object, value, tooBig))
              message = check.staticMessage ?? check.message(object, value);
          }
          if (message !== undefined) runtime.pushAt(issues, path, name, message, value);
        }
        if (prop.nested && value !== undefined && !tooBig) {
          const child = children.get(prop);
          const field = joinPath(path, name);
          value =
            child &&
            value !== null &&
            typeof value === 'object' &&
            !Array.isArray(value) &&
            depth < runtime.maxDepth
              ? child(value as Record<string, unknown>, field, issues, depth + 1)
              : runtime.nest(prop.nested, value, field, issues, depth);
        }
      }
      if (value !== undefined) out[name] = value;
    }
    return out;
  };
}
