import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { HubtelConfigError, type HubtelCredentials, type HubtelRetryOptions } from 'nestjs-hubtel';
import {
  HUBTEL_DEFAULT_RETRY,
  HUBTEL_ENV,
  HubtelHttpOptionsDto,
  HubtelOption,
  IsHubtelClientId,
  IsHubtelClientSecret,
  assertOptionsObject,
  backoffDelays,
  inheritDeclaredOptions,
  resolveAccountResolver,
  resolveUrl,
  resolveDeclaredOptions,
  type HttpTransportConfig,
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
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(64)
  @HubtelOption({ default: SMS_DEFAULTS.maxSenderLength })
  maxSenderLength?: number;

  /** Longest message content accepted, in characters. Default: no limit (the platform documents none). */
  @IsOptional()
  @IsInt()
  @Min(1)
  maxContentLength?: number;

  /** Recipients per platform batch in `sendBatch`. Default 100, at most 10000. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(SMS_LIMITS.maxBatchSize)
  @HubtelOption({ default: SMS_DEFAULTS.batchSize })
  batchSize?: number;

  /** Batches sent at once by `sendBatch`. Default 4, at most 64. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(SMS_LIMITS.maxConcurrency)
  @HubtelOption({ default: SMS_DEFAULTS.concurrency })
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
export type ResolvedSmsOptions = Pick<SmsModuleOptions, 'senderId' | 'maxContentLength'> &
  Required<Pick<SmsModuleOptions, 'baseUrl' | 'maxSenderLength' | 'batchSize' | 'concurrency'>> & {
    credentials: HubtelCredentials;
    http: ResolvedHubtelHttpOptions;
    /** Only on the default account, only when `accounts` is given. */
    accounts?: ResolvedAccountResolver<SmsAccountOverrides>;
  };

/**
 * Validates `SmsModuleOptions` at bootstrap; errors name the option (`sms.clientSecret`, or
 * `sms[north].clientSecret` for a named account: `scope`).
 */
export function resolveSmsOptions(options: SmsModuleOptions, scope = 'sms'): ResolvedSmsOptions {
  assertOptionsObject(options, scope);
  const checked = resolveDeclaredOptions(SmsModuleOptions, options, scope);
  const { clientId, clientSecret, timeoutMs, retry, defaultCountryCode, senderId, maxSenderLength } = checked;
  // Cross-field: the sender id's longest length is itself an option.
  if (senderId !== undefined && senderId.length > maxSenderLength!) {
    throw new HubtelConfigError(`${scope}.senderId`, `must be at most ${maxSenderLength} characters long`);
  }
  backoffDelays(retry as Required<HubtelRetryOptions>, HUBTEL_DEFAULT_RETRY, `${scope}.retry`);
  const accounts = resolveAccountResolver<SmsAccountOverrides>(checked.accounts, scope);
  return {
    credentials: { clientId, clientSecret },
    baseUrl: resolveUrl(checked.baseUrl, `${scope}.baseUrl`),
    senderId,
    maxSenderLength: maxSenderLength!,
    maxContentLength: checked.maxContentLength,
    batchSize: checked.batchSize!,
    concurrency: checked.concurrency!,
    http: {
      timeoutMs: timeoutMs!,
      retry: retry as HubtelRetryOptions,
      defaultCountryCode: defaultCountryCode!,
    },
    ...(accounts ? { accounts } : {}),
  };
}

/**
 * The options of named account `name`: the default account's (raw) options under the account's
 * own, as SmsModuleOptions declares (credentials its own, `retry` field by field, `accounts` the
 * default's only). Errors name the option under `sms[name]`.
 */
export function resolveSmsAccountOptions(
  name: string,
  defaults: SmsModuleOptions,
  overrides: unknown,
): ResolvedSmsOptions {
  const scope = `sms[${name}]`;
  const merged = inheritDeclaredOptions(SmsModuleOptions, scope, defaults, overrides);
  return resolveSmsOptions(merged as unknown as SmsModuleOptions, scope);
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
