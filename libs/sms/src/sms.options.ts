import { IsOptional, IsString, Matches } from 'class-validator';
import { HubtelConfigError, type HubtelAccountResolver, type HubtelEnvSource } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  HubtelHttpOptionsDto,
  HubtelOption,
  IsHubtelClientId,
  IsHubtelClientSecret,
  hubtelOptionsRecipe,
  type HttpTransportConfig,
  type HubtelEnvAccounts,
  type ResolvedAccountResolver,
  HTTP_GROUPED,
  httpParts,
  type HubtelHttpParts,
} from '#internal';
import { SMS_DEFAULTS, SMS_LIMITS, SMS_LOGGER_CONTEXT } from './sms.constants.js';

/**
 * Options of `SmsModule.forRoot` / `forRootAsync`, and of a named account (`registerAccount`: its
 * own credentials, the rest the default account's one by one).
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

  /** SMS API base URL. Default `https://sms.hubtel.com`. */
  @HubtelOption({ url: true, env: HUBTEL_ENV.smsUrl, default: SMS_DEFAULTS.baseUrl })
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

  /** Accounts known only at run time: `sms.forAccount(name)` asks `resolve(name)`. Default account only. */
  @HubtelOption({ account: 'defaultOnly' })
  accounts?: SmsAccountResolver;
}

/** What a named account sets: its own credentials; what it leaves out is the default account's. */
export type SmsAccountOverrides = Pick<SmsModuleOptions, 'clientId' | 'clientSecret'> &
  Partial<Omit<SmsModuleOptions, 'accounts' | 'clientId' | 'clientSecret'>>;

/**
 * Where the accounts known only at run time come from (see HubtelAccountResolver; its settings of
 * callback paths do not apply: SMS has none). An unknown name fails a send with SmsUnknownAccountError.
 */
export type SmsAccountResolver = Pick<HubtelAccountResolver<SmsAccountOverrides>, 'resolve' | 'cacheTtlMs'>;

/** Options after validation, every default filled in; credentials and transport settings grouped. */
export type ResolvedSmsOptions = Omit<SmsModuleOptions, (typeof HTTP_GROUPED)[number] | 'accounts'> &
  Required<Pick<SmsModuleOptions, 'baseUrl' | 'maxSenderLength' | 'batchSize' | 'concurrency'>> &
  HubtelHttpParts & {
    /** Only on the default account, only when `accounts` is given. */
    accounts?: ResolvedAccountResolver<SmsAccountOverrides>;
  };

/** Default options and named accounts read from the environment. */
export interface SmsEnvAccounts extends HubtelEnvAccounts<SmsModuleOptions, SmsAccountOverrides> {}

/** The SMS module's options, derived from SmsModuleOptions; errors name `sms[north].clientSecret`. */
export const SMS_OPTIONS_RECIPE = hubtelOptionsRecipe<
  SmsModuleOptions,
  ResolvedSmsOptions,
  SmsAccountOverrides
>({
  scope: 'sms',
  options: SmsModuleOptions,
  grouped: HTTP_GROUPED,
  resolve: (checked, { scope }) => {
    const { senderId, maxSenderLength } = checked;
    if (senderId !== undefined && senderId.length > maxSenderLength!)
      throw new HubtelConfigError(`${scope}.senderId`, `must be at most ${maxSenderLength} characters long`);
    return httpParts(checked, scope);
  },
});

/**
 * SmsModule options from the environment (HUBTEL_SMS_CLIENT_ID / _SECRET: the SMS key pair, not
 * HUBTEL_CLIENT_ID; see docs/sms.md), `overrides` winning; a bad value fails here, naming it.
 */
export function smsOptionsFromEnv(source?: HubtelEnvSource, overrides?: Partial<SmsModuleOptions>) {
  return SMS_OPTIONS_RECIPE.optionsFromEnv(source, overrides);
}

/**
 * The default account (as `smsOptionsFromEnv`) and those named in HUBTEL_ACCOUNTS, each from its
 * own variables (HUBTEL_NORTH_SMS_CLIENT_ID...; see docs/accounts.md).
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
