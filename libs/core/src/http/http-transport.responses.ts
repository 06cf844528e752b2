/** What an attempt's answer or failure means: a 2xx decoded, else a typed error and whether to retry. */
import { AxiosHeaders, type AxiosResponse, type RawAxiosHeaders } from 'axios';
import {
  HubtelApiError,
  HubtelAuthenticationError,
  HubtelInsufficientCreditError,
  HubtelIpNotAllowedError,
  HubtelNetworkError,
  HubtelRateLimitedError,
  HubtelTimeoutError,
  HubtelUnknownOutcomeError,
  type HubtelError,
  type HubtelErrorDetails,
} from '../errors/hubtel.errors.js';
import { maskPhoneNumbers } from '../logging/redact.js';
import { fieldOf } from './answer-fields.js';
import { refusalDetail } from './hubtel-codes.js';
import type { HubtelRequest, HubtelResponse } from './http-transport.js';

/** Platform bodies kept on errors are cut to this many characters. */
const ERROR_BODY_LIMIT = 2_048;

/** What the retry loop does after a failed attempt: `error` is thrown when it does not retry. */
export interface Decision {
  retry: boolean;
  /** Wait the platform asked for, if any. */
  retryAfterMs?: number;
  error: HubtelError;
}

/** A 2xx (or accepted) answer: its body parsed as JSON (undefined when empty). */
export function decodeSuccess<T>(
  req: HubtelRequest,
  res: AxiosResponse<string>,
  attempts: number,
): HubtelResponse<T> {
  const text = typeof res.data === 'string' ? res.data : '';
  const data = parseJson(text);
  if (data === undefined && text.trim() !== '') {
    const details = { httpStatus: res.status, body: truncate(text), attempts };
    const message = `${where(req)} answered ${res.status} with a body that is not JSON`;
    // The platform accepted a non-idempotent request but we cannot read what it did.
    if (!req.idempotent)
      throw new HubtelUnknownOutcomeError(
        `${message}; its outcome is unknown: check its status before sending it again`,
        details,
      );
    throw new HubtelApiError(message, details);
  }
  return { status: res.status, data: data as T, headers: plainHeaders(res.headers), attempts };
}

/** Retry or throw, for a non-2xx answer; `now` reads a `Retry-After` given as an HTTP date. */
export function decideOnStatus(
  req: HubtelRequest,
  res: AxiosResponse<string>,
  attempt: number,
  now: number,
): Decision {
  const status = res.status;
  const at = where(req);
  const headers = plainHeaders(res.headers);
  const text = typeof res.data === 'string' ? res.data : '';
  const parsed = parseJson(text);
  const body = parsed === undefined ? truncate(text) : parsed;
  const responseCode = extractResponseCode(parsed);
  const suffix = refusalDetail(req.api, responseCode, parsed);
  const details: HubtelErrorDetails = { httpStatus: status, responseCode, body, attempts: attempt };
  const retryAfterMs = parseRetryAfter(headers['retry-after'], now);
  if (retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;

  const retry = (error: HubtelError, wait?: number): Decision => ({ retry: true, retryAfterMs: wait, error });
  const stop = (error: HubtelError): Decision => ({ retry: false, error });
  const failed = `${at} failed with HTTP ${status}`;

  if (status === 429) {
    const message = `${at} was rate limited by the platform (HTTP 429) after ${attempt} attempt(s)${suffix}`;
    return retry(new HubtelRateLimitedError(message, details), retryAfterMs);
  }
  if (status === 503) {
    const message = `${at} failed: the platform is unavailable (HTTP 503) after ${attempt} attempt(s)${suffix}`;
    return retry(new HubtelApiError(message, details), retryAfterMs);
  }
  if ((status === 502 || status === 504) && !req.idempotent) {
    const message = `${at} got HTTP ${status} from a gateway: the request may have reached the platform, so its outcome is unknown. It was not retried: check its status before sending it again`;
    return stop(new HubtelUnknownOutcomeError(message, details));
  }
  if (status === 502 || status === 504)
    return retry(new HubtelApiError(`${failed} after ${attempt} attempt(s)${suffix}`, details));
  if (status === 401) {
    const message = `${at} was refused: the ${req.api} API credentials (clientId/clientSecret) are wrong or lack access (HTTP 401)${suffix}`;
    return stop(new HubtelAuthenticationError(message, details));
  }
  if (status === 402 || (req.api === 'sms' && status === 400 && responseCode === '12')) {
    const message = `${at} was refused: the account has no credit left (HTTP ${status})${suffix}`;
    return stop(new HubtelInsufficientCreditError(message, details));
  }
  if (status === 403 && (/html/i.test(headers['content-type'] ?? '') || /^\s*</.test(text))) {
    const message = `${at} was refused with an HTML 403 page: this server's IP address is probably not on the platform's allow-list for the ${req.api} API (ask Hubtel to allow-list your server's public IP)`;
    return stop(new HubtelIpNotAllowedError(message, details));
  }
  if (status >= 300 && status < 400) {
    const location = headers.location ? ` to ${headers.location}` : '';
    const message = `${at} was redirected${location} (HTTP ${status}); check the ${req.api} base URL`;
    return stop(new HubtelApiError(message, details));
  }
  return stop(new HubtelApiError(`${failed}${suffix}`, details));
}

function plainHeaders(headers: AxiosResponse['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  // Unset headers left out, several values joined: axios' own rendering.
  for (const [name, value] of Object.entries(AxiosHeaders.from(headers as RawAxiosHeaders).toJSON(true)))
    out[name.toLowerCase()] = String(value);
  return out;
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function truncate(text: string): string {
  return text.length > ERROR_BODY_LIMIT ? `${text.slice(0, ERROR_BODY_LIMIT)}…` : text;
}

function where(req: HubtelRequest): string {
  return `${req.operation}: ${req.method} ${req.api} ${req.path}`;
}

/** The platform's own outcome code from an error body: responseCode, ResponseCode, code, or status. */
function extractResponseCode(body: unknown): string | undefined {
  for (const value of [fieldOf(body, 'responseCode'), fieldOf(body, 'code')]) {
    if (typeof value === 'string' && /^\w{1,16}$/.test(value.trim())) return value.trim();
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  // The SMS API puts its numeric sub-code in `status`; a word such as "Failed" is not a code.
  const status = fieldOf(body, 'status');
  if (typeof status === 'number' && Number.isInteger(status)) return String(status);
  if (typeof status === 'string' && /^\d{1,6}$/.test(status.trim())) return status.trim();
  return undefined;
}

/** `Retry-After` as delta-seconds or an HTTP date, in ms from now (never negative). */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Errors raised before the connection was made: the platform cannot have seen the request. */
const PRE_SEND_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EADDRNOTAVAIL',
]);
/** Syscalls whose ETIMEDOUT is a failure to connect. */
const PRE_SEND_SYSCALLS = new Set(['connect', 'getaddrinfo', 'queryA', 'queryAaaa']);

/** `pre-send`: never connected, safe to retry; `timeout` or `broken` (reset): the platform may have acted. */
export interface AttemptFailure {
  kind: 'pre-send' | 'timeout' | 'broken';
  code: string;
  message: string;
}

/** Retry or throw, for an attempt that got no HTTP answer. */
export function decideOnFailure(
  req: HubtelRequest,
  failure: AttemptFailure,
  attempt: number,
  timeoutMs: number,
): Decision {
  // The cause carries the failure's code and message only: never the axios config (headers, auth).
  const cause = Object.assign(new Error(maskPhoneNumbers(failure.message)), { code: failure.code });
  const details: HubtelErrorDetails = { attempts: attempt, cause };
  if (failure.kind === 'pre-send') {
    const message = `${where(req)} could not connect to the platform (${failure.code}) after ${attempt} attempt(s); nothing was sent`;
    return { retry: true, error: new HubtelNetworkError(message, details) };
  }
  const what =
    failure.kind === 'timeout' ? `timed out after ${timeoutMs} ms` : `lost its connection (${failure.code})`;
  if (!req.idempotent) {
    const message = `${where(req)} ${what}: the request may have reached the platform, so its outcome is unknown. It was not retried: check its status before sending it again`;
    return { retry: false, error: new HubtelUnknownOutcomeError(message, details) };
  }
  const error =
    failure.kind === 'timeout'
      ? new HubtelTimeoutError(`${where(req)} ${what} on each of ${attempt} attempt(s)`, details)
      : new HubtelNetworkError(`${where(req)} ${what} after ${attempt} attempt(s)`, details);
  return { retry: true, error };
}

export function classifyFailure(error: unknown): AttemptFailure {
  const err = error as { code?: unknown; message?: unknown; cause?: { code?: unknown; syscall?: unknown } };
  const code = String(err?.code ?? err?.cause?.code ?? 'UNKNOWN');
  const message = typeof err?.message === 'string' ? err.message : String(error);
  const syscall = err?.cause?.syscall ?? (err as { syscall?: unknown })?.syscall;
  if (code === 'ETIMEDOUT' && typeof syscall === 'string' && PRE_SEND_SYSCALLS.has(syscall)) {
    // The OS gave up connecting: nothing was sent.
    return { kind: 'pre-send', code, message };
  }
  if (code === 'ETIMEDOUT' || code === 'ECONNABORTED' || /timeout/i.test(message))
    return { kind: 'timeout', code: 'ETIMEDOUT', message };
  if (PRE_SEND_CODES.has(code)) return { kind: 'pre-send', code, message };
  return { kind: 'broken', code, message };
}
