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

/**
 * Option paths (below `prefix`) of the transport settings, each with the variable that feeds it.
 * For `checkOptionsFromEnv`.
 */
export function hubtelHttpEnvVariables(prefix: string): Record<string, string> {
  return {
    [`${prefix}.timeoutMs`]: HUBTEL_ENV.timeoutMs,
    [`${prefix}.retry.maxAttempts`]: HUBTEL_ENV.retryMaxAttempts,
    [`${prefix}.retry.baseDelayMs`]: HUBTEL_ENV.retryBaseDelayMs,
    [`${prefix}.retry.maxDelayMs`]: HUBTEL_ENV.retryMaxDelayMs,
    [`${prefix}.defaultCountryCode`]: HUBTEL_ENV.defaultCountryCode,
  };
}

const CONFIG_ERROR_PREFIX = /^Invalid nestjs-hubtel option "[^"]*": /;

/**
 * Runs a module's own options check (`check`) on what a `*OptionsFromEnv` helper built, so a bad
 * or missing value fails at once naming the environment variable to fix (`HUBTEL_CLIENT_SECRET`)
 * as well as the option it feeds. `variables` maps option paths (`checkout.clientSecret`) to
 * their variable; a path whose value `overrides` gives is not the variable's fault and is left
 * out. Any other problem is left to the module's check at bootstrap: the app may still add the
 * option it is about.
 */
export function checkOptionsFromEnv(
  check: () => unknown,
  variables: Readonly<Record<string, string>>,
  overrides: object = {},
): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof HubtelConfigError)) throw error;
    const variable = Object.hasOwn(variables, error.option) ? variables[error.option] : undefined;
    if (variable === undefined || overridden(overrides, error.option)) return;
    const problem = error.message.replace(CONFIG_ERROR_PREFIX, '').replace(/^is required\b/, 'is not set');
    throw new HubtelConfigError(variable, `${problem} (environment variable of option ${error.option})`);
  }
}

/** Whether `overrides` gives a value at `path` (its first segment, the module prefix, skipped). */
function overridden(overrides: object, path: string): boolean {
  let value: unknown = overrides;
  for (const key of path.split('.').slice(1)) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value !== undefined;
}
