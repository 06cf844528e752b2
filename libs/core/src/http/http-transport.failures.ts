/** A failed attempt without an HTTP answer: could the platform have seen it, so may it be retried? */
import {
  HubtelNetworkError,
  HubtelTimeoutError,
  HubtelUnknownOutcomeError,
  type HubtelErrorDetails,
} from '../errors/hubtel.errors.js';
import { maskPhoneNumbers } from '../logging/redact.js';
import type { HubtelRequest } from './http-transport.js';
import type { Decision } from './http-transport.responses.js';

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

export type AttemptFailure =
  /** Never connected: always safe to retry. */
  | { kind: 'pre-send'; code: string; message: string }
  /** No answer within the time-out: the platform may have acted. */
  | { kind: 'timeout'; code: string; message: string }
  /** Connection broke after it was made (reset, hang-up): the platform may have acted. */
  | { kind: 'broken'; code: string; message: string };

/** Retry or throw, for an attempt that got no HTTP answer. */
export function decideOnFailure(
  req: HubtelRequest,
  failure: AttemptFailure,
  attempt: number,
  timeoutMs: number,
): Decision {
  const where = `${req.operation}: ${req.method} ${req.api} ${req.path}`;
  const details: HubtelErrorDetails = { attempts: attempt, cause: sanitizedCause(failure) };
  if (failure.kind === 'pre-send') {
    const message = `${where} could not connect to the platform (${failure.code}) after ${attempt} attempt(s); nothing was sent`;
    return { retry: true, error: new HubtelNetworkError(message, details) };
  }
  const what =
    failure.kind === 'timeout' ? `timed out after ${timeoutMs} ms` : `lost its connection (${failure.code})`;
  if (!req.idempotent) {
    const message = `${where} ${what}: the request may have reached the platform, so its outcome is unknown. It was not retried: check its status before sending it again`;
    return { retry: false, error: new HubtelUnknownOutcomeError(message, details) };
  }
  const error =
    failure.kind === 'timeout'
      ? new HubtelTimeoutError(`${where} ${what} on each of ${attempt} attempt(s)`, details)
      : new HubtelNetworkError(`${where} ${what} after ${attempt} attempt(s)`, details);
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
  if (code === 'ETIMEDOUT' || code === 'ECONNABORTED' || /timeout/i.test(message)) {
    return { kind: 'timeout', code: 'ETIMEDOUT', message };
  }
  if (PRE_SEND_CODES.has(code)) return { kind: 'pre-send', code, message };
  return { kind: 'broken', code, message };
}

/** An Error carrying only the failure's code and message: never the axios config (headers, auth). */
function sanitizedCause(failure: AttemptFailure): Error {
  const cause = new Error(maskPhoneNumbers(failure.message)) as Error & { code?: string };
  cause.code = failure.code;
  return cause;
}
