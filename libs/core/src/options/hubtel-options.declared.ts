import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { accountEnvVariable } from '../accounts/accounts-env.js';
import { dropUndefined, readEnvNumber, readEnvValue, type HubtelEnvSource } from './hubtel-env.js';
import { checkOptions, isPlainObject } from './hubtel-options.dto.js';
import { assertOptionsObject, resolveUrl } from './hubtel-options.validation.js';
import { accountRule, optionFields, type HubtelOptionField } from './hubtel-option.decorator.js';

// What a module derives from its options class (see HubtelOption): the defaults filled in after
// validation, the options read from the environment, and a named account's options inherited from
// the default account's. Cross-field rules stay in each module's resolver.

type Plain = Record<string, unknown>;

function sectionFields(field: HubtelOptionField | undefined): HubtelOptionField[] {
  return field?.spec.section ? optionFields(field.spec.section()) : [];
}

/**
 * Options checked against their class (errors name `<scope>.<field>`; a field no rule checks is
 * kept as given, for its module to check), defaults filled in, URLs parsed; null is absent.
 */
export function resolveDeclaredOptions<T>(options: new () => T, raw: unknown, scope: string): T {
  const fields = optionFields(options);
  const checked = checkOptions(options, raw, scope) as Plain; // a copy
  fillSection(fields, checked, checked);
  finish(fields, checked, scope, '');
  return checked as T;
}

/** Parses `url` options, checks `atLeast` / `atMost`, refuses an unchecked section that is no object. */
function finish(fields: HubtelOptionField[], section: Plain, path: string, relative: string): void {
  for (const { key, spec } of fields) {
    const value = section[key];
    const option = `${path}.${key}`;
    if (value === undefined) continue;
    if (spec.url) section[key] = resolveUrl(value, option);
    else if (spec.section) {
      assertOptionsObject(value, option);
      finish(optionFields(spec.section()), (section[key] = { ...value }), option, `${relative}${key}.`);
    }
    const [bound, word] = spec.atLeast ? [spec.atLeast, 'least'] : [spec.atMost, 'most'];
    const limit = bound === undefined ? undefined : (section[bound] as number);
    if (limit !== undefined && (word === 'least' ? (value as number) < limit : (value as number) > limit))
      throw new HubtelConfigError(option, `must be at ${word} ${relative}${bound} (${limit})`);
  }
}

/**
 * A copy of checked options with every declared default filled in, sections too; an absent section
 * only when it declares one (`default: {}`): presence can mean something (`statusCheck` turns it on).
 */
export function withOptionDefaults<T>(options: Function, value: T): T {
  const root = { ...(value as Plain) };
  fillSection(optionFields(options), root, root);
  return root as T;
}

function fillSection(fields: HubtelOptionField[], section: Plain, root: Plain): void {
  for (const field of fields) {
    const { key, spec } = field;
    if (section[key] === undefined) {
      if (spec.defaultFrom) section[key] = spec.defaultFrom(section, root);
      else if (spec.default !== undefined)
        section[key] = isPlainObject(spec.default) ? { ...spec.default } : spec.default;
    }
    const nested = section[key];
    if (spec.section && isPlainObject(nested)) {
      const copy = { ...nested };
      fillSection(sectionFields(field), copy, root);
      section[key] = copy;
    }
  }
}

/** Options read from the environment by `declaredOptionsFromEnv`, with the variable behind each option. */
export interface OptionsFromEnv<T> {
  options: Partial<T>;
  /**
   * Option path (`sms[north].retry.maxAttempts`) → its variable, for `checkOptionsFromEnv`. A named
   * account's lists what it set or must set (`own`): a bad inherited value is reported as the default's.
   */
  variables: Record<string, string>;
}

/**
 * The options read from their declared variables (a bad number or boolean names the variable); with
 * `account`, that account's (`HUBTEL_NORTH_SMS_CLIENT_ID`), its `defaultOnly` options not read.
 */
export function declaredOptionsFromEnv<T>(
  options: Function,
  source: HubtelEnvSource,
  scope: string,
  account?: string,
): OptionsFromEnv<T> {
  const variables: Record<string, string> = {};
  const read = (fields: HubtelOptionField[], path: string): Plain => {
    const out: Plain = {};
    for (const field of fields) {
      if (account !== undefined && accountRule(field) === 'defaultOnly') continue;
      const option = `${path}.${field.key}`;
      if (field.spec.section) {
        const section = read(sectionFields(field), option);
        if (Object.keys(section).length > 0) out[field.key] = section;
      }
      if (field.spec.env === undefined) continue;
      const variable = account === undefined ? field.spec.env : accountEnvVariable(account, field.spec.env);
      const value = readVariable(source, variable, field.type);
      if (value !== undefined) out[field.key] = value;
      if (account === undefined || value !== undefined || accountRule(field) === 'own')
        variables[option] = variable;
    }
    return out;
  };
  return { options: read(optionFields(options), scope) as Partial<T>, variables };
}

function readVariable(source: HubtelEnvSource, variable: string, type: Function | undefined): unknown {
  if (type === Number) return readEnvNumber(source, variable);
  const text = readEnvValue(source, variable);
  if (text === undefined || type !== Boolean) return text;
  if (text === 'true' || text === 'false') return text === 'true';
  throw new HubtelConfigError(variable, 'must be true or false (environment variable)');
}

/**
 * `overrides` over `base`, sections field by field (an override of `retry.maxAttempts` keeps the
 * environment's `retry.baseDelayMs`); undefined overrides are ignored.
 */
export function overrideOptions<T>(options: Function, base: Partial<T>, overrides: Partial<T>): T {
  return overrideSection(optionFields(options), base as Plain, overrides as Plain) as T;
}

function overrideSection(fields: HubtelOptionField[], base: Plain, overrides: Plain): Plain {
  const out: Plain = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    const field = fields.find((candidate) => candidate.key === key);
    out[key] =
      field?.spec.section && isPlainObject(value) && isPlainObject(out[key])
        ? overrideSection(sectionFields(field), out[key], value)
        : value;
  }
  return out;
}

/** Keys of a registration that are about the registration, not the account's options. */
const REGISTRATION_KEYS = new Set(['name', 'isGlobal']);

/** A named account's raw options: the default's under its own, as each field's HubtelAccountRule says. */
export function inheritDeclaredOptions(
  options: Function,
  scope: string,
  defaults: object,
  overrides: unknown,
): Plain {
  if (overrides === null || typeof overrides !== 'object' || Array.isArray(overrides))
    throw new HubtelConfigError(scope, 'must be an options object');
  const own = Object.fromEntries(
    Object.entries(overrides).filter(([key, value]) => value !== undefined && !REGISTRATION_KEYS.has(key)),
  );
  return inheritSection(optionFields(options), scope, defaults as Plain, own, true);
}

function inheritSection(
  fields: HubtelOptionField[],
  scope: string,
  inherited: Plain,
  own: Plain | undefined,
  top: boolean,
): Plain {
  // The options of the default account only first, then the account's own, each in declared order.
  for (const field of fields)
    if (accountRule(field) === 'defaultOnly' && own?.[field.key] !== undefined)
      throw new HubtelConfigError(
        `${scope}.${field.key}`,
        `is an option of the default account only${top ? ' (forRoot)' : ''}`,
      );
  for (const field of fields) {
    const rule = accountRule(field);
    const required = rule === 'own' || (rule === 'ownIfDefault' && inherited[field.key] !== undefined);
    if (required && own !== undefined && own[field.key] === undefined)
      throw new HubtelConfigError(
        `${scope}.${field.key}`,
        "is required: a named account gives its own credentials, it never uses the default account's",
      );
  }
  const out: Plain = { ...inherited };
  for (const field of fields) {
    const rule = accountRule(field);
    if (rule === 'merged') {
      if (!isPlainObject(out[field.key])) continue;
      // What the section's fields do not pass on is dropped even when the account gives no section.
      const section = `${scope}.${field.key}`;
      const kept = inheritSection(sectionFields(field), section, out[field.key] as Plain, undefined, false);
      if (Object.keys(kept).length > 0) out[field.key] = kept;
      else delete out[field.key];
    } else if (rule !== 'inherited') delete out[field.key];
  }
  for (const [key, value] of Object.entries(own ?? {})) {
    const field = fields.find((candidate) => candidate.key === key);
    const rule = field && accountRule(field);
    const section = `${scope}.${key}`;
    if (rule === 'merged' && isPlainObject(value) && isPlainObject(out[key]))
      out[key] = inheritSection(sectionFields(field), section, out[key], dropUndefined(value), false);
    else if (
      (rule === 'own' || rule === 'ownIfDefault') &&
      isPlainObject(value) &&
      isPlainObject(inherited[key])
    )
      out[key] = { ...inheritedFields(sectionFields(field), inherited[key]), ...dropUndefined(value) };
    else out[key] = value;
  }
  return out;
}

/** The fields of a section that its class declares `inherited`, as the default account has them. */
function inheritedFields(fields: HubtelOptionField[], section: Plain): Plain {
  return Object.fromEntries(
    fields
      .filter((field) => accountRule(field) === 'inherited' && section[field.key] !== undefined)
      .map((field) => [field.key, section[field.key]]),
  );
}
