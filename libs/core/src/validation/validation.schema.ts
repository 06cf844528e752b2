import {
  getMetadataStorage,
  IS_DEFINED,
  IS_IN,
  IS_NOT_EMPTY,
  IS_OPTIONAL,
  MATCHES,
  MAX_LENGTH,
  ValidationTypes,
} from 'class-validator';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import { plainToInstance } from 'class-transformer';
import { HubtelError } from '../errors/hubtel.errors.js';

/** Names on Object.prototype; `__proto__` is left to the hostile-structure check (it cannot be a schema key). */
const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype).filter((name) => name !== '__proto__');

/** `$comment` of the schema of an Object.prototype name: accepted, never a known field. */
export const IGNORED = 'Object.prototype name, ignored';

export type JsonSchema = Record<string, unknown>;

type Metadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/**
 * The class-validator rules a DTO may use, each as JSON Schema accepting exactly what it accepts on
 * parsed JSON (`cv*` keywords where they differ); any other rule is refused when the validator is built.
 */
const CONVERTERS: Record<string, (meta: Metadata) => JsonSchema> = {
  isString: () => ({ type: 'string' }),
  isNumber: (meta) => {
    const options = (meta.constraints?.[0] ?? {}) as Record<string, unknown>;
    // Ajv's numbers are finite (strictNumbers), as class-validator's are by default.
    if (options.allowNaN || options.allowInfinity || options.maxDecimalPlaces !== undefined)
      unsupported(meta, '@IsNumber allowing NaN or Infinity, or with maxDecimalPlaces');
    return { type: 'number' };
  },
  isInt: () => ({ type: 'integer' }),
  isBoolean: () => ({ type: 'boolean' }),
  isObject: () => ({ type: 'object' }),
  min: (meta) => ({ type: 'number', minimum: meta.constraints[0] as number }),
  isPositive: () => ({ type: 'number', exclusiveMinimum: 0 }),
  max: (meta) => ({ type: 'number', maximum: meta.constraints[0] as number }),
  [IS_IN]: (meta) => {
    const values = meta.constraints[0] as unknown[];
    if (!values.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v)))
      unsupported(meta, '@IsIn with non-primitive values');
    return { enum: values };
  },
  [MAX_LENGTH]: (meta) => ({ type: 'string', cvMaxLength: meta.constraints[0] as number }),
  [MATCHES]: (meta) => {
    const pattern = meta.constraints[0] as RegExp | string;
    const regex = typeof pattern === 'string' ? new RegExp(pattern, meta.constraints[1] as string) : pattern;
    if (regex.global || regex.sticky) unsupported(meta, 'a /g or /y pattern (stateful)');
    const message = typeof meta.message === 'string' ? meta.message : undefined;
    return { type: 'string', cvMatches: { source: regex.source, flags: regex.flags, message } };
  },
  [IS_NOT_EMPTY]: () => ({ cvNotEmpty: true }),
  [IS_DEFINED]: () => ({ cvDefined: true }),
  [ValidationTypes.WHITELIST]: () => ({}),
};

function unsupported(meta: Metadata, what: string): never {
  const owner = (meta.target as Function).name;
  throw new HubtelError(
    'HUBTEL_CONFIG_INVALID',
    `${owner}.${meta.propertyName}: ${what} has no exact JSON Schema form; the validator does not support it`,
  );
}

/** The rule's name: `isString`, `maxLength`..., or the metadata type for the non-constraint kinds. */
function ruleName(meta: Metadata): string {
  if (meta.type === ValidationTypes.CONDITIONAL_VALIDATION) return meta.name ?? 'validateIf';
  if (meta.type !== ValidationTypes.CUSTOM_VALIDATION || !meta.constraintCls) return meta.type;
  return getMetadataStorage().getTargetValidatorConstraints(meta.constraintCls)[0]?.name ?? 'custom';
}

interface PropertyPlan {
  optional: boolean;
  required: boolean;
  nested?: Function;
}

/** Checks every rule of a class is one we convert exactly, and reads optional/required/nested. */
function planClass(cls: Function): Map<string, PropertyPlan> {
  const metas = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false);
  if (metas.length === 0)
    throw new HubtelError('HUBTEL_CONFIG_INVALID', `${cls.name} declares no class-validator rules`);
  const plans = new Map<string, PropertyPlan>();
  const kinds = new Set<string>();
  for (const meta of metas) {
    const name = ruleName(meta);
    if (meta.groups?.length || meta.always || meta.each)
      unsupported(meta, `@${name} with groups, always or each`);
    // Two rules of one kind on a property would merge into one schema keyword (the last wins).
    const seen = `${meta.propertyName}\0${name}`;
    if (name !== ValidationTypes.WHITELIST && kinds.has(seen))
      unsupported(meta, `@${name} twice on one property (combine them into one)`);
    kinds.add(seen);
    const plan = plans.get(meta.propertyName) ?? { optional: false, required: false };
    plans.set(meta.propertyName, plan);
    if (name === IS_OPTIONAL) plan.optional = true;
    else if (meta.type === ValidationTypes.NESTED_VALIDATION) plan.nested = nestedClass(meta);
    else if (!CONVERTERS[name]) unsupported(meta, `@${name}`);
    // Every supported rule but @Allow refuses undefined, so a property with one is required.
    else if (name !== ValidationTypes.WHITELIST) plan.required = true;
  }
  for (const [property, plan] of plans) {
    // @ValidateNested alone would pass undefined but refuse null; require @IsObject beside it.
    if (plan.nested && !metas.some((m) => m.propertyName === property && ruleName(m) === 'isObject'))
      throw new HubtelError(
        'HUBTEL_CONFIG_INVALID',
        `${cls.name}.${property}: @ValidateNested() needs @IsObject() beside it`,
      );
    if (plan.optional) plan.required = false;
  }
  return plans;
}

/** The class `@Type()` builds there, found by a probe (`design:type` emits `X | null` as Object). */
function nestedClass(meta: Metadata): Function {
  const owner = meta.target as new () => object;
  const probe = plainToInstance(owner, { [meta.propertyName]: {} }) as Record<string, unknown>;
  const type = (probe[meta.propertyName] as object | undefined)?.constructor;
  if (!type || type === Object || type === Array)
    unsupported(meta, '@ValidateNested() without @Type(() => SomeDto)');
  return type;
}

/** The JSON Schema of a DTO class and of every DTO class it nests (`definitions`, by unique names). */
export function dtoJsonSchema(root: Function, options: { forbidUnknown?: boolean } = {}): DtoSchema {
  const names = new Map<Function, string>();
  const definitions: Record<string, JsonSchema> = {};
  const shapes = new Map<string, DtoShape>();
  const nameOf = (cls: Function): string => {
    let name = names.get(cls);
    if (name === undefined) {
      name = cls.name || 'Dto';
      while (Object.hasOwn(definitions, name) || [...names.values()].includes(name)) name += '_';
      names.set(cls, name);
      queue.push(cls);
    }
    return name;
  };
  const queue: Function[] = [];
  const rootName = nameOf(root);
  while (queue.length > 0) {
    const cls = queue.shift()!;
    const plans = planClass(cls);
    const converted = targetConstructorToSchema(cls, {
      additionalConverters: {
        ...CONVERTERS,
        [ValidationTypes.NESTED_VALIDATION]: (meta: Metadata) => ({
          $ref: `#/definitions/${nameOf(nestedClass(meta))}`,
        }),
      },
    }) as JsonSchema;
    const properties = (converted.properties ?? {}) as Record<string, JsonSchema>;
    const shape: DtoShape = { keys: [...plans.keys()], nested: {} };
    for (const [property, plan] of plans) {
      const schema = properties[property] ?? {};
      if (plan.nested) shape.nested[property] = names.get(plan.nested)!;
      // `if null then (nothing) else rules`: null skips the rules, as @IsOptional() does.
      properties[property] = plan.optional ? { if: { type: 'null' }, else: schema } : schema;
    }
    const required = [...plans].filter(([, plan]) => plan.required).map(([property]) => property);
    // class-transformer never copies Object.prototype names (toString, valueOf...) onto an
    // instance, so class-validator's whitelist never sees them: accepted, and left out of `value`.
    if (options.forbidUnknown)
      for (const name of PROTOTYPE_NAMES)
        if (!Object.hasOwn(properties, name)) properties[name] = { $comment: IGNORED };
    definitions[names.get(cls)!] = {
      type: 'object',
      properties,
      required,
      // class-validator's `whitelist` + `forbidNonWhitelisted`: an undeclared field is refused.
      ...(options.forbidUnknown ? { additionalProperties: false } : {}),
    };
    shapes.set(names.get(cls)!, shape);
  }
  return { schema: { $ref: `#/definitions/${rootName}`, definitions }, root: rootName, shapes };
}

export interface DtoSchema {
  schema: JsonSchema;
  /** The root DTO's name in `definitions` and `shapes`. */
  root: string;
  shapes: Map<string, DtoShape>;
}

/** The declared properties of a DTO and the names of its nested DTOs, to copy an accepted body. */
export interface DtoShape {
  keys: string[];
  nested: Record<string, string>;
}
