import { IsOptional, IsString, Matches } from 'class-validator';
import { HubtelConfigError, type HubtelAccountResolver } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  HubtelHttpOptionsDto,
  HubtelOption,
  declareCredentials,
  hubtelOptionsRecipe,
  type HttpTransportConfig,
  type HubtelEnvAccounts,
  type ResolvedAccountResolver,
  HTTP_GROUPED,
  httpParts,
  type HubtelHttpParts,
} from '#internal';
import { SMS_DEFAULTS, SMS_LIMITS } from './sms.constants.js';

/**
 * Options of `SmsModule.forRoot` / `forRootAsync`, and of a named account (its own credentials, the rest
 * the default's one by one). The key pair is the SMS one (HUBTEL_SMS_CLIENT_ID / _SECRET), not checkout's.
 */
export class SmsModuleOptions extends declareCredentials(
  { clientId: HUBTEL_ENV.smsClientId, clientSecret: HUBTEL_ENV.smsClientSecret },
  HubtelHttpOptionsDto,
) {
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

/** Accounts known only at run time (HubtelAccountResolver); an unknown name fails a send (SmsUnknownAccountError). */
export type SmsAccountResolver = Pick<HubtelAccountResolver<SmsAccountOverrides>, 'resolve' | 'cacheTtlMs'>;

/** Options after validation, every default filled in; credentials and transport settings grouped. */
export type ResolvedSmsOptions = Omit<SmsModuleOptions, (typeof HTTP_GROUPED)[number] | 'accounts'> &
  Required<Pick<SmsModuleOptions, 'baseUrl' | 'maxSenderLength' | 'batchSize' | 'concurrency'>> &
  HubtelHttpParts & { accounts?: ResolvedAccountResolver<SmsAccountOverrides> };

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
    return httpParts(checked);
  },
});

/** SmsModule options from the environment (see docs/sms.md), `overrides` winning; a bad value fails here. */
export const smsOptionsFromEnv = SMS_OPTIONS_RECIPE.optionsFromEnv;

/** The default account and those named in HUBTEL_ACCOUNTS (HUBTEL_NORTH_SMS_CLIENT_ID...; docs/accounts.md). */
export const smsAccountsFromEnv = SMS_OPTIONS_RECIPE.accountsFromEnv;

/** The transport of the SMS module: the SMS base URL and the SMS key pair only (its log context: the factory's). */
export function smsTransportConfig({ baseUrl, credentials, http }: ResolvedSmsOptions): HttpTransportConfig {
  return { baseUrls: { sms: baseUrl }, credentials: { sms: credentials }, ...http };
}
