import { HubtelConfigError, type HubtelCredentials, type HubtelHttpOptions } from 'nestjs-hubtel';
import {
  assertOptionsObject,
  checkOptions,
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
}

/** Validates `SmsModuleOptions` at bootstrap; errors name the option (`sms.clientSecret`). */
export function resolveSmsOptions(options: SmsModuleOptions): ResolvedSmsOptions {
  assertOptionsObject(options, 'sms');
  const raw = options as unknown as Record<string, unknown>;
  const credentials = resolveCredentials(raw, 'sms');
  const checked = checkOptions(
    SmsOptionsDto,
    {
      senderId: raw.senderId,
      maxSenderLength: raw.maxSenderLength,
      maxContentLength: raw.maxContentLength,
      batchSize: raw.batchSize,
      concurrency: raw.concurrency,
    },
    'sms',
  );
  const maxSenderLength = checked.maxSenderLength ?? SMS_DEFAULTS.maxSenderLength;
  const senderId = checked.senderId;
  // Cross-field: the sender id's longest length is itself an option.
  if (senderId !== undefined && senderId.length > maxSenderLength) {
    throw new HubtelConfigError('sms.senderId', `must be at most ${maxSenderLength} characters long`);
  }
  const maxContentLength = checked.maxContentLength;
  const batchSize = checked.batchSize ?? SMS_DEFAULTS.batchSize;
  const concurrency = checked.concurrency ?? SMS_DEFAULTS.concurrency;
  const baseUrl = resolveUrl(raw.baseUrl, 'sms.baseUrl', SMS_DEFAULTS.baseUrl);
  const http = resolveHttpOptions(raw, 'sms');
  return { credentials, baseUrl, senderId, maxSenderLength, maxContentLength, batchSize, concurrency, http };
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
