import { HttpService } from '@nestjs/axios';
import {
  ConfigurableModuleBuilder,
  Global,
  Module,
  type DynamicModule,
  type FactoryProvider,
  type InjectionToken,
  type ModuleMetadata,
  type Provider,
  type Type,
} from '@nestjs/common';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HUBTEL_STATUS_CHECK_BUDGET } from '../hubtel.constants.js';
import type { StatusCheckBudget } from '../http/status-check.budget.js';
import { HttpTransport, type HttpTransportConfig } from '../http/http-transport.js';
import { InboundAccessPolicy, type InboundAccessOptions } from '../inbound/inbound-access.js';
import { inboundKit, type InboundKitOptions, type InboundKitSpec } from '../inbound/inbound-kit.js';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import type { AccountRegistry } from '../accounts/hubtel-accounts.js';
import {
  HUBTEL_DEFAULT_ACCOUNT,
  checkAccountName,
  resolveAccountResolver,
  type ResolvedAccountResolver,
} from '../accounts/hubtel-accounts.resolver.js';
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

/*
 * One recipe for a Hubtel module. The module declares its options class (see HubtelOption), what it
 * computes from the checked options and its account registry; the recipe derives the rest: forRoot
 * / forRootAsync (ConfigurableModuleBuilder), registerAccount(Async), the module-wide / per-account
 * split, the environment readers and the resolved options, where an option the module does not
 * compute passes as checked: a new option is one field.
 */

/** What forRoot's module hands its accounts' builders (with `accounts.inject`'s providers by name). */
export interface HubtelDefaultAccount<O, R> {
  /** The options as given: named accounts inherit those they do not set. */
  options: O;
  resolved: R;
  telemetry?: HubtelTelemetry;
}

/** An inbound module's account's own access policy and transport (forRoot's: the module's). */
export interface HubtelAccountParts {
  access: InboundAccessPolicy;
  transport: HttpTransport;
  /** The instance's status-check budget, shared by every account. */
  budget: StatusCheckBudget;
}

/** What every module's forRoot takes besides its options. */
export interface HubtelModuleExtras {
  /** Register the providers globally (no need to import the module everywhere). Default false. */
  isGlobal?: boolean;
}

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

export interface HubtelModuleSpec<
  O extends object,
  R,
  A,
  T,
  D,
  Reg extends AccountRegistry<T>,
  X extends HubtelModuleExtras,
  C,
  F extends string,
> {
  /** The module's options (`hubtelOptionsRecipe`). */
  options: HubtelOptionsRecipe<O, R, A, C>;
  /** `SmsModule`: errors say `SmsModule.forRoot`; ConfigurableModuleBuilder's name is `HubtelSms`. */
  module: string;
  /** The method a `useClass` options factory implements (`createSmsOptions`). */
  factoryMethod: F;
  /** Token of the resolved options of forRoot's account, provided by the recipe. */
  resolvedToken: InjectionToken;
  /** forRoot's further extras, their defaults, and what they add to the module (routes). */
  extras?: X;
  extend?: (definition: DynamicModule, extras: X) => DynamicModule;
  /** What `resolve` needs of the extras (given to it as `context`). */
  context?: (extras: X) => C;
  /** The application's account registry (one, global). */
  registry: Type<Reg>;
  /**
   * The accounts (the registry, also provided as `provide`): forRoot's is `default(d)`, a named
   * one `named(d, name, its resolved options)`; `d` holds `inject`'s providers by name.
   */
  accounts: {
    provide: InjectionToken;
    inject: Record<string, InjectionToken>;
    /** Default: `named(d, 'default', d.resolved, own)`. */
    default?: (defaults: D, own: HubtelAccountParts, registry: Reg) => T;
    named: (defaults: D, name: string, options: R, own: HubtelAccountParts) => T;
    /**
     * An inbound module's kit (core's inboundKit, for forRoot's account); a named account's access
     * policy and transport are made from its options, and it is warned about when it has no path
     * secret (`pathSecret`'s variable) while forRoot's has one, unless `routes` says none.
     */
    inbound?: Omit<InboundKitSpec<R & InboundKitOptions>, 'module' | 'optionPrefix' | 'options'> & {
      transport: {
        provide: InjectionToken;
        config: (options: R, loggerContext?: string) => HttpTransportConfig;
      };
      pathSecret: string;
      routes: (name: string, context: C) => string | undefined;
      logger: (name: string) => string;
    };
  };
  /** Token of what `@Inject…(name)` injects for a named account, and what that is (`bind`). */
  token: (name: string) => string | symbol;
  bind: (registry: Reg, name: string) => unknown;
}

/** `registerAccount(...)`'s argument: the account's name, its options, and module extras. */
export type HubtelAccountOptions<A> = A & {
  /** The account's name (`north`): lower-case letters, digits, `-`, `_`; not `default`. */
  name: string;
  /** Make the account's `@Inject…(name)` work in every module, not only those importing this registration. */
  isGlobal?: boolean;
};

/** `registerAccountAsync(...)`'s argument. */
export interface HubtelAccountAsyncOptions<A> extends Pick<ModuleMetadata, 'imports'> {
  /** The account's name (`north`): lower-case letters, digits, `-`, `_`; not `default`. */
  name: string;
  isGlobal?: boolean;
  inject?: FactoryProvider['inject'];
  /** The account's options (as `registerAccount` takes them, without `name`). */
  useFactory: (...args: never[]) => A | Promise<A>;
}

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
  const hasResolver = fields.some((field) => field.key === 'accounts');

  // Options of `account` checked against the class, defaults filled in, the module's part computed.
  const resolve = (raw: unknown, account: string = HUBTEL_DEFAULT_ACCOUNT, context?: C): R => {
    const scope = account === HUBTEL_DEFAULT_ACCOUNT ? spec.scope : `${spec.scope}[${account}]`;
    const given = (raw ?? (spec.optional ? {} : raw)) as Record<string, unknown>;
    assertOptionsObject(given, scope);
    const checked = resolveDeclaredOptions(spec.options, spec.prepare ? spec.prepare(given) : given, scope);
    const own = spec.resolve(checked, { scope, account, raw: given, context });
    const accounts = hasResolver
      ? resolveAccountResolver((checked as { accounts?: unknown }).accounts, scope)
      : undefined;
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

  return {
    scope: spec.scope,
    options: spec.options,
    resolve,
    resolveAccount,
    optionsFromEnv,
    accountsFromEnv,
  };
}

/**
 * A module's forRoot / forRootAsync (ConfigurableModuleBuilder, with `isGlobal` and the module's
 * extras) providing its resolved options, and registerAccount / registerAccountAsync recording
 * named accounts in the application's one registry.
 */
export function hubtelModuleRecipe<
  O extends object,
  R,
  A,
  T,
  D,
  Reg extends AccountRegistry<T>,
  X extends HubtelModuleExtras = HubtelModuleExtras,
  C = undefined,
  F extends string = string,
>(spec: HubtelModuleSpec<O, R, A, T, D, Reg, X, C, F>) {
  const { scope } = spec.options;
  const forRoot = `${spec.module}.forRoot`;

  // One registry per application, shared by forRoot's module and every registerAccount module.
  class AccountsModule {}
  Global()(AccountsModule);
  Module({ providers: [spec.registry], exports: [spec.registry] })(AccountsModule);
  class AccountModule {}
  Module({})(AccountModule);

  const accountModule = (
    name: string,
    isGlobal: boolean | undefined,
    imports: NonNullable<ModuleMetadata['imports']>,
    options: object,
  ): DynamicModule => {
    const optionsToken = Symbol(`nestjs-hubtel:${scope}-account-options:${name}`);
    const token = spec.token(name);
    return {
      module: AccountModule,
      global: isGlobal ?? false,
      imports: [...imports, AccountsModule],
      providers: [
        { provide: optionsToken, ...options } as Provider,
        {
          provide: token,
          useFactory: (registry: Reg, overrides: unknown) => {
            registry.register(name, overrides);
            return spec.bind(registry, name);
          },
          inject: [spec.registry, optionsToken],
        },
      ],
      exports: [token],
    };
  };

  // forRoot's account, attached to the registry: a second forRoot in one application does not replace
  // the first. A named account inherits forRoot's options as given, the module-wide ones resolved.
  const { accounts } = spec;
  const names = Object.keys(accounts.inject);
  const { inbound } = accounts;
  const kit = inbound
    ? inboundKit({ ...inbound, module: spec.module, optionPrefix: scope, options: spec.resolvedToken })
    : { imports: [], providers: [] };
  const attach = (context: C | undefined): FactoryProvider => ({
    provide: accounts.provide,
    useFactory: (
      registry: Reg,
      options: O | undefined,
      resolved: R,
      telemetry?: HubtelTelemetry,
      ...deps
    ) => {
      const [http, access, transport, budget] = (inbound ? deps.splice(0, 4) : []) as unknown[];
      const main = { access, transport, budget } as HubtelAccountParts;
      const given = options ?? ({} as O);
      const d = {
        options: given,
        resolved,
        ...(telemetry ? { telemetry } : {}),
        ...Object.fromEntries(names.map((name, index) => [name, deps[index]])),
      } as D;
      // A named account's own access policy and transport (its own path secret and keys).
      const parts = (name: string, options: R): HubtelAccountParts => {
        if (!inbound) return main;
        const { access: given } = options as { access: InboundAccessOptions };
        const access = new InboundAccessPolicy(given, `${scope}[${name}].access.`);
        const logger = inbound.logger(name);
        const routes = inbound.routes(name, context as C);
        if (routes)
          main.access.warnUnguarded(access, name, routes, inbound.pathSecret, new HubtelLogger(logger));
        const transport = new HttpTransport(http as HttpService, {
          ...inbound.transport.config(options, logger),
          telemetry,
        });
        return { access, transport, budget: main.budget };
      };
      const { accounts: resolver } = resolved as { accounts?: ResolvedAccountResolver };
      return registry.attachDefault({
        account: accounts.default
          ? accounts.default(d, main, registry)
          : accounts.named(d, HUBTEL_DEFAULT_ACCOUNT, resolved, main),
        build: (name, overrides) => {
          const own = spec.options.resolveAccount(name, given, overrides, resolved, context);
          return accounts.named(d, name, own, parts(name, own));
        },
        ...(resolver ? { resolver } : {}),
      });
    },
    inject: [
      spec.registry,
      built.MODULE_OPTIONS_TOKEN,
      spec.resolvedToken,
      { token: HUBTEL_TELEMETRY, optional: true },
      ...(inbound
        ? [HttpService, inbound.access, inbound.transport.provide, HUBTEL_STATUS_CHECK_BUDGET]
        : []),
      ...Object.values(accounts.inject),
    ],
  });

  const built = new ConfigurableModuleBuilder<O>({
    moduleName: `Hubtel${spec.module.replace(/Module$/, '')}`,
  })
    .setClassMethodName('forRoot')
    .setFactoryMethodName(spec.factoryMethod)
    .setExtras<X>({ isGlobal: false, ...spec.extras } as X, (definition, extras) => {
      const context = spec.context?.(extras);
      const module: DynamicModule = {
        ...definition,
        global: extras.isGlobal,
        imports: [...(definition.imports ?? []), AccountsModule, ...kit.imports],
        providers: [
          ...(definition.providers ?? []),
          ...kit.providers,
          {
            provide: spec.resolvedToken,
            useFactory: (options: O) => spec.options.resolve(options, HUBTEL_DEFAULT_ACCOUNT, context),
            inject: [built.MODULE_OPTIONS_TOKEN],
          },
          attach(context),
        ],
      };
      return spec.extend ? spec.extend(module, extras) : module;
    })
    .build();

  class HubtelModule extends built.ConfigurableModuleClass {
    /**
     * A further account, by name. It gives its own credentials; every other option it leaves out
     * is the default account's (forRoot, required).
     */
    static registerAccount(options: HubtelAccountOptions<A>): DynamicModule {
      const { name, isGlobal, ...overrides } = options ?? ({} as HubtelAccountOptions<A>);
      checkAccountName(name, `${scope}.registerAccount.name`, forRoot);
      return accountModule(name, isGlobal, [], { useValue: overrides });
    }

    /** `registerAccount` with the account's options from a factory (ConfigService, a vault...). */
    static registerAccountAsync(options: HubtelAccountAsyncOptions<A>): DynamicModule {
      const {
        name,
        isGlobal,
        imports = [],
        inject = [],
        useFactory,
      } = options ?? ({} as HubtelAccountAsyncOptions<A>);
      checkAccountName(name, `${scope}.registerAccountAsync.name`, forRoot);
      if (typeof useFactory !== 'function')
        throw new HubtelConfigError(
          `${scope}[${name}].useFactory`,
          'must be a function returning the account options',
        );
      return accountModule(name, isGlobal, imports, { useFactory, inject });
    }
  }

  return {
    ConfigurableModuleClass: HubtelModule,
    OPTIONS_TYPE: built.OPTIONS_TYPE,
    ASYNC_OPTIONS_TYPE: built.ASYNC_OPTIONS_TYPE,
  };
}
