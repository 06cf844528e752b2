import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HUBTEL_ENV } from '../hubtel.constants.js';
import type { HubtelHttpOptions } from './hubtel-options.types.js';

/**
 * Where settings come from: `process.env`, any string map, a getter such as
 * `(key) => configService.get(key)`, or an object with a `get(key)` method (a @nestjs/config
 * ConfigService itself).
 */
export type HubtelEnvSource =
  | ((key: string) => string | number | boolean | undefined | null)
  | { get(key: string): unknown }
  | Readonly<Record<string, string | undefined>>;

/** Every setting `readHubtelEnv` knows, parsed. Unset (or blank) variables are undefined. */
export interface HubtelEnv {
  /** HUBTEL_CLIENT_ID: API id used for checkout and the status check. */
  clientId?: string;
  /** HUBTEL_CLIENT_SECRET */
  clientSecret?: string;
  /** HUBTEL_SMS_CLIENT_ID: the SMS API has its own key pair. */
  smsClientId?: string;
  /** HUBTEL_SMS_CLIENT_SECRET */
  smsClientSecret?: string;
  /** HUBTEL_SMS_URL */
  smsUrl?: string;
  /** HUBTEL_SMS_SENDER_ID: default sender id of SMS sends. */
  smsSenderId?: string;
  /** HUBTEL_CHECKOUT_URL */
  checkoutUrl?: string;
  /** HUBTEL_STATUS_URL */
  statusUrl?: string;
  /** HUBTEL_CALLBACK_URL: the platform's fulfillment callback receiver. */
  callbackUrl?: string;
  /** HUBTEL_POS_SALES_ID */
  posSalesId?: string;
  /** HUBTEL_MERCHANT_ACCOUNT_NUMBER */
  merchantAccountNumber?: string;
  /** HUBTEL_TIMEOUT_MS */
  timeoutMs?: number;
  /** HUBTEL_RETRY_MAX_ATTEMPTS */
  retryMaxAttempts?: number;
  /** HUBTEL_RETRY_BASE_DELAY_MS */
  retryBaseDelayMs?: number;
  /** HUBTEL_RETRY_MAX_DELAY_MS */
  retryMaxDelayMs?: number;
  /** HUBTEL_DEFAULT_COUNTRY_CODE */
  defaultCountryCode?: string;
}

const NUMERIC_KEYS = new Set<keyof HubtelEnv>([
  'timeoutMs',
  'retryMaxAttempts',
  'retryBaseDelayMs',
  'retryMaxDelayMs',
]);

/** One raw variable from a source, trimmed; blank counts as unset (an empty `.env` line). */
export function readEnvValue(source: HubtelEnvSource, key: string): string | undefined {
  let raw: unknown;
  if (typeof source === 'function') raw = source(key);
  else if (typeof (source as { get?: unknown }).get === 'function')
    raw = (source as { get(key: string): unknown }).get(key);
  else raw = (source as Readonly<Record<string, unknown>>)[key];
  if (raw === undefined || raw === null) return undefined;
  const text = String(raw).trim();
  return text === '' ? undefined : text;
}

/** A numeric variable; a value that is not a plain number fails naming the variable. */
export function readEnvNumber(source: HubtelEnvSource, key: string): number | undefined {
  const text = readEnvValue(source, key);
  if (text === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(text))
    throw new HubtelConfigError(key, 'must be a number (environment variable)');
  return Number(text);
}

/**
 * Reads every HUBTEL_* variable (names in `HUBTEL_ENV`) from `source`, `process.env` by default.
 * Modules build their options from the result with a thin picker (`smsOptionsFromEnv`, ...);
 * those pickers, not this function, decide what is required, and the module's options check then
 * fails at bootstrap naming what is missing.
 */
export function readHubtelEnv(source: HubtelEnvSource = process.env): HubtelEnv {
  const env: HubtelEnv = {};
  for (const [field, key] of Object.entries(HUBTEL_ENV) as [keyof HubtelEnv, string][]) {
    const value = NUMERIC_KEYS.has(field) ? readEnvNumber(source, key) : readEnvValue(source, key);
    if (value !== undefined) (env as Record<string, unknown>)[field] = value;
  }
  return env;
}

/** The transport settings (`timeoutMs`, `retry`, `defaultCountryCode`) found in the environment. */
export function hubtelHttpOptionsFromEnv(env: HubtelEnv): HubtelHttpOptions {
  const out: HubtelHttpOptions = {};
  if (env.timeoutMs !== undefined) out.timeoutMs = env.timeoutMs;
  const retry: NonNullable<HubtelHttpOptions['retry']> = {};
  if (env.retryMaxAttempts !== undefined) retry.maxAttempts = env.retryMaxAttempts;
  if (env.retryBaseDelayMs !== undefined) retry.baseDelayMs = env.retryBaseDelayMs;
  if (env.retryMaxDelayMs !== undefined) retry.maxDelayMs = env.retryMaxDelayMs;
  if (Object.keys(retry).length > 0) out.retry = retry;
  if (env.defaultCountryCode !== undefined) out.defaultCountryCode = env.defaultCountryCode;
  return out;
}

/** Drops undefined fields, so `{ ...fromEnv, ...dropUndefined(overrides) }` keeps env values. */
export function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
