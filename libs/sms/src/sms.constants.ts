import { HUBTEL_DEFAULT_ACCOUNT } from 'nestjs-hubtel';
import { HUBTEL_DEFAULT_BASE_URLS } from '#internal';

/** Injection tokens: resolved options, the default transport, and the named accounts' factory. */
export const SMS_OPTIONS = Symbol('nestjs-hubtel:SMS_OPTIONS');
export const SMS_HTTP_TRANSPORT = Symbol('nestjs-hubtel:SMS_HTTP_TRANSPORT');
/** `(account, config) => HttpTransport`: one provider, so a test can stand in for them all (SmsCapture). */
export const SMS_TRANSPORT_FACTORY = Symbol('nestjs-hubtel:SMS_TRANSPORT_FACTORY');

export const SMS_PATHS = Object.freeze({
  batchSend: '/v1/messages/batch/simple/send',
  send: '/v1/messages/send',
  message: (messageId: string) => `/v1/messages/${encodeURIComponent(messageId)}`,
  batch: (batchId: string) => `/v1/messages/batch/${encodeURIComponent(batchId)}`,
});

export const SMS_DEFAULTS = Object.freeze({
  baseUrl: HUBTEL_DEFAULT_BASE_URLS.sms,
  /** Alphanumeric sender ids are limited to 11 characters by the SMS networks. */
  maxSenderLength: 11,
  /** Recipients per batch (no documented maximum): small requests, a failed batch cheap to account for. */
  batchSize: 100,
  /** Batches in flight at once. */
  concurrency: 4,
});

/** Upper bounds that catch typos (batchSize: 1e6) at bootstrap. */
export const SMS_LIMITS = Object.freeze({ maxBatchSize: 10_000, maxConcurrency: 64 });

export const SMS_LOGGER_CONTEXT = 'SmsService';

/** Name of the account `forRoot` / `forRootAsync` configure (and its metric label). */
export const SMS_DEFAULT_ACCOUNT = HUBTEL_DEFAULT_ACCOUNT;

/** `@InjectSms(name)`'s token. */
export function getSmsAccountToken(name: string): symbol {
  return Symbol.for(`nestjs-hubtel:sms-account:${name}`);
}

export const SMS_ACCOUNTS = Symbol('nestjs-hubtel:SMS_ACCOUNTS');
