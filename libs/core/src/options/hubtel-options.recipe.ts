import { HubtelConfigError } from '../errors/hubtel.errors.js';
import {
  HubtelAccountResolverLimits,
  type ResolvedAccountResolver,
} from '../accounts/hubtel-accounts.resolver.js';
import { HUBTEL_DEFAULT_ACCOUNT } from '../hubtel.constants.js';
import { accountEnvVariable, accountNamesFromEnv } from '../accounts/accounts-env.js';
import { checkOptionsFromEnv, type HubtelEnvSource } from './hubtel-env.js';
import { accountRule, optionFields } from './hubtel-option.decorator.js';
import {
  declaredOptionsFromEnv,
  inheritDeclaredOptions,
  overrideOptions,
  resolveDeclaredOptions,
} from './hubtel-options.declared.js';
import { assertOptionsObject } from './hubtel-options.validation.js';

// A module's options from its class (HubtelOption): resolved for forRoot's account and a named
// one, and read from the environment. A new option is one field.

/** What a module's `resolve` is given beside the checked options. */
export interface HubtelResolveContext<C> {
  /** `sms`, or `sms[north]` for a named account: the start of option names in errors. */
  scope: string;
  /** The account being resolved (`default` for forRoot's). */
  account: string;
  /** The options as given (before the check), for rules the class cannot say. */
  raw: Record<string, unknown>;
  /** What the module derived from forRoot's extras (the callback route). */
  context: C | undefined;
}

export interface HubtelOptionsSpec<O extends object, C> {
  /** `sms`: option names in errors are `sms.clientId`, `sms[north].clientId`. */
  scope: string;
  options: new () => O;
  /** The module's own part of the resolved options; other checked fields pass, except `grouped`. */
  resolve: (checked: O, context: HubtelResolveContext<C>) => object;
  /** Fields `resolve` moves elsewhere (`clientId` into `credentials`): left out as given. */
  grouped?: readonly string[];
  /** Transforms the raw options before the check (a value no decorator takes, handled in `resolve`). */
  prepare?: (raw: Record<string, unknown>) => Record<string, unknown>;
  /** Every option is optional: no options at all is `{}`. */
  optional?: boolean;
}

/** The options of a module, derived from its class by `hubtelOptionsRecipe`. */
export type HubtelOptionsRecipe<O extends object, R, A, C> = ReturnType<
  typeof hubtelOptionsRecipe<O, R, A, C>
>;

/** `registerAccount(...)`'s argument: the account's name, its options, and module extras. */
export type HubtelAccountOptions<A> = A & {
  /** The account's name (`north`): lower-case letters, digits, `-`, `_`; not `default`. */
  name: string;
  /** Make the account's `@Inject…(name)` work in every module, not only those importing this registration. */
  isGlobal?: boolean;
};

/** The default options and the named accounts read from the environment. */
export interface HubtelEnvAccounts<O, A> {
  /** For `forRoot` (spread your other options over it). */
  default: O;
  /** For `registerAccount`, one each, in HUBTEL_ACCOUNTS order. */
  accounts: Array<HubtelAccountOptions<A>>;
}

/** Derives a module's resolver and environment readers from its options class. */
export function hubtelOptionsRecipe<O extends object, R, A, C = undefined>(spec: HubtelOptionsSpec<O, C>) {
  const fields = optionFields(spec.options);
  const moduleWide = fields
    .filter((field) => accountRule(field) === 'defaultOnly' && field.key !== 'accounts')
    .map((field) => field.key);

  // Options of `account` checked against the class, defaults filled in, the module's part computed.
  const resolve = (raw: unknown, account: string = HUBTEL_DEFAULT_ACCOUNT, context?: C): R => {
    const scope = account === HUBTEL_DEFAULT_ACCOUNT ? spec.scope : `${spec.scope}[${account}]`;
    const given = (raw ?? (spec.optional ? {} : raw)) as Record<string, unknown>;
    assertOptionsObject(given, scope);
    const checked = resolveDeclaredOptions(spec.options, spec.prepare ? spec.prepare(given) : given, scope);
    const own = spec.resolve(checked, { scope, account, raw: given, context });
    const accounts = resolveAccountResolver((checked as { accounts?: unknown }).accounts, scope);
    const passed = Object.entries(checked).filter(
      ([key, value]) => value !== undefined && key !== 'accounts' && !spec.grouped?.includes(key),
    );
    return { ...Object.fromEntries(passed), ...own, ...(accounts ? { accounts } : {}) } as R;
  };

  // A named account: the default's raw options under its own, as the class declares, resolved as
  // forRoot's; the module-wide options are then the default's resolved ones (`module`).
  const resolveAccount = (name: string, defaults: O, overrides: unknown, module?: R, context?: C): R => {
    const merged = inheritDeclaredOptions(spec.options, `${spec.scope}[${name}]`, defaults, overrides);
    const resolved = resolve(merged, name, context) as Record<string, unknown>;
    if (module === undefined) return resolved as R;
    for (const key of moduleWide) {
      const value = (module as Record<string, unknown>)[key];
      if (value === undefined) delete resolved[key];
      else resolved[key] = value;
    }
    return resolved as R;
  };

  // The `envWhole` sections read for the default account or account `named` (see HubtelOptionSpec).
  const wholeSections = (read: Record<string, unknown>, named?: { name: string; defaults: O }) => {
    for (const { key, spec: declared } of fields.filter((field) => field.spec.envWhole)) {
      const own = optionFields(declared.section!()).filter((field) => accountRule(field) === 'own');
      const section = (read[key] ?? {}) as Record<string, unknown>;
      const missing = own.filter((field) => section[field.key] === undefined);
      const defaults = named?.defaults as Record<string, unknown> | undefined;
      const required = named && (defaults![key] !== undefined || missing.length < own.length);
      if (!required) {
        if (missing.length > 0) delete read[key];
      } else if (missing[0])
        throw new HubtelConfigError(
          accountEnvVariable(named.name, missing[0].spec.env!),
          `is not set: account "${named.name}" needs its own ${key} (environment variable of option ${spec.scope}[${named.name}].${key}.${missing[0].key})`,
        );
    }
  };

  // Options from the environment, `overrides` winning; a bad variable fails here, naming it.
  const optionsFromEnv = (source: HubtelEnvSource = process.env, overrides: Partial<O> = {}): O => {
    const env = declaredOptionsFromEnv<O>(spec.options, source, spec.scope);
    wholeSections(env.options);
    const options = overrideOptions(spec.options, env.options, overrides);
    checkOptionsFromEnv(() => resolve(options), env.variables, overrides);
    return options;
  };

  const accountsFromEnv = (
    source: HubtelEnvSource = process.env,
    overrides: Partial<O> = {},
  ): HubtelEnvAccounts<O, A> => {
    const defaults = optionsFromEnv(source, overrides);
    const names = accountNamesFromEnv(source);
    // Named accounts are checked over the default's resolved options (what they inherit); the
    // default's own problems were reported above, or are left to bootstrap as there.
    let module: R | undefined;
    try {
      if (names.length > 0) module = resolve(defaults);
    } catch {
      module = undefined;
    }
    const account = (name: string): HubtelAccountOptions<A> => {
      const env = declaredOptionsFromEnv<A>(spec.options, source, `${spec.scope}[${name}]`, name);
      wholeSections(env.options, { name, defaults });
      if (module !== undefined)
        checkOptionsFromEnv(() => resolveAccount(name, defaults, env.options, module), env.variables);
      return { name, ...env.options } as HubtelAccountOptions<A>;
    };
    return { default: defaults, accounts: names.map(account) };
  };

  return { scope: spec.scope, resolve, resolveAccount, optionsFromEnv, accountsFromEnv };
}

/** Checks an `accounts: { resolve, cacheTtlMs? }` option (under `scope`). */
export function resolveAccountResolver<O>(
  value: unknown,
  scope: string,
): ResolvedAccountResolver<O> | undefined {
  if (value === undefined) return undefined;
  const limits = resolveDeclaredOptions(HubtelAccountResolverLimits, value, `${scope}.accounts`);
  const { resolve } = value as { resolve?: unknown };
  if (typeof resolve !== 'function')
    throw new HubtelConfigError(
      `${scope}.accounts.resolve`,
      'must be a function (name) => the account options, or undefined for an unknown name',
    );
  return { ...limits, resolve } as ResolvedAccountResolver<O>;
}
