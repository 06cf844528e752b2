import { IsOptional, IsString, Matches } from 'class-validator';
import {
  HubtelConfigError,
  type HubtelCredentials,
  type HubtelEnvSource,
  type HubtelRetryOptions,
} from 'nestjs-hubtel';
import {
  HUBTEL_DEFAULT_RETRY,
  HUBTEL_ENV,
  HubtelHttpOptionsDto,
  HubtelOption,
  IsHubtelClientId,
  IsHubtelClientSecret,
  backoffDelays,
  hubtelOptionsRecipe,
  resolveUrl,
  type HttpTransportConfig,
  type HubtelEnvAccounts,
  type ResolvedAccountResolver,
  type ResolvedHubtelHttpOptions,
} from '#internal';
import { SMS_DEFAULTS, SMS_LIMITS, SMS_LOGGER_CONTEXT } from './sms.constants.js';

/**
 * Options of `SmsModule.forRoot` / `forRootAsync`, and of a named account (`registerAccount`,
 * whose options fall back to the default account's one by one, credentials excepted). Each field
 * declares its rules, its default, its environment variable (`smsOptionsFromEnv`; a named
 * account's is `HUBTEL_<NAME>_…`) and how a named account gets it.
 */
export class SmsModuleOptions extends HubtelHttpOptionsDto {
  /** SMS API client id (the account's SMS key pair, not the checkout one). */
  @IsHubtelClientId()
  @HubtelOption({ env: HUBTEL_ENV.smsClientId, account: 'own' })
  clientId: string;

  /** SMS API client secret. Never logged. */
  @IsHubtelClientSecret()
  @HubtelOption({ env: HUBTEL_ENV.smsClientSecret, account: 'own' })
  clientSecret: string;

  /** SMS API base URL (absolute http(s), checked in code). Default `https://sms.hubtel.com`. */
  @HubtelOption({ env: HUBTEL_ENV.smsUrl, default: SMS_DEFAULTS.baseUrl })
  baseUrl?: string;

  /** Sender id used when a send gives no `from` (at most `maxSenderLength` characters). */
  @IsOptional()
  @IsString()
  @Matches(/\S/, { message: 'senderId must not be empty' })
  @HubtelOption({ env: HUBTEL_ENV.smsSenderId })
  senderId?: string;

  /** Longest sender id accepted. Default 11. */
  @HubtelOption({ int: [1, 64], default: SMS_DEFAULTS.maxSenderLength })
  maxSenderLength?: number;

  /** Longest message content accepted, in characters. Default: no limit (the platform documents none). */
  @HubtelOption({ int: 1 })
  maxContentLength?: number;

  /** Recipients per platform batch in `sendBatch`. Default 100, at most 10000. */
  @HubtelOption({ int: [1, SMS_LIMITS.maxBatchSize], default: SMS_DEFAULTS.batchSize })
  batchSize?: number;

  /** Batches sent at once by `sendBatch`. Default 4, at most 64. */
  @HubtelOption({ int: [1, SMS_LIMITS.maxConcurrency], default: SMS_DEFAULTS.concurrency })
  concurrency?: number;

  /**
   * Accounts known only at run time (a database of merchants): `sms.forAccount(name)` asks
   * `resolve(name)` for a name registered nowhere else. Default account only.
   */
  @HubtelOption({ account: 'defaultOnly' })
  accounts?: SmsAccountResolver;
}

/**
 * What a named account sets. It gives its own credentials (an account never sends with another
 * account's keys); every other option it leaves out is the default account's (`retry` field by
 * field).
 */
export type SmsAccountOverrides = Pick<SmsModuleOptions, 'clientId' | 'clientSecret'> &
  Partial<Omit<SmsModuleOptions, 'accounts' | 'clientId' | 'clientSecret'>>;

/** Where the accounts known only at run time come from. */
export interface SmsAccountResolver {
  /**
   * The account's options (as `registerAccount` takes them, without `name`), or undefined when
   * there is no account by that name (the send then fails with SmsUnknownAccountError). Called
   * once per name for concurrent first uses, again after `cacheTtlMs`; a rejection or an
   * unknown name is not cached.
   */
  resolve: (name: string) => Promise<SmsAccountOverrides | undefined> | SmsAccountOverrides | undefined;
  /** How long a resolved account is kept, in ms (0 to one day). Default 300000 (5 min). */
  cacheTtlMs?: number;
}

/** Options after validation, every default filled in; credentials and transport settings grouped. */
export type ResolvedSmsOptions = Omit<SmsModuleOptions, SmsGroupedOption | 'accounts'> &
  Required<Pick<SmsModuleOptions, 'baseUrl' | 'maxSenderLength' | 'batchSize' | 'concurrency'>> & {
    credentials: HubtelCredentials;
    http: ResolvedHubtelHttpOptions;
    /** Only on the default account, only when `accounts` is given. */
    accounts?: ResolvedAccountResolver<SmsAccountOverrides>;
  };

type SmsGroupedOption = 'clientId' | 'clientSecret' | 'timeoutMs' | 'retry' | 'defaultCountryCode';

/** Default options and named accounts read from the environment (`smsAccountsFromEnv`). */
export interface SmsEnvAccounts extends HubtelEnvAccounts<SmsModuleOptions, SmsAccountOverrides> {
  /** For `SmsModule.forRoot`. */
  default: SmsModuleOptions;
}

/**
 * The options of the SMS module, derived from SmsModuleOptions. Errors name the option
 * (`sms.clientSecret`, `sms[north].clientSecret` for a named account).
 */
export const SMS_OPTIONS_RECIPE = hubtelOptionsRecipe<
  SmsModuleOptions,
  ResolvedSmsOptions,
  SmsAccountOverrides
>({
  scope: 'sms',
  options: SmsModuleOptions,
  grouped: ['clientId', 'clientSecret', 'timeoutMs', 'retry', 'defaultCountryCode'],
  resolve: (checked, { scope }) => {
    const { clientId, clientSecret, timeoutMs, retry, defaultCountryCode, senderId, maxSenderLength } =
      checked;
    // Cross-field: the sender id's longest length is itself an option.
    if (senderId !== undefined && senderId.length > maxSenderLength!) {
      throw new HubtelConfigError(`${scope}.senderId`, `must be at most ${maxSenderLength} characters long`);
    }
    backoffDelays(retry as Required<HubtelRetryOptions>, HUBTEL_DEFAULT_RETRY, `${scope}.retry`);
    return {
      credentials: { clientId, clientSecret },
      baseUrl: resolveUrl(checked.baseUrl, `${scope}.baseUrl`),
      http: {
        timeoutMs: timeoutMs!,
        retry: retry as HubtelRetryOptions,
        defaultCountryCode: defaultCountryCode!,
      },
    };
  },
});

/** Validates `SmsModuleOptions` at bootstrap, every default filled in. */
export const resolveSmsOptions = (options: SmsModuleOptions): ResolvedSmsOptions =>
  SMS_OPTIONS_RECIPE.resolve(options);

/**
 * The options of named account `name`: the default account's (raw) options under the account's
 * own, as SmsModuleOptions declares (credentials its own, `retry` field by field, `accounts` the
 * default's only). Errors name the option under `sms[name]`.
 */
export const resolveSmsAccountOptions = (
  name: string,
  defaults: SmsModuleOptions,
  overrides: unknown,
): ResolvedSmsOptions => SMS_OPTIONS_RECIPE.resolveAccount(name, defaults, overrides);

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
  return SMS_OPTIONS_RECIPE.optionsFromEnv(source, overrides);
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
  return SMS_OPTIONS_RECIPE.accountsFromEnv(source, overrides);
}

/** The transport settings of the SMS module: the SMS base URL and the SMS key pair only. */
export function smsTransportConfig(options: ResolvedSmsOptions): HttpTransportConfig {
  return {
    baseUrls: { sms: options.baseUrl },
    credentials: { sms: options.credentials },
    timeoutMs: options.http.timeoutMs,
    retry: options.http.retry,
    loggerContext: SMS_LOGGER_CONTEXT,
  };
}
