import { HubtelLogger } from '../logging/hubtel-logger.js';
import { TransformationType, Type } from 'class-transformer';
import { defaultMetadataStorage as transformerStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import type { ValidationArguments, ValidatorConstraintInterface } from 'class-validator';
import { HubtelError } from '../errors/hubtel.errors.js';
import { INLINE_CHECKS, type InlineCheck } from './validation.checks.js';
import { replaceMessageTokens } from './validation.messages.js';

/*
 * Reads class-validator's and class-transformer's decorator metadata into a plan: per DTO class,
 * per property, what `validateSync(plainToInstance(Dto, input))` would check, in the order it would
 * report it. The two engines (validation.codegen.ts, validation.closures.ts) run plans; neither
 * reads metadata itself.
 */

// class-validator does not export these shapes; they are its ValidationMetadata/ConstraintMetadata.
type ValidatorStorage = ReturnType<typeof getMetadataStorage>;
export type CvMetadata = ReturnType<ValidatorStorage['getTargetValidationMetadatas']>[number] & {
  validateIf?: (object: object, value: unknown) => boolean;
};
type CvConstraint = ReturnType<ValidatorStorage['getTargetValidatorConstraints']>[number];

export type Condition = (object: object, value: unknown) => boolean;
export type MessageFn = (object: object, value: unknown) => string;

export interface CheckPlan {
  /** class-validator's key for the constraint (`isString`, a custom constraint's name, ...). */
  key: string;
  each: boolean;
  validateIf?: Condition;
  /** Evaluated by the compiler itself (one element at a time when `each`). */
  inline?: InlineCheck;
  /** Otherwise: class-validator's own constraint, whole value (handles `each`; `skipEach` skips elements). */
  run?: (object: object, value: unknown, skipEach: boolean) => boolean;
  /** Message when it does not depend on the value; otherwise `message` builds it on failure. */
  staticMessage?: string;
  message: MessageFn;
}

export interface NestedPlan {
  /** The `@Type()` class; undefined when there is none (or it declares nothing): copied, not checked. */
  child?: ClassPlan;
  staticMessage?: string;
  message: (value: unknown) => string;
}

export interface PropPlan {
  name: string;
  /** The class initialises this property: a missing value takes the default (as `new Dto()` would). */
  hasDefault: boolean;
  /** `@Type(() => String | Number | Boolean | Date)`: class-transformer's conversion. */
  convert?: (value: unknown) => unknown;
  /** `@IsOptional()`: null or undefined skips every check. */
  optional: boolean;
  /** `@ValidateIf()` conditions. */
  conditions: Condition[];
  /** Constraint groups in report order; a group holds the constraints sharing one key (last failure wins). */
  groups: CheckPlan[][];
  nested?: NestedPlan;
  /** `@ArrayMaxSize(n)`: an array longer than n is rejected without visiting its elements. */
  sizeGuard?: unknown;
}

export interface ClassPlan {
  cls: Function;
  name: string;
  /** `compiled`: the engines check it. `fallback`: class-validator checks it (see `fallbackReason`). */
  mode: 'compiled' | 'fallback';
  fallbackReason?: string;
  props: PropPlan[];
  createDefaults?: () => Record<string, unknown>;
}

export interface PlanOptions {
  groups?: string[];
  always: boolean;
  strictGroups: boolean;
}

const logger = new HubtelLogger('HubtelValidation');

let transformerStorageUsable: boolean | undefined;

/**
 * The deep import above is only worth trusting if it is the instance the user's `@Type()`
 * decorators write to (a bundler could load a second copy). A canary class decorated through the
 * public `Type` export must show up in it; otherwise every class falls back to class-validator.
 */
export function classTransformerMetadataReachable(): boolean {
  if (transformerStorageUsable !== undefined) return transformerStorageUsable;
  try {
    class CanaryChild {}
    class Canary {}
    Type(() => CanaryChild)(Canary.prototype, 'child');
    const found = transformerStorage.findTypeMetadata(Canary, 'child');
    transformerStorageUsable = found?.typeFunction?.() === CanaryChild;
  } catch {
    transformerStorageUsable = false;
  }
  if (!transformerStorageUsable) {
    logger.warn(
      'class-transformer metadata is not reachable (a second copy of class-transformer?): DTOs are validated by class-validator itself, slower but identical',
    );
  }
  return transformerStorageUsable;
}

const configError = (message: string): HubtelError => new HubtelError('HUBTEL_CONFIG_INVALID', message);

const isPromiseLike = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';

const isSubclassOf = (candidate: unknown, base: Function): boolean =>
  typeof candidate === 'function' && (candidate === base || candidate.prototype instanceof base);

/** Values the compile-time self-check feeds both an inline check and class-validator's own function. */
function probeValues(constraints: readonly unknown[]): unknown[] {
  const values: unknown[] = [
    undefined,
    null,
    '',
    ' ',
    'a',
    'abc',
    'A1',
    '0',
    '1',
    '1.5',
    'true',
    'x'.repeat(300),
    '\u{1F600}\u{1F600}',
    'e\uFE0F',
    0,
    -0,
    1,
    -1,
    0.5,
    1.005,
    12.34,
    1e-7,
    1e21,
    100,
    1000,
    NaN,
    Infinity,
    -Infinity,
    true,
    false,
    [],
    [1],
    ['a'],
    Array.from({ length: 11 }, (_, i) => i),
    {},
    { a: 1 },
  ];
  const add = (constraint: unknown): void => {
    values.push(constraint);
    if (typeof constraint === 'number' && Number.isFinite(constraint)) {
      values.push(constraint - 1, constraint + 1, constraint - 0.5, constraint + 0.5);
      if (constraint >= 0 && constraint <= 2048) {
        for (const n of [
          constraint - 1,
          constraint,
          constraint + 1,
          2 * constraint,
          3 * constraint,
          3 * constraint + 1,
        ]) {
          if (n < 0) continue;
          values.push('a'.repeat(n), '\u{1F600}'.repeat(n), 'a\uFE0F'.repeat(n), '\u{1F600}\uFE0F'.repeat(n));
          values.push(Array.from({ length: n }, () => 'a'));
        }
      }
    } else if (Array.isArray(constraint)) {
      constraint.forEach(add);
    } else if (constraint !== null && typeof constraint === 'object' && !(constraint instanceof RegExp)) {
      Object.keys(constraint).forEach((key) => values.push((constraint as Record<string, unknown>)[key]));
    }
  };
  constraints.forEach(add);
  return values;
}

export class ValidationPlanner {
  private readonly validators: ValidatorStorage = getMetadataStorage();
  private readonly plans = new Map<Function, ClassPlan>();
  private readonly useTransformerMetadata = classTransformerMetadataReachable();

  constructor(private readonly options: PlanOptions) {}

  plan(cls: Function): ClassPlan {
    const known = this.plans.get(cls);
    if (known) return known;
    const plan: ClassPlan = { cls, name: cls.name, mode: 'compiled', props: [] };
    // Registered before its properties are planned, so a DTO that nests itself terminates.
    this.plans.set(cls, plan);
    this.fill(plan);
    return plan;
  }

  /** Whether class-validator knows any rule for the class, in any group. */
  declaresRules(cls: Function): boolean {
    return (
      this.validators.getTargetValidationMetadatas(
        cls,
        undefined as unknown as string,
        true,
        false,
        undefined,
      ).length > 0
    );
  }

  private metadatas(cls: Function): CvMetadata[] {
    const { groups, always, strictGroups } = this.options;
    return this.validators.getTargetValidationMetadatas(
      cls,
      undefined as unknown as string,
      always,
      strictGroups,
      groups,
    ) as CvMetadata[];
  }

  private fill(plan: ClassPlan): void {
    const cls = plan.cls;
    const grouped = new Map<string, CvMetadata[]>();
    for (const metadata of this.metadatas(cls)) {
      // class-validator groups with Object.keys(): symbol-keyed rules never run.
      if (typeof metadata.propertyName !== 'string') continue;
      const list = grouped.get(metadata.propertyName);
      if (list) list.push(metadata);
      else grouped.set(metadata.propertyName, [metadata]);
    }

    const fallback = (reason: string): void => {
      if (plan.mode === 'compiled') {
        plan.mode = 'fallback';
        plan.fallbackReason = reason;
      }
    };
    if (!this.useTransformerMetadata) fallback('class-transformer metadata not reachable');
    else if (
      transformerStorage.getStrategy(cls) !== 'none' ||
      transformerStorage.getExposedMetadatas(cls).length > 0 ||
      transformerStorage.getExcludedMetadatas(cls).length > 0
    ) {
      fallback('uses @Expose/@Exclude');
    }

    let sample: Record<string, unknown> | undefined;
    try {
      sample = new (cls as new () => Record<string, unknown>)();
    } catch {
      sample = undefined; // class-transformer would throw for every input; nothing to default
    }

    for (const [name, metadatas] of grouped) {
      if (name in Object.prototype) {
        throw configError(
          `${cls.name}.${name}: a DTO property cannot be named like an Object.prototype member`,
        );
      }
      for (
        let proto = cls.prototype;
        proto && proto !== Object.prototype;
        proto = Object.getPrototypeOf(proto)
      ) {
        if (Object.getOwnPropertyDescriptor(proto, name)) fallback(`${name} is an accessor or method`);
      }
      if (
        this.useTransformerMetadata &&
        transformerStorage.findTransformMetadatas(cls, name, TransformationType.PLAIN_TO_CLASS).length > 0
      ) {
        fallback(`${name} uses @Transform`);
      }
      plan.props.push(this.planProperty(plan, name, metadatas, sample, fallback));
    }
    if (sample && plan.props.some((prop) => prop.hasDefault)) {
      plan.createDefaults = () => new (cls as new () => Record<string, unknown>)();
    }
  }

  private planProperty(
    plan: ClassPlan,
    name: string,
    metadatas: CvMetadata[],
    sample: Record<string, unknown> | undefined,
    fallback: (reason: string) => void,
  ): PropPlan {
    const prop: PropPlan = {
      name,
      hasDefault:
        !!sample && Object.prototype.hasOwnProperty.call(sample, name) && sample[name] !== undefined,
      optional: false,
      conditions: [],
      groups: [],
    };

    // @Type(): a class to nest, a primitive to convert to, or something only class-transformer does.
    let typeTarget: unknown;
    const typeMetadata = this.useTransformerMetadata
      ? transformerStorage.findTypeMetadata(plan.cls, name)
      : undefined;
    if (typeMetadata) {
      if (typeMetadata.options?.discriminator) fallback(`${name} uses a @Type discriminator`);
      if (isSubclassOf(typeMetadata.reflectedType, Map) || isSubclassOf(typeMetadata.reflectedType, Set)) {
        fallback(`${name} is a Map or Set`);
      }
      try {
        typeTarget = typeMetadata.typeFunction
          ? typeMetadata.typeFunction({ newObject: {}, object: {}, property: name })
          : typeMetadata.reflectedType;
      } catch {
        fallback(`${name}: its @Type() function throws`);
      }
      if (typeTarget === String) prop.convert = convertWith((value) => String(value));
      else if (typeTarget === Number) prop.convert = convertWith((value) => Number(value));
      else if (typeTarget === Boolean) prop.convert = convertWith((value) => Boolean(value));
      else if (typeTarget === Date) {
        prop.convert = convertWith((value) =>
          value instanceof Date ? new Date(value.valueOf()) : new Date(value as string),
        );
      } else if (
        isSubclassOf(typeTarget, Map) ||
        isSubclassOf(typeTarget, Set) ||
        isSubclassOf(typeTarget, Promise) ||
        (typeof Buffer !== 'undefined' && isSubclassOf(typeTarget, Buffer))
      ) {
        fallback(`${name}: @Type() to ${(typeTarget as Function).name}`);
      }
    }

    const defined: CvMetadata[] = [];
    const custom: CvMetadata[] = [];
    const nested: CvMetadata[] = [];
    for (const metadata of metadatas) {
      switch (metadata.type) {
        case ValidationTypes.IS_DEFINED:
          defined.push(metadata);
          break;
        case ValidationTypes.CUSTOM_VALIDATION:
          custom.push(metadata);
          break;
        case ValidationTypes.NESTED_VALIDATION:
          nested.push(metadata);
          break;
        case ValidationTypes.CONDITIONAL_VALIDATION:
          if (metadata.name === 'isOptional') prop.optional = true;
          else prop.conditions.push(metadata.constraints[0] as Condition);
          break;
        case ValidationTypes.WHITELIST: // @Allow(): declares the property, checks nothing
        case ValidationTypes.PROMISE_VALIDATION: // only acts on Promise values, which JSON cannot hold
          break;
        default:
          fallback(`${name}: unknown validation type ${String(metadata.type)}`);
      }
    }

    // class-validator keys failures by constraint name: IsDefined's first, then the others in
    // declaration order; a second failure under the same key overwrites the first.
    const byKey = new Map<string, CheckPlan[]>();
    for (const metadata of [...defined, ...custom]) {
      for (const check of this.planChecks(plan, metadata)) {
        const list = byKey.get(check.key);
        if (list) list.push(check);
        else byKey.set(check.key, [check]);
        if (
          check.key === 'arrayMaxSize' &&
          check.inline &&
          !metadata.each &&
          metadata.name === 'arrayMaxSize'
        ) {
          prop.sizeGuard = (metadata.constraints ?? [])[0];
        }
      }
    }
    prop.groups = [...byKey.values()];

    if (nested.length > 0) {
      const metadata = nested[nested.length - 1];
      const child =
        typeof typeTarget === 'function' &&
        typeTarget !== Object &&
        typeTarget !== Array &&
        !prop.convert &&
        this.declaresRules(typeTarget)
          ? this.plan(typeTarget)
          : undefined;
      prop.nested = { child, ...this.nestedMessage(metadata) };
    }
    return prop;
  }

  private planChecks(plan: ClassPlan, metadata: CvMetadata): CheckPlan[] {
    const constraints = this.validators.getTargetValidatorConstraints(metadata.constraintCls);
    const property = metadata.propertyName;
    const target = `${plan.name}.${property}`;
    return constraints.map((constraint) => {
      if (constraint.async) {
        throw configError(
          `${target}: async constraint "${constraint.name}" cannot run in a synchronous compiled validator`,
        );
      }
      const key = constraint.name ? constraint.name : metadata.type;
      let inline: InlineCheck | undefined;
      const factory =
        constraints.length === 1 && constraint.name === metadata.name
          ? INLINE_CHECKS[metadata.name]
          : undefined;
      if (factory) {
        const candidate = factory(metadata.constraints ?? []);
        if (candidate && this.agrees(candidate, constraint, metadata, plan.name)) inline = candidate;
      }
      const instance = lazyInstance(constraint);
      const message = this.messageBuilder(plan.name, metadata, instance);
      const check: CheckPlan = {
        key,
        each: !!metadata.each,
        message,
        staticMessage: this.staticMessage(plan.name, metadata, inline ? instance : undefined),
      };
      if (metadata.validateIf) check.validateIf = metadata.validateIf;
      if (inline) check.inline = inline;
      else check.run = runner(plan.name, metadata, instance);
      return check;
    });
  }

  /** Self-check: an inline check must agree with class-validator's function on every probe. */
  private agrees(
    inline: InlineCheck,
    constraint: CvConstraint,
    metadata: CvMetadata,
    targetName: string,
  ): boolean {
    let instance: ValidatorConstraintInterface;
    try {
      instance = constraint.instance as ValidatorConstraintInterface;
    } catch {
      return false;
    }
    const args = validationArgs(targetName, metadata, {}, undefined);
    for (const probe of probeValues(metadata.constraints ?? [])) {
      let expected: unknown;
      try {
        expected = instance.validate(probe, { ...args, value: probe });
      } catch {
        continue; // class-validator throws on it (e.g. 1e-7 with maxDecimalPlaces): ours answers
      }
      if (isPromiseLike(expected) || !!expected !== inline.test(probe)) return false;
    }
    return true;
  }

  /** The message when it cannot depend on the value; undefined means "build it on failure". */
  private staticMessage(
    targetName: string,
    metadata: CvMetadata,
    builtIn: (() => ValidatorConstraintInterface) | undefined,
  ): string | undefined {
    if (metadata.message instanceof Function) return undefined;
    const args = validationArgs(targetName, metadata, {}, undefined);
    let template: string;
    if (metadata.message) template = metadata.message;
    else if (!builtIn)
      return undefined; // a custom default message may read the object or value
    else {
      const instance = builtIn();
      if (!(instance.defaultMessage instanceof Function)) template = '';
      else {
        // Built-in default messages are templates; Length's depends on the value, so compare.
        const seen = new Set<string>();
        for (const value of [undefined, null, '', 'abc', 'x'.repeat(300), 0, 1.5, true, [], ['a'], {}]) {
          seen.add(String(instance.defaultMessage({ ...args, value })));
        }
        if (seen.size !== 1) return undefined;
        template = [...seen][0];
      }
    }
    const text = replaceMessageTokens(template, args);
    return text === undefined || text.includes('$value') ? undefined : text;
  }

  private messageBuilder(
    targetName: string,
    metadata: CvMetadata,
    instance: () => ValidatorConstraintInterface,
  ): MessageFn {
    return (object, value) => {
      const args = validationArgs(targetName, metadata, object, value);
      try {
        let message: string | ((args: ValidationArguments) => string) = metadata.message || '';
        if (!metadata.message) {
          const validator = instance();
          if (validator.defaultMessage instanceof Function) message = validator.defaultMessage(args);
        }
        return String(replaceMessageTokens(message, args) ?? '');
      } catch {
        return `${metadata.propertyName} is invalid`;
      }
    };
  }

  /** `@ValidateNested()` on a non-object: class-validator passes the class itself as the object. */
  private nestedMessage(metadata: CvMetadata): Pick<NestedPlan, 'staticMessage' | 'message'> {
    const target = metadata.target as Function;
    const targetName = target.constructor ? target.constructor.name : (undefined as unknown as string);
    const argsFor = (value: unknown): ValidationArguments =>
      validationArgs(targetName, metadata, target, value);
    const message = (value: unknown): string => {
      try {
        return String(replaceMessageTokens(metadata.message, argsFor(value)) ?? '');
      } catch {
        return `nested property ${metadata.propertyName} must be either object or array`;
      }
    };
    let staticMessage: string | undefined;
    if (!(metadata.message instanceof Function)) {
      const text = replaceMessageTokens(metadata.message, argsFor(undefined));
      if (text !== undefined && !text.includes('$value')) staticMessage = text;
    }
    return { staticMessage, message };
  }
}

/** The arguments class-validator hands a constraint and its message for one value. */
function validationArgs(
  targetName: string,
  metadata: CvMetadata,
  object: object,
  value: unknown,
): ValidationArguments {
  return { targetName, property: metadata.propertyName, object, value, constraints: metadata.constraints };
}

/**
 * Constraint instances come from class-validator's container (`useContainer()` may hand out DI
 * instances). Resolved on first use, not at compile time, so a container set at bootstrap is seen.
 */
function lazyInstance(constraint: CvConstraint): () => ValidatorConstraintInterface {
  let instance: ValidatorConstraintInterface | undefined;
  return () => (instance ??= constraint.instance as ValidatorConstraintInterface);
}

/**
 * class-validator's own constraint, called the way ValidationExecutor.customValidations calls it.
 * Differences, both failing closed: a constraint that throws, or answers a Promise from a
 * synchronous validator, rejects the value (class-validator would throw / skip it).
 */
function runner(
  targetName: string,
  metadata: CvMetadata,
  instance: () => ValidatorConstraintInterface,
): (object: object, value: unknown, skipEach: boolean) => boolean {
  const settle = (result: unknown): boolean => !isPromiseLike(result) && !!result;
  return (object, value, skipEach) => {
    const args = validationArgs(targetName, metadata, object, value);
    try {
      const validator = instance();
      if (!metadata.each || !(Array.isArray(value) || value instanceof Set || value instanceof Map)) {
        return settle(validator.validate(value, args));
      }
      if (skipEach) return true;
      const items: unknown[] =
        value instanceof Map ? Array.from(value.values()) : Array.isArray(value) ? value : Array.from(value);
      for (const item of items) if (!settle(validator.validate(item, args))) return false;
      return true;
    } catch {
      return false;
    }
  };
}

/** class-transformer's primitive conversions: element-wise inside arrays, null/undefined kept. */
function convertWith(convert: (value: unknown) => unknown): (value: unknown) => unknown {
  const apply = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(apply);
    if (value === null || value === undefined) return value;
    return convert(value);
  };
  return apply;
}
