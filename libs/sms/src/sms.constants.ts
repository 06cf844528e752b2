import { HUBTEL_DEFAULT_BASE_URLS } from '#internal';

/** Resolved, validated options of the SmsModule (`ResolvedSmsOptions`). */
export const SMS_OPTIONS = Symbol('nestjs-hubtel:SMS_OPTIONS');
/** The HttpTransport the SmsService calls the SMS API through. */
export const SMS_HTTP_TRANSPORT = Symbol('nestjs-hubtel:SMS_HTTP_TRANSPORT');

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
  /**
   * Recipients per platform batch. The platform documents no maximum; 100 keeps each request
   * small and a failed batch cheap to account for.
   */
  batchSize: 100,
  /** Batches in flight at once. */
  concurrency: 4,
});

/** Upper bounds that catch typos (batchSize: 1e6) at bootstrap. */
export const SMS_LIMITS = Object.freeze({
  maxBatchSize: 10_000,
  maxConcurrency: 64,
});

export const SMS_LOGGER_CONTEXT = 'SmsService';
