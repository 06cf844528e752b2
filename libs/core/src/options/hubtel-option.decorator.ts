import { Type } from 'class-transformer';
import {
  Allow,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

// One declaration per option: `@HubtelOption` gives its rule (as the class-validator decorators it
// stands for), default, environment variable and account rule. Kept here, not in class-validator's
// storage: the options validator refuses rules it cannot compile, and these are not rules.

/**
 * How a named account (`registerAccount`, a resolver) gets an option it leaves out:
 * - `inherited` (the default): the default account's value.
 * - `own`: never inherited, required: an account never acts with another's keys.
 * - `ownIfDefault`: never inherited, required if the default has it (`statusCheck`: none left unverified).
 * - `notInherited`: the account's own or none (a POS Sales ID, a path secret).
 * - `defaultOnly`: an option of the whole module, set on the default account only (refused on a named one).
 * - `merged`: a section, field by field, each by its rule (a `retry.maxAttempts` keeps the default's delays).
 * An `own` or `ownIfDefault` section the account gives takes from the default's the fields its
 * class declares `inherited` (the status check's URL and time-out: no credentials).
 */
export type HubtelAccountRule =
  'inherited' | 'own' | 'ownIfDefault' | 'notInherited' | 'defaultOnly' | 'merged';

/** An optional rule's bounds: `1` (from 1), `[0, 60_000]` (from 0 to 60000). */
type Bounds = number | readonly [min: number, max: number];

/** What an option may be (each rule makes it optional: absent or null), and what follows from it. */
export interface HubtelOptionSpec {
  /** A whole (`int`) or finite (`number`) number within these bounds. */
  int?: Bounds;
  number?: Bounds;
  bool?: true;
  oneOf?: readonly unknown[];
  /** A section checked as `type` declares (its fields declared there too): sets `section`. */
  nested?: () => Function;
  /** Further rules of an optional field (`IsHubtelPosSalesId()`). */
  is?: PropertyDecorator;
  /** An absolute http(s) URL, parsed at bootstrap (trailing slashes trimmed: see resolveUrl). */
  url?: true;
  /** Cross-field, defaults filled in: at least (at most) this option of the same section. */
  atLeast?: string;
  atMost?: string;
  /** The value when the option is not given (nor null). */
  default?: unknown;
  /** A default from other options: gets the section (given fields, earlier defaults) and the root. */
  defaultFrom?: (section: Record<string, unknown>, root: Record<string, unknown>) => unknown;
  /** The environment variable of the default account (`HUBTEL_SMS_SENDER_ID`). */
  env?: string;
  /**
   * A section read from the environment whole or not at all: present when each of its `own` fields
   * is set; a named account's is its own, whole, when the default account has it or it sets any.
   */
  envWhole?: true;
  account?: HubtelAccountRule;
  /** A section whose fields `section()` declares: set by `nested`, or given for one checked elsewhere. */
  section?: () => Function;
}

/** One declared field: its name, its spec, and the type TypeScript emitted for it (`design:type`). */
export interface HubtelOptionField {
  key: string;
  spec: HubtelOptionSpec;
  type?: Function;
}

const DECLARED = new WeakMap<Function, Map<string, HubtelOptionField>>();

function declare(target: object, key: string | symbol, spec: HubtelOptionSpec): void {
  const owner = target.constructor;
  let fields = DECLARED.get(owner);
  if (!fields) DECLARED.set(owner, (fields = new Map()));
  const name = String(key);
  const type = (
    Reflect as { getMetadata?: (k: string, t: object, p: string | symbol) => unknown }
  ).getMetadata?.('design:type', target, key) as Function | undefined;
  const known = fields.get(name);
  fields.set(name, { key: name, spec: { ...known?.spec, ...spec }, type: known?.type ?? type });
}

/**
 * Several class-validator rules as one decorator. Applied last to first, as stacked decorators are: the
 * schema converter lets a later `@IsInt` win over `@Min`'s plain number type.
 */
export function rules(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => {
    for (const decorator of [...decorators].reverse()) decorator(target, property);
  };
}

function bounds(range: Bounds): PropertyDecorator[] {
  const [min, max] = typeof range === 'number' ? [range] : range;
  return [Min(min), ...(max === undefined ? [] : [Max(max)])];
}

/** The class-validator decorators `spec`'s rule stands for. */
function ruleDecorators(spec: HubtelOptionSpec): PropertyDecorator[] {
  const { int, number, bool, oneOf, nested, is } = spec;
  const found = [
    ...(int === undefined ? [] : [IsInt(), ...bounds(int)]),
    ...(number === undefined ? [] : [IsNumber({ allowNaN: false, allowInfinity: false }), ...bounds(number)]),
    ...(bool ? [IsBoolean()] : []),
    ...(oneOf ? [IsIn([...oneOf])] : []),
    ...(nested ? [IsObject(), ValidateNested(), Type(nested)] : []),
    ...(is ? [is] : []),
  ];
  // A field checked elsewhere (in code, or by another decorator) is still copied by the check.
  return found.length > 0 ? [IsOptional(), ...found] : [Allow()];
}

/** Declares an option's rule, default, environment variable and account rule (see HubtelOptionSpec). */
export function HubtelOption(spec: HubtelOptionSpec = {}): PropertyDecorator {
  const declared = spec.nested ? { ...spec, section: spec.nested } : spec;
  return rules(...ruleDecorators(spec), (target, key) => declare(target, key, declared));
}

/** An options class's declared fields, ancestors' first (a redeclared field's spec merged field by field). */
export function optionFields(options: Function): HubtelOptionField[] {
  const chain: Function[] = [];
  for (
    let type = options;
    type && type !== Function.prototype;
    type = Object.getPrototypeOf(type) as Function
  )
    chain.unshift(type);
  const fields = new Map<string, HubtelOptionField>();
  for (const type of chain)
    for (const [key, field] of DECLARED.get(type) ?? []) {
      const known = fields.get(key);
      fields.set(key, known ? { ...field, spec: { ...known.spec, ...field.spec } } : field);
    }
  return [...fields.values()];
}

/** The rule of `field` for named accounts. */
export function accountRule(field: HubtelOptionField): HubtelAccountRule {
  return field.spec.account ?? 'inherited';
}
