import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { checkOptions, HubtelCredentialsDto, HubtelHttpOptionsDto } from './hubtel-options.dto.js';
import {
  HUBTEL_DEFAULT_COUNTRY_CODE,
  HUBTEL_DEFAULT_RETRY,
  HUBTEL_DEFAULT_TIMEOUT_MS,
} from '../hubtel.constants.js';
import type {
  HubtelCredentials,
  HubtelHttpOptions,
  HubtelJobOwnershipOptions,
  ResolvedHubtelHttpOptions,
} from './hubtel-options.types.js';

/*
 * Option checks used by every module's provider factory, so that a bad option stops the app at
 * bootstrap with a HubtelConfigError naming it (`sms.clientSecret`), rather than failing on the
 * first request in production. Messages never echo a value that could be a secret.
 */

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/** The options object itself must be a plain object. */
export function assertOptionsObject(value: unknown, name: string): asserts value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HubtelConfigError(name, `must be an object, got ${describe(value)}`);
  }
}

/** A required, non-blank string. The value is never echoed (it may be a secret). */
export function requireString(value: unknown, name: string, options: { maxLength?: number } = {}): string {
  if (value === undefined || value === null) throw new HubtelConfigError(name, 'is required');
  if (typeof value !== 'string')
    throw new HubtelConfigError(name, `must be a string, got ${describe(value)}`);
  if (value.trim() === '') throw new HubtelConfigError(name, 'must not be empty');
  if (options.maxLength !== undefined && value.length > options.maxLength) {
    throw new HubtelConfigError(name, `must be at most ${options.maxLength} characters long`);
  }
  return value;
}

/** An optional string: undefined stays undefined, anything given must be a non-blank string. */
export function optionalString(
  value: unknown,
  name: string,
  options: { maxLength?: number } = {},
): string | undefined {
  return value === undefined ? undefined : requireString(value, name, options);
}

/**
 * An absolute http(s) URL, returned without trailing slashes so paths can be appended.
 * URLs carrying user:password are refused: credentials belong in the credential options, where
 * they are kept out of logs.
 */
export function resolveUrl(value: unknown, name: string, fallback?: string): string {
  if (value === undefined) {
    if (fallback === undefined) throw new HubtelConfigError(name, 'is required');
    return fallback;
  }
  if (typeof value !== 'string' || value.trim() === '') {
    throw new HubtelConfigError(name, `must be an absolute http(s) URL, got ${describe(value)}`);
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new HubtelConfigError(name, 'must be an absolute http(s) URL (it does not parse)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HubtelConfigError(name, `must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (url.username || url.password) {
    throw new HubtelConfigError(name, 'must not carry credentials; use the clientId/clientSecret options');
  }
  if (url.search || url.hash) {
    throw new HubtelConfigError(name, 'must not carry a query string or fragment');
  }
  return url.toString().replace(/\/+$/, '');
}

export interface NumberRule {
  /** Smallest allowed value. Default 1 (positive). */
  min?: number;
  max?: number;
  /** Whole numbers only. Default true. */
  integer?: boolean;
}

/** A finite number within [min, max], or the fallback when undefined. */
export function resolveNumber(value: unknown, name: string, fallback: number, rule: NumberRule = {}): number {
  if (value === undefined) return fallback;
  const { min = 1, max, integer = true } = rule;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new HubtelConfigError(name, `must be a finite number, got ${describe(value)}`);
  }
  if (integer && !Number.isInteger(value))
    throw new HubtelConfigError(name, `must be a whole number, got ${value}`);
  if (value < min) throw new HubtelConfigError(name, `must be at least ${min}, got ${value}`);
  if (max !== undefined && value > max)
    throw new HubtelConfigError(name, `must be at most ${max}, got ${value}`);
  return value;
}

/** A boolean, or the fallback when undefined. */
export function resolveBoolean(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new HubtelConfigError(name, `must be a boolean, got ${describe(value)}`);
  return value;
}

/** One of the listed values, or the fallback when undefined. */
export function resolveOneOf<T extends string>(
  value: unknown,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new HubtelConfigError(name, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  return value as T;
}

/** A country calling code: 1 to 3 digits, not starting with 0. */
export function resolveCountryCode(
  value: unknown,
  name: string,
  fallback = HUBTEL_DEFAULT_COUNTRY_CODE,
): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^[1-9]\d{0,2}$/.test(value)) {
    throw new HubtelConfigError(
      name,
      'must be a country calling code of 1 to 3 digits without "+" (e.g. "233")',
    );
  }
  return value;
}

/**
 * `clientId` and `clientSecret` read from `source` (the module's options object), named
 * `<prefix>.clientId` / `<prefix>.clientSecret` in errors.
 */
export function resolveCredentials(source: Record<string, unknown>, prefix: string): HubtelCredentials {
  assertOptionsObject(source, prefix);
  const { clientId, clientSecret } = checkOptions(
    HubtelCredentialsDto,
    { clientId: source.clientId, clientSecret: source.clientSecret },
    prefix,
  );
  return { clientId, clientSecret };
}

/** `timeoutMs`, `retry` and `defaultCountryCode` from a module's options, defaults filled in. */
export function resolveHttpOptions(
  source: HubtelHttpOptions | Record<string, unknown>,
  prefix: string,
): ResolvedHubtelHttpOptions {
  const raw = source as Record<string, unknown>;
  const http = checkOptions(
    HubtelHttpOptionsDto,
    { timeoutMs: raw.timeoutMs, retry: raw.retry, defaultCountryCode: raw.defaultCountryCode },
    prefix,
  );
  const retry = http.retry ?? {};
  return {
    timeoutMs: http.timeoutMs ?? HUBTEL_DEFAULT_TIMEOUT_MS,
    retry: {
      maxAttempts: retry.maxAttempts ?? HUBTEL_DEFAULT_RETRY.maxAttempts,
      ...backoffDelays(retry, HUBTEL_DEFAULT_RETRY, `${prefix}.retry`),
    },
    defaultCountryCode: http.defaultCountryCode ?? HUBTEL_DEFAULT_COUNTRY_CODE,
  };
}

/**
 * A backoff's first ceiling and cap (`<option>.baseDelayMs` / `.maxDelayMs`, already checked by a
 * DTO), defaults filled in. Cross-field, so in code: the cap defaults to at least the given base,
 * and a cap below the base is refused.
 */
export function backoffDelays(
  given: { baseDelayMs?: number; maxDelayMs?: number },
  defaults: { baseDelayMs: number; maxDelayMs: number },
  option: string,
): { baseDelayMs: number; maxDelayMs: number } {
  const baseDelayMs = given.baseDelayMs ?? defaults.baseDelayMs;
  const maxDelayMs = given.maxDelayMs ?? Math.max(defaults.maxDelayMs, baseDelayMs);
  if (maxDelayMs < baseDelayMs)
    throw new HubtelConfigError(
      `${option}.maxDelayMs`,
      `must be at least ${option.split('.').pop()!}.baseDelayMs (${baseDelayMs})`,
    );
  return { baseDelayMs, maxDelayMs };
}

/** Validates `leaseMs` / `sweepIntervalMs` found on `raw` (named `<prefix>.leaseMs`); absent ones stay absent. */
export function resolveJobOwnership(raw: Record<string, unknown>, prefix: string): HubtelJobOwnershipOptions {
  const out: HubtelJobOwnershipOptions = {};
  if (raw.leaseMs !== undefined)
    out.leaseMs = resolveNumber(raw.leaseMs, `${prefix}.leaseMs`, 0, { min: 1_000, max: 3_600_000 });
  // 0 turns it off; any other value at least 100 ms, so a typo cannot make it hammer the store.
  if (raw.sweepIntervalMs !== undefined && raw.sweepIntervalMs !== 0)
    out.sweepIntervalMs = resolveNumber(raw.sweepIntervalMs, `${prefix}.sweepIntervalMs`, 0, {
      min: 100,
      max: 3_600_000,
    });
  else if (raw.sweepIntervalMs === 0) out.sweepIntervalMs = 0;
  if (raw.shutdownGraceMs !== undefined)
    out.shutdownGraceMs = resolveNumber(raw.shutdownGraceMs, `${prefix}.shutdownGraceMs`, 0, {
      min: 0,
      max: 600_000,
    });
  return out;
}
