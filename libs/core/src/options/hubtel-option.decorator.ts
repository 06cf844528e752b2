/*
 * One declaration per option. A module's options class is its public type; each field carries its
 * class-validator rules, and `@HubtelOption` adds what the rest of the suite derives from it: the
 * default filled in at bootstrap, the environment variable that feeds it (`*OptionsFromEnv`, and
 * `HUBTEL_<NAME>_…` for a named account), and how a named account gets it from the default one.
 * The metadata lives here, not in class-validator's storage: the options validator refuses rules
 * it cannot compile, and these are not rules.
 */

/**
 * How a named account (`registerAccount`, a resolver) gets an option it leaves out:
 * - `inherited` (the default): the default account's value.
 * - `own`: never inherited, required: an account never acts with another's keys.
 * - `ownIfDefault`: never inherited, required when the default account has it (the service app's
 *   `statusCheck`: an account is never left unverified where the default one is verified).
 * - `notInherited`: the account's own or none (a POS Sales ID, a path secret).
 * - `defaultOnly`: an option of the whole module, set on the default account only (refused on a named one).
 * - `merged`: a section merged field by field (a named account's `retry.maxAttempts` keeps the
 *   default's delays), its fields following their own rules.
 * An `own` or `ownIfDefault` section the account gives takes from the default's the fields its
 * class declares `inherited` (the status check's URL and time-out: no credentials).
 */
export type HubtelAccountRule =
  'inherited' | 'own' | 'ownIfDefault' | 'notInherited' | 'defaultOnly' | 'merged';

export interface HubtelOptionSpec {
  /** The value when the option is not given (nor null). */
  default?: unknown;
  /**
   * A default that depends on other options: called with the section being resolved (its given
   * fields and the defaults of the fields declared before this one) and the whole options object.
   */
  defaultFrom?: (section: Record<string, unknown>, root: Record<string, unknown>) => unknown;
  /** The environment variable of the default account (`HUBTEL_SMS_SENDER_ID`). */
  env?: string;
  account?: HubtelAccountRule;
  /**
   * A section (an object of options) whose fields are declared on `section()`. Set by
   * `IsOptionalSection` for validated sections; given here for a section checked elsewhere.
   */
  section?: () => Function;
}

/** One declared field: its name, its spec, and the type TypeScript emitted for it. */
export interface HubtelOptionField {
  key: string;
  spec: HubtelOptionSpec;
  /** `String`, `Number`, `Boolean`, a section class, `Object` for unions (emitted decorator metadata). */
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

/** Declares an option's default, environment variable and account rule (see HubtelOptionSpec). */
export function HubtelOption(spec: HubtelOptionSpec = {}): PropertyDecorator {
  return (target, key) => declare(target, key, spec);
}

/**
 * The declared fields of an options class, its ancestors' first (a subclass re-declaring a field,
 * to give it a variable of its own, overrides its spec field by field).
 */
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
