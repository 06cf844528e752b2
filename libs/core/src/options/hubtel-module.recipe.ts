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
import { HUBTEL_DEFAULT_ACCOUNT, HUBTEL_STATUS_CHECK_BUDGET } from '../hubtel.constants.js';
import type { StatusCheckBudget } from '../http/status-check.budget.js';
import { HttpTransport, type HttpTransportConfig } from '../http/http-transport.js';
import { InboundAccessPolicy, type InboundAccessOptions } from '../inbound/inbound-access.js';
import { inboundKit, type InboundKitOptions, type InboundKitSpec } from '../inbound/inbound-kit.js';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import type { AccountRegistry } from '../accounts/hubtel-accounts.js';
import {
  accountLoggerContext,
  checkAccountName,
  type ResolvedAccountResolver,
} from '../accounts/hubtel-accounts.resolver.js';
import type { HubtelAccountOptions, HubtelOptionsRecipe } from './hubtel-options.recipe.js';

// One recipe for a Hubtel module: forRoot(Async) with its options (hubtelOptionsRecipe), its
// accounts built by the module's builders, registerAccount(Async) recording them in one registry.

/** What forRoot's module hands its accounts' builders (with `accounts.inject`'s providers by name). */
export interface HubtelDefaultAccount<R> {
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
  /** The accounts (the registry, provided as `provide`); `d` holds `inject`'s providers by name. */
  accounts: {
    provide: InjectionToken;
    inject: Record<string, InjectionToken>;
    /** Default: `named(d, 'default', d.resolved, own)`. */
    default?: (defaults: D, own: HubtelAccountParts, registry: Reg) => T;
    named: (defaults: D, name: string, options: R, own: HubtelAccountParts) => T;
    /** An inbound module's kit; a named account unguarded while forRoot's has a path secret is warned of. */
    inbound?: Omit<InboundKitSpec<R & InboundKitOptions>, 'module' | 'optionPrefix' | 'options'> & {
      transport: { provide: InjectionToken; config: (options: R) => HttpTransportConfig; context: string };
      pathSecret: string;
      routes: (name: string, context: C) => string | undefined;
    };
  };
  /** Token of what `@Inject…(name)` injects for a named account, and what that is (`bind`). */
  token: (name: string) => string | symbol;
  bind: (registry: Reg, name: string) => unknown;
}

/** `registerAccountAsync(...)`'s argument. */
export interface HubtelAccountAsyncOptions<A>
  extends Pick<HubtelAccountOptions<object>, 'name' | 'isGlobal'>, Pick<ModuleMetadata, 'imports'> {
  inject?: FactoryProvider['inject'];
  /** The account's options (as `registerAccount` takes them, without `name`). */
  useFactory: (...args: never[]) => A | Promise<A>;
}

/** A module's forRoot(Async) (ConfigurableModuleBuilder) and registerAccount(Async), one registry. */
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
        resolved,
        ...(telemetry ? { telemetry } : {}),
        ...Object.fromEntries(names.map((name, index) => [name, deps[index]])),
      } as D;
      // A named account's own access policy and transport (its own path secret and keys).
      const parts = (name: string, options: R): HubtelAccountParts => {
        if (!inbound) return main;
        const { access: given } = options as { access: InboundAccessOptions };
        const access = new InboundAccessPolicy(given, `${scope}[${name}].access.`);
        const logger = accountLoggerContext(inbound.transport.context, name);
        const routes = inbound.routes(name, context as C);
        if (routes)
          main.access.warnUnguarded(access, name, routes, inbound.pathSecret, new HubtelLogger(logger));
        const transport = new HttpTransport(http as HttpService, {
          ...inbound.transport.config(options),
          loggerContext: logger,
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
    /** A further account, by name: its own credentials; other options it leaves out are forRoot's. */
    static registerAccount(options: HubtelAccountOptions<A>): DynamicModule {
      const { name, isGlobal, ...overrides } = options ?? ({} as HubtelAccountOptions<A>);
      checkAccountName(name, `${scope}.registerAccount.name`, forRoot);
      return accountModule(name, isGlobal, [], { useValue: overrides });
    }

    /** `registerAccount` with the account's options from a factory (ConfigService, a vault...). */
    static registerAccountAsync(options: HubtelAccountAsyncOptions<A>): DynamicModule {
      const { name, isGlobal, imports = [], inject = [], useFactory } = options ?? ({} as never);
      checkAccountName(name, `${scope}.registerAccountAsync.name`, forRoot);
      if (typeof useFactory !== 'function')
        throw new HubtelConfigError(
          `${scope}[${name}].useFactory`,
          'must be a function returning the account options',
        );
      return accountModule(name, isGlobal, imports, { useFactory, inject });
    }
  }

  const { OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } = built;
  return { ConfigurableModuleClass: HubtelModule, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE };
}
