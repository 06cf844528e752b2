import type { HubtelEnvSource } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  accountEnvVariable,
  accountNamesFromEnv,
  checkOptionsFromEnv,
  dropUndefined,
  hubtelHttpEnvVariables,
  hubtelHttpOptionsFromEnv,
  readAccountEnv,
  readHubtelEnv,
} from '#internal';
import type { SmsAccountOptions } from './sms.module-definition.js';
import {
  resolveSmsAccountOptions,
  resolveSmsOptions,
  type SmsAccountOverrides,
  type SmsModuleOptions,
} from './sms.options.js';

/** The variable behind each option smsOptionsFromEnv reads (for errors naming it). */
const SMS_ENV_VARIABLES = {
  'sms.clientId': HUBTEL_ENV.smsClientId,
  'sms.clientSecret': HUBTEL_ENV.smsClientSecret,
  'sms.baseUrl': HUBTEL_ENV.smsUrl,
  'sms.senderId': HUBTEL_ENV.smsSenderId,
  ...hubtelHttpEnvVariables('sms'),
};

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
  const env = readHubtelEnv(source);
  const options: Partial<SmsModuleOptions> = {
    ...hubtelHttpOptionsFromEnv(env),
    ...dropUndefined({
      clientId: env.smsClientId,
      clientSecret: env.smsClientSecret,
      baseUrl: env.smsUrl,
      senderId: env.smsSenderId,
    }),
    ...dropUndefined(overrides),
  };
  checkOptionsFromEnv(() => resolveSmsOptions(options as SmsModuleOptions), SMS_ENV_VARIABLES, overrides);
  return options as SmsModuleOptions;
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
  /** `HUBTEL_SMS_CLIENT_ID` → `HUBTEL_NORTH_SMS_CLIENT_ID`. */
  const variable = (key: string) => accountEnvVariable(name, key);
  const env = readAccountEnv(source, name);
  const options = {
    ...hubtelHttpOptionsFromEnv(env),
    ...dropUndefined({
      clientId: env.smsClientId,
      clientSecret: env.smsClientSecret,
      baseUrl: env.smsUrl,
      senderId: env.smsSenderId,
    }),
  } as SmsAccountOverrides;
  // Errors name this account's variable only for what it set (or must set): an inherited bad
  // value is the default's, reported there.
  const scope = `sms[${name}]`;
  const variables: Record<string, string> = {
    [`${scope}.clientId`]: variable(HUBTEL_ENV.smsClientId),
    [`${scope}.clientSecret`]: variable(HUBTEL_ENV.smsClientSecret),
  };
  for (const [path, key] of Object.entries(SMS_ENV_VARIABLES)) {
    const option = path.slice('sms.'.length);
    if (valueAt(options, option) !== undefined) variables[`${scope}.${option}`] = variable(key);
  }
  checkOptionsFromEnv(() => resolveSmsAccountOptions(name, defaults, options), variables);
  return { name, ...options };
}

function valueAt(value: unknown, path: string): unknown {
  for (const key of path.split('.'))
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}
