import type { HubtelEnvSource } from 'nestjs-hubtel';
import { accountNamesFromEnv, checkOptionsFromEnv, declaredOptionsFromEnv, overrideOptions } from '#internal';
import type { SmsAccountOptions } from './sms.module-definition.js';
import {
  SmsModuleOptions,
  resolveSmsAccountOptions,
  resolveSmsOptions,
  type SmsAccountOverrides,
} from './sms.options.js';

/**
 * SmsModule options from environment variables: HUBTEL_SMS_CLIENT_ID, HUBTEL_SMS_CLIENT_SECRET
 * (required; the SMS key pair, distinct from HUBTEL_CLIENT_ID/SECRET), HUBTEL_SMS_URL,
 * HUBTEL_SMS_SENDER_ID, HUBTEL_TIMEOUT_MS, HUBTEL_RETRY_*, HUBTEL_DEFAULT_COUNTRY_CODE.
 * `overrides` win over the environment (undefined overrides are ignored).
 *
 * ```ts
 * SmsModule.forRoot(smsOptionsFromEnv(process.env))
 * SmsModule.forRootAsync({
 *   imports: [ConfigModule],
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => smsOptionsFromEnv((key) => config.get(key), { batchSize: 500 }),
 * })
 * ```
 * A missing or bad value of one of these variables fails here, naming the variable and the option.
 */
export function smsOptionsFromEnv(
  source: HubtelEnvSource = process.env,
  overrides: Partial<SmsModuleOptions> = {},
): SmsModuleOptions {
  const env = declaredOptionsFromEnv<SmsModuleOptions>(SmsModuleOptions, source, 'sms');
  const options = overrideOptions(SmsModuleOptions, env.options, overrides);
  checkOptionsFromEnv(() => resolveSmsOptions(options), env.variables, overrides);
  return options;
}

/** Default options and named accounts read from the environment (`smsAccountsFromEnv`). */
export interface SmsEnvAccounts {
  /** For `SmsModule.forRoot`. */
  default: SmsModuleOptions;
  /** For `SmsModule.registerAccount`, one each, in HUBTEL_ACCOUNTS order. */
  accounts: SmsAccountOptions[];
}

/**
 * The default account (as `smsOptionsFromEnv`) and the further accounts named in
 * HUBTEL_ACCOUNTS (`north,south`). Each account's variables are the default's with its name,
 * upper-cased (`-` as `_`), after `HUBTEL_`: HUBTEL_NORTH_SMS_CLIENT_ID and
 * HUBTEL_NORTH_SMS_CLIENT_SECRET (required: an account never uses another's keys), and
 * optionally HUBTEL_NORTH_SMS_SENDER_ID, HUBTEL_NORTH_SMS_URL, HUBTEL_NORTH_TIMEOUT_MS,
 * HUBTEL_NORTH_RETRY_*, HUBTEL_NORTH_DEFAULT_COUNTRY_CODE; what an account leaves unset is the
 * default account's.
 *
 * ```ts
 * const sms = smsAccountsFromEnv(process.env);
 * @Module({ imports: [SmsModule.forRoot(sms.default), ...sms.accounts.map((a) => SmsModule.registerAccount(a))] })
 * ```
 * A missing or bad value fails here, naming the variable (and the option it feeds).
 */
export function smsAccountsFromEnv(
  source: HubtelEnvSource = process.env,
  overrides: Partial<SmsModuleOptions> = {},
): SmsEnvAccounts {
  const defaults = smsOptionsFromEnv(source, overrides);
  return {
    default: defaults,
    accounts: accountNamesFromEnv(source).map((name) => accountFromEnv(source, name, defaults)),
  };
}

function accountFromEnv(
  source: HubtelEnvSource,
  name: string,
  defaults: SmsModuleOptions,
): SmsAccountOptions {
  const env = declaredOptionsFromEnv<SmsAccountOverrides>(SmsModuleOptions, source, `sms[${name}]`, name);
  checkOptionsFromEnv(() => resolveSmsAccountOptions(name, defaults, env.options), env.variables);
  return { name, ...(env.options as SmsAccountOverrides) };
}
