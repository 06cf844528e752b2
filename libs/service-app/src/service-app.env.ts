import { HubtelConfigError, type HubtelEnvSource } from 'nestjs-hubtel';
import {
  accountEnvVariable,
  accountNamesFromEnv,
  checkOptionsFromEnv,
  declaredOptionsFromEnv,
  optionFields,
  overrideOptions,
} from '#internal';
import type { ServiceAppAccountOptions } from './service-app.module-definition.js';
import {
  SERVICE_APP_SCOPE,
  ServiceAppModuleOptions,
  ServiceAppStatusCheckOptions,
  resolveServiceAppAccountOptions,
  resolveServiceAppOptions,
  type ServiceAppAccountOverrides,
} from './service-app.options.js';

/** The status check's variables that make one (key pair and POS Sales ID: its fields declared `own`). */
const STATUS_CHECK_CREDENTIALS = optionFields(ServiceAppStatusCheckOptions).filter(
  (field) => field.spec.account === 'own',
);

/** The status check's credentials its variables left unset. */
function missingCredentials(statusCheck: object | undefined) {
  return STATUS_CHECK_CREDENTIALS.filter(
    (field) => (statusCheck as Record<string, unknown> | undefined)?.[field.key] === undefined,
  );
}

/**
 * ServiceAppModule options found in the environment (`HUBTEL_CALLBACK_URL`,
 * `HUBTEL_CALLBACK_CLIENT_ID` / `_SECRET`, `HUBTEL_SERVICE_APP_PATH_SECRET`,
 * `HUBTEL_DEFAULT_COUNTRY_CODE`, and the status check when `HUBTEL_CLIENT_ID`,
 * `HUBTEL_CLIENT_SECRET` and `HUBTEL_POS_SALES_ID` are all set, with `HUBTEL_STATUS_URL`), with
 * `overrides` over them (sections field by field: `{ access: { allowedIps } }` keeps the path
 * secret read here). A bad value of one of these variables fails here, naming the variable and the
 * option.
 */
export function serviceAppOptionsFromEnv(
  source: HubtelEnvSource = process.env,
  overrides: Partial<ServiceAppModuleOptions> = {},
): ServiceAppModuleOptions {
  const env = declaredOptionsFromEnv<ServiceAppModuleOptions>(
    ServiceAppModuleOptions,
    source,
    SERVICE_APP_SCOPE,
  );
  // Read whole or not at all: HUBTEL_CLIENT_ID and HUBTEL_CLIENT_SECRET alone are checkout's.
  if (missingCredentials(env.options.statusCheck).length > 0) delete env.options.statusCheck;
  const options = overrideOptions(ServiceAppModuleOptions, env.options, overrides);
  checkOptionsFromEnv(() => resolveServiceAppOptions(options), env.variables, overrides);
  return options;
}

/** Default options and named accounts read from the environment (`serviceAppAccountsFromEnv`). */
export interface ServiceAppEnvAccounts {
  /** For `ServiceAppModule.forRoot` (spread your other options over it). */
  default: ServiceAppModuleOptions;
  /** For `ServiceAppModule.registerAccount`, one each, in HUBTEL_ACCOUNTS order. */
  accounts: ServiceAppAccountOptions[];
}

/**
 * The default account (as `serviceAppOptionsFromEnv`) and the further accounts named in
 * HUBTEL_ACCOUNTS (`north,south`). Each account's variables are the default's with its name,
 * upper-cased (`-` as `_`), after `HUBTEL_`: its status check HUBTEL_NORTH_CLIENT_ID,
 * HUBTEL_NORTH_CLIENT_SECRET and HUBTEL_NORTH_POS_SALES_ID (all three required when the default
 * account has a status check, or when any of them is set: an account never uses another's keys),
 * and optionally HUBTEL_NORTH_STATUS_URL, HUBTEL_NORTH_CALLBACK_URL,
 * HUBTEL_NORTH_DEFAULT_COUNTRY_CODE; what an account leaves unset is the default account's.
 *
 * ```ts
 * const serviceApp = serviceAppAccountsFromEnv(process.env);
 * @Module({ imports: [ServiceAppModule.forRoot(serviceApp.default),
 *   ...serviceApp.accounts.map((a) => ServiceAppModule.registerAccount(a))] })
 * ```
 * A missing or bad value fails here, naming the variable (and the option it feeds).
 */
export function serviceAppAccountsFromEnv(
  source: HubtelEnvSource = process.env,
  /** Over the default account's variables, as `serviceAppOptionsFromEnv` takes them. */
  overrides: Partial<ServiceAppModuleOptions> = {},
): ServiceAppEnvAccounts {
  const defaults = serviceAppOptionsFromEnv(source, overrides);
  return {
    default: defaults,
    accounts: accountNamesFromEnv(source).map((name) => accountFromEnv(source, name, defaults)),
  };
}

function accountFromEnv(
  source: HubtelEnvSource,
  name: string,
  defaults: ServiceAppModuleOptions,
): ServiceAppAccountOptions {
  const scope = `${SERVICE_APP_SCOPE}[${name}]`;
  const env = declaredOptionsFromEnv<ServiceAppAccountOverrides>(
    ServiceAppModuleOptions,
    source,
    scope,
    name,
  );
  const options = env.options;
  const missing = missingCredentials(options.statusCheck);
  // Its own status check, whole, when the default account has one or it sets any of its keys.
  if (defaults.statusCheck !== undefined || missing.length < STATUS_CHECK_CREDENTIALS.length) {
    const [field] = missing;
    if (field)
      throw new HubtelConfigError(
        accountEnvVariable(name, field.spec.env!),
        `is not set: account "${name}" needs its own status check (environment variable of option ${scope}.statusCheck.${field.key})`,
      );
  } else delete options.statusCheck;
  checkOptionsFromEnv(() => resolveServiceAppAccountOptions(name, defaults, options), env.variables);
  return { name, ...options };
}
