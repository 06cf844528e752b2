import { HubtelConfigError, type HubtelCredentials, type HubtelHttpOptions } from 'nestjs-hubtel';
import {
  assertOptionsObject,
  checkOptions,
  inheritAccountOptions,
  resolveAccountResolver,
  type ResolvedAccountResolver,
  resolveCredentials,
  resolveHttpOptions,
  resolveUrl,
  type HttpTransportConfig,
  type ResolvedHubtelHttpOptions,
} from '#internal';
import { SMS_DEFAULTS, SMS_LOGGER_CONTEXT } from './sms.constants.js';
import { SmsOptionsDto } from './sms.options.dto.js';

/** Options of `SmsModule.forRoot` / `forRootAsync`. */
export interface SmsModuleOptions extends HubtelHttpOptions {
  /** SMS API client id (the account's SMS key pair, not the checkout one). */
  clientId: string;
  /** SMS API client secret. */
  clientSecret: string;
  /** SMS API base URL. Default `https://sms.hubtel.com`. */
  baseUrl?: string;
  /** Sender id used when a send gives no `from`. */
  senderId?: string;
  /** Longest sender id accepted. Default 11. */
  maxSenderLength?: number;
  /** Longest message content accepted, in characters. Default: no limit (the platform documents none). */
  maxContentLength?: number;
  /** Recipients per platform batch in `sendBatch`. Default 100, at most 10000. */
  batchSize?: number;
  /** Batches sent at once by `sendBatch`. Default 4, at most 64. */
  concurrency?: number;
  /**
   * Accounts known only at run time (a database of merchants): `sms.forAccount(name)` asks
   * `resolve(name)` for a name registered nowhere else. Default account only.
   */
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

/** Options after validation, every default filled in. */
export interface ResolvedSmsOptions {
  credentials: HubtelCredentials;
  baseUrl: string;
  senderId?: string;
  maxSenderLength: number;
  maxContentLength?: number;
  batchSize: number;
  concurrency: number;
  http: ResolvedHubtelHttpOptions;
  /** Only on the default account, only when `accounts` is given. */
  accounts?: ResolvedAccountResolver<SmsAccountOverrides>;
}

/**
 * Validates `SmsModuleOptions` at bootstrap; errors name the option (`sms.clientSecret`, or
 * `sms[north].clientSecret` for a named account: `scope`).
 */
export function resolveSmsOptions(options: SmsModuleOptions, scope = 'sms'): ResolvedSmsOptions {
  assertOptionsObject(options, scope);
  const raw = options as unknown as Record<string, unknown>;
  const credentials = resolveCredentials(raw, scope);
  const checked = checkOptions(
    SmsOptionsDto,
    {
      senderId: raw.senderId,
      maxSenderLength: raw.maxSenderLength,
      maxContentLength: raw.maxContentLength,
      batchSize: raw.batchSize,
      concurrency: raw.concurrency,
    },
    scope,
  );
  const maxSenderLength = checked.maxSenderLength ?? SMS_DEFAULTS.maxSenderLength;
  const senderId = checked.senderId;
  // Cross-field: the sender id's longest length is itself an option.
  if (senderId !== undefined && senderId.length > maxSenderLength) {
    throw new HubtelConfigError(`${scope}.senderId`, `must be at most ${maxSenderLength} characters long`);
  }
  const maxContentLength = checked.maxContentLength;
  const batchSize = checked.batchSize ?? SMS_DEFAULTS.batchSize;
  const concurrency = checked.concurrency ?? SMS_DEFAULTS.concurrency;
  const baseUrl = resolveUrl(raw.baseUrl, `${scope}.baseUrl`, SMS_DEFAULTS.baseUrl);
  const http = resolveHttpOptions(raw, scope);
  const resolved: ResolvedSmsOptions = {
    credentials,
    baseUrl,
    senderId,
    maxSenderLength,
    maxContentLength,
    batchSize,
    concurrency,
    http,
  };
  const accounts = resolveAccountResolver<SmsAccountOverrides>(raw.accounts, scope);
  if (accounts) resolved.accounts = accounts;
  return resolved;
}

/**
 * The options of named account `name`: the default account's (raw) options, minus its credentials
 * and resolver, under the account's own; `retry` merged field by field. Errors name the option
 * under `sms[name]`.
 */
export function resolveSmsAccountOptions(
  name: string,
  defaults: SmsModuleOptions,
  overrides: unknown,
): ResolvedSmsOptions {
  const scope = `sms[${name}]`;
  const merged = inheritAccountOptions(scope, defaults, overrides, SMS_ACCOUNT_INHERITANCE);
  return resolveSmsOptions(merged as unknown as SmsModuleOptions, scope);
}

/** Never inherited: a named account that sent with the default's keys would bill the wrong account. */
const SMS_ACCOUNT_INHERITANCE = {
  own: ['clientId', 'clientSecret'],
  defaultOnly: ['accounts'],
  merged: ['retry'],
} as const;

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
