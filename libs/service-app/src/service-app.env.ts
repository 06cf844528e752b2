import { HubtelConfigError, type HubtelEnvSource } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  accountEnvVariable,
  accountNamesFromEnv,
  checkOptionsFromEnv,
  readAccountEnv,
} from '#internal';
import type { ServiceAppAccountOptions } from './service-app.module-definition.js';
import {
  SERVICE_APP_SCOPE,
  resolveServiceAppAccountOptions,
  serviceAppOptionsFromEnv,
  type ServiceAppAccountOverrides,
  type ServiceAppModuleOptions,
} from './service-app.options.js';

/** Default options and named accounts read from the environment (`serviceAppAccountsFromEnv`). */
export interface ServiceAppEnvAccounts {
  /** For `ServiceAppModule.forRoot` (spread your other options over it). */
  default: ServiceAppModuleOptions;
  /** For `ServiceAppModule.registerAccount`, one each, in HUBTEL_ACCOUNTS order. */
  accounts: ServiceAppAccountOptions[];
}

/** The status check's variables, with the option each feeds. */
const STATUS_CHECK_VARIABLES = [
  ['clientId', HUBTEL_ENV.clientId],
  ['clientSecret', HUBTEL_ENV.clientSecret],
  ['posSalesId', HUBTEL_ENV.posSalesId],
] as const;

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
export function serviceAppAccountsFromEnv(source: HubtelEnvSource = process.env): ServiceAppEnvAccounts {
  const defaults = serviceAppOptionsFromEnv(source);
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
  const variable = (key: string) => accountEnvVariable(name, key);
  const scope = `${SERVICE_APP_SCOPE}[${name}]`;
  const env = readAccountEnv(source, name);
  const options: ServiceAppAccountOverrides = {};
  if (env.callbackUrl !== undefined) options.callbackUrl = env.callbackUrl;
  if (env.defaultCountryCode !== undefined) options.defaultCountryCode = env.defaultCountryCode;
  const given = STATUS_CHECK_VARIABLES.filter(([option]) => env[option] !== undefined);
  if (defaults.statusCheck !== undefined || given.length > 0) {
    for (const [option, key] of STATUS_CHECK_VARIABLES)
      if (env[option] === undefined)
        throw new HubtelConfigError(
          variable(key),
          `is not set: account "${name}" needs its own status check (environment variable of option ${scope}.statusCheck.${option})`,
        );
    options.statusCheck = {
      clientId: env.clientId!,
      clientSecret: env.clientSecret!,
      posSalesId: env.posSalesId!,
    };
    if (env.statusUrl !== undefined) options.statusCheck.url = env.statusUrl;
  }
  // Errors name this account's variable for what it set; an inherited bad value is the default's.
  const variables: Record<string, string> = {
    [`${scope}.callbackUrl`]: variable(HUBTEL_ENV.callbackUrl),
    [`${scope}.defaultCountryCode`]: variable(HUBTEL_ENV.defaultCountryCode),
    [`${scope}.statusCheck.clientId`]: variable(HUBTEL_ENV.clientId),
    [`${scope}.statusCheck.clientSecret`]: variable(HUBTEL_ENV.clientSecret),
    [`${scope}.statusCheck.posSalesId`]: variable(HUBTEL_ENV.posSalesId),
    [`${scope}.statusCheck.url`]: variable(HUBTEL_ENV.statusUrl),
  };
  checkOptionsFromEnv(() => resolveServiceAppAccountOptions(name, defaults, options), variables);
  return { name, ...options };
}
