import type { DynamicModule, FactoryProvider, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { checkAccountName } from './hubtel-accounts.js';

/** How one area's `registerAccount(Async)` modules are made (SMS, checkout, service app). */
export interface AccountModuleSpec<R> {
  /** First part of option names in errors: `sms` gives `sms.registerAccount.name`, `sms[north].useFactory`. */
  area: string;
  /** What configures the default account, for errors: `SmsModule.forRoot`. */
  forRoot: string;
  /** The module class returned (one dynamic module per account name). */
  module: Type;
  /** The area's global module providing its account registry, shared with forRoot's module. */
  registryModule: Type;
  registry: Type<R>;
  /** Token of what `@Inject…(name)` injects for the account. */
  token: (name: string) => string | symbol;
  /** Records the account in the registry; returns what `token` provides. */
  register: (registry: R, name: string, overrides: unknown) => unknown;
}

/** `registerAccount(...)`'s argument: the account's options, its name, and module extras. */
export interface AccountRegistration {
  name: string;
  isGlobal?: boolean;
}

/** `registerAccountAsync(...)`'s argument. */
export interface AccountAsyncRegistration extends Pick<ModuleMetadata, 'imports'> {
  name: string;
  isGlobal?: boolean;
  inject?: FactoryProvider['inject'];
  useFactory: (...args: never[]) => unknown;
}

/** The module of `registerAccount({ name, isGlobal, ...options })`. */
export function registerAccountModule<R>(
  spec: AccountModuleSpec<R>,
  options: AccountRegistration,
): DynamicModule {
  const { name, isGlobal, ...overrides } = options ?? ({} as AccountRegistration);
  checkAccountName(name, `${spec.area}.registerAccount.name`, spec.forRoot);
  return accountModule(spec, name, isGlobal, [], { useValue: overrides });
}

/** The module of `registerAccountAsync({ name, isGlobal, imports, inject, useFactory })`. */
export function registerAccountAsyncModule<R>(
  spec: AccountModuleSpec<R>,
  options: AccountAsyncRegistration,
): DynamicModule {
  const {
    name,
    isGlobal,
    imports = [],
    inject = [],
    useFactory,
  } = options ?? ({} as AccountAsyncRegistration);
  checkAccountName(name, `${spec.area}.registerAccountAsync.name`, spec.forRoot);
  if (typeof useFactory !== 'function')
    throw new HubtelConfigError(
      `${spec.area}[${name}].useFactory`,
      'must be a function returning the account options',
    );
  return accountModule(spec, name, isGlobal, imports, { useFactory, inject });
}

function accountModule<R>(
  spec: AccountModuleSpec<R>,
  name: string,
  isGlobal: boolean | undefined,
  imports: NonNullable<ModuleMetadata['imports']>,
  options:
    { useValue: unknown } | { useFactory: (...args: never[]) => unknown; inject: FactoryProvider['inject'] },
): DynamicModule {
  const optionsToken = Symbol(`nestjs-hubtel:${spec.area}-account-options:${name}`);
  const token = spec.token(name);
  return {
    module: spec.module,
    global: isGlobal ?? false,
    imports: [...imports, spec.registryModule],
    providers: [
      { provide: optionsToken, ...options } as Provider,
      {
        provide: token,
        useFactory: (registry: R, overrides: unknown) => spec.register(registry, name, overrides),
        inject: [spec.registry, optionsToken],
      },
    ],
    exports: [token],
  };
}
