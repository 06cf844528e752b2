import { type Logger, type LoggerService } from '@nestjs/common';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import type { HttpService } from '@nestjs/axios';
import type { AxiosRequestConfig, AxiosResponse } from 'axios';
import { firstValueFrom } from 'rxjs';
import {
  HubtelApiError,
  HubtelAuthenticationError,
  HubtelError,
  HubtelInsufficientCreditError,
  HubtelIpNotAllowedError,
  HubtelNetworkError,
  HubtelRateLimitedError,
  HubtelTimeoutError,
  HubtelUnknownOutcomeError,
  type HubtelErrorDetails,
} from '../errors/hubtel.errors.js';
import { HUBTEL_ERROR_BODY_LIMIT } from '../hubtel.constants.js';
import { isLogLevelEnabled } from '../logging/log-level.js';
import { maskPhoneNumbers, redactToString } from '../logging/redact.js';
import type { HubtelApi, HubtelCredentials, HubtelRetryOptions } from '../options/hubtel-options.types.js';
import { backoffDelay } from '../retry/backoff.js';
import { describeHubtelCode } from './hubtel-codes.js';
import type { HubtelOutboundSignal, HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';

export type HubtelHttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One call to the platform. */
export interface HubtelRequest {
  /** Which API: picks the base URL and the credentials. */
  api: HubtelApi;
  method: HubtelHttpMethod;
  /** Path below the API's base URL, starting with "/"; encode path segments yourself. */
  path: string;
  /** Query parameters; undefined values are left out. */
  query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** JSON body, sent exactly as given (field names and casing untouched). */
  body?: unknown;
  /** Extra headers (e.g. `Cache-Control: no-cache`). Cannot replace `Authorization`. */
  headers?: Readonly<Record<string, string>>;
  /**
   * True when sending the request twice does no harm (reads, status checks). Only idempotent
   * calls are retried after a time-out, a connection reset or a 502/504; a non-idempotent call
   * that may have reached the platform fails with HubtelUnknownOutcomeError instead.
   */
  idempotent: boolean;
  /** Short name for logs and error messages, e.g. `sms.sendBatch`, `checkout.initiate`. */
  operation: string;
  /** Time-out of each attempt for this call; defaults to the transport's. */
  timeoutMs?: number;
  /**
   * Non-2xx statuses to return as a response instead of throwing (e.g. `[404]` for a status check
   * that answers 404 for an unknown reference).
   */
  acceptStatus?: readonly number[];
  /**
   * Attempts allowed for this call at most (the transport's `retry.maxAttempts` still caps it):
   * 1 for a probe that must answer once, and quickly (a health check).
   */
  maxAttempts?: number;
}

export interface HubtelResponse<T> {
  status: number;
  /** Parsed JSON body; undefined for an empty body. */
  data: T;
  /** Response headers, names lower-cased. */
  headers: Record<string, string>;
  /** Attempts it took (1 = no retry). */
  attempts: number;
}

/** Test seams: replace the clock, the randomness of the jitter, the wait and the logger. */
export interface HttpTransportHooks {
  /** Waits between attempts. Default: a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1), for the full jitter. Default Math.random. */
  random?: () => number;
  /** Epoch ms, to read `Retry-After` given as an HTTP date. Default Date.now. */
  now?: () => number;
  /**
   * Where logs go. Default: a HubtelLogger with `loggerContext`. The transport passes no context
   * argument (a Nest Logger that has one would print it again as a line of its own).
   */
  logger?: LoggerService;
}

export interface HttpTransportConfig {
  /** Base URL (no trailing slash) of every API this transport may call. */
  baseUrls: Partial<Record<HubtelApi, string>>;
  /** Basic-auth pair per API; an API without one is called without Authorization. */
  credentials?: Partial<Record<HubtelApi, HubtelCredentials | undefined>>;
  timeoutMs: number;
  retry: HubtelRetryOptions;
  /** Context of the log lines, e.g. `SmsService`. Default `HubtelHttp`. */
  loggerContext?: string;
  hooks?: HttpTransportHooks;
  /** Told of every exchange with the platform (API, operation, status, latency). */
  telemetry?: HubtelTelemetry;
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
/** Errors from which a failure to connect can be told apart (the syscall that failed). */
const PRE_SEND_SYSCALLS = new Set(['connect', 'getaddrinfo', 'queryA', 'queryAaaa']);

const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const keepAsIs = [(body: unknown) => body];
const TRANSITIONAL = Object.freeze({
  clarifyTimeoutError: true,
  silentJSONParsing: true,
  forcedJSONParsing: false,
});

type AttemptFailure =
  /** Never connected: always safe to retry. */
  | { kind: 'pre-send'; code: string; message: string }
  /** No answer within the time-out: the platform may have acted. */
  | { kind: 'timeout'; code: string; message: string }
  /** Connection broke after it was made (reset, hang-up): the platform may have acted. */
  | { kind: 'broken'; code: string; message: string };

interface Decision {
  retry: boolean;
  /** Wait the platform asked for, if any. */
  retryAfterMs?: number;
  /** The error to throw if we do not (or can no longer) retry. */
  error: HubtelError;
}

// A referenced timer (unlike the inbound pipeline's): a script awaiting a send must not exit
// in the middle of a retry wait.
const defaultSleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/**
 * The one outbound HTTP client of the suite, on @nestjs/axios's HttpService. Every module calls
 * the platform through it, so auth, time-outs, the retry policy, error mapping and log redaction
 * exist once.
 *
 * Retry policy (attempts and delays from `retry`):
 *   - connection failures before anything was sent (refused, DNS, unreachable): retried;
 *   - 429 and 503: retried (the platform says it did not process the request);
 *   - 502, 504, time-outs and connections broken after connecting: retried only when the request
 *     is `idempotent`; otherwise HubtelUnknownOutcomeError at once, because the platform may have
 *     acted on it (an SMS sent, a payment started) and a blind resend could do it twice;
 *   - everything else (4xx, 500, ...): never retried.
 * Delays: full jitter, a uniform random wait in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))).
 * `Retry-After` (seconds or an HTTP date) on a 429/503 replaces the backoff and is honoured as
 * given when it is at most `maxDelayMs`; when the platform asks for longer we stop at once and
 * throw, with `retryAfterMs` on the error, rather than block the caller or retry too early.
 */
export class HttpTransport {
  private readonly logger: LoggerService;
  /** A logger given through hooks decides for itself which levels it prints. */
  private readonly customLogger: boolean;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly authHeaders: Partial<Record<HubtelApi, string>> = {};
  private readonly telemetry: HubtelTelemetry | undefined;

  constructor(
    private readonly http: HttpService,
    private readonly config: HttpTransportConfig,
  ) {
    const hooks = config.hooks ?? {};
    this.logger = hooks.logger ?? new HubtelLogger(config.loggerContext ?? 'HubtelHttp');
    this.customLogger = hooks.logger !== undefined;
    this.sleep = hooks.sleep ?? defaultSleep;
    this.random = hooks.random ?? Math.random;
    this.now = hooks.now ?? Date.now;
    this.telemetry = config.telemetry;
    for (const [api, pair] of Object.entries(config.credentials ?? {}) as [
      HubtelApi,
      HubtelCredentials | undefined,
    ][]) {
      if (pair) {
        this.authHeaders[api] =
          `Basic ${Buffer.from(`${pair.clientId}:${pair.clientSecret}`, 'utf8').toString('base64')}`;
      }
    }
  }

  /** The configured base URL of an API, or undefined when this transport does not call it. */
  baseUrl(api: HubtelApi): string | undefined {
    return this.config.baseUrls[api];
  }

  async request<T = unknown>(req: HubtelRequest): Promise<HubtelResponse<T>> {
    const base = this.config.baseUrls[req.api];
    if (!base) {
      throw new HubtelError(
        'HUBTEL_CONFIG_INVALID',
        `${req.operation}: no base URL is configured for the ${req.api} API`,
      );
    }
    if (!req.path.startsWith('/')) {
      throw new HubtelError('HUBTEL_CONFIG_INVALID', `${req.operation}: request path must start with "/"`);
    }
    const query = queryString(req.query);
    const url = base + req.path + query;
    const target = `${req.method} ${req.api} ${req.path}`;
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'Content-Type': 'application/json',
    };
    if (req.headers) {
      for (const name in req.headers) {
        if (name.toLowerCase() !== 'authorization') headers[name] = req.headers[name];
      }
    }
    const auth = this.authHeaders[req.api];
    if (auth) headers.Authorization = auth;
    const data = req.body === undefined ? undefined : JSON.stringify(req.body);
    const timeoutMs = req.timeoutMs ?? this.config.timeoutMs;
    const maxAttempts = Math.max(1, Math.min(req.maxAttempts ?? Infinity, this.config.retry.maxAttempts));
    const config: AxiosRequestConfig<string | undefined> = {
      url,
      method: req.method,
      headers,
      data,
      timeout: timeoutMs,
      responseType: 'text',
      // The body is already JSON text (axios' default would JSON.parse it again to check).
      transformRequest: keepAsIs,
      // Keep the raw text: we parse it ourselves so an HTML error page is not lost.
      transformResponse: keepAsIs,
      validateStatus: null,
      // A redirected POST may be replayed as a GET elsewhere; report it instead.
      maxRedirects: 0,
      maxContentLength: MAX_RESPONSE_BYTES,
      transitional: TRANSITIONAL,
    };

    for (let attempt = 1; ; attempt++) {
      // Building a debug line masks the whole body: skip it when nobody would see it.
      const debug = this.debugEnabled();
      if (debug) {
        this.logger.debug!(
          maskPhoneNumbers(`→ ${target}${query} [${req.operation}] attempt ${attempt}/${maxAttempts}`) +
            (data === undefined ? '' : ` body=${redactToString(req.body)}`),
        );
      }
      const started = debug ? this.now() : 0;
      const began = this.telemetry ? performance.now() : 0;
      let decision: Decision;
      try {
        const res = await this.send(config);
        this.telemetry?.record(outboundSignal(req, String(res.status), began));
        if (debug) {
          this.logger.debug!(`← ${res.status} ${target} [${req.operation}] in ${this.now() - started} ms`);
        }
        if ((res.status >= 200 && res.status < 300) || req.acceptStatus?.includes(res.status)) {
          return this.success<T>(req, res, attempt);
        }
        decision = this.decideOnStatus(req, res, attempt);
      } catch (error) {
        if (error instanceof HubtelError) throw error;
        const failure = classifyFailure(error);
        this.telemetry?.record(
          outboundSignal(req, failure.kind === 'timeout' ? 'timeout' : 'network', began),
        );
        decision = this.decideOnFailure(req, failure, attempt, timeoutMs);
      }

      if (!decision.retry || attempt >= maxAttempts) throw decision.error;
      let delay: number;
      if (decision.retryAfterMs !== undefined) {
        if (decision.retryAfterMs > this.config.retry.maxDelayMs) {
          this.logger.warn(
            `${req.operation}: ${target} asked to retry after ${decision.retryAfterMs} ms, more than retry.maxDelayMs (${this.config.retry.maxDelayMs}); giving up`,
          );
          throw decision.error;
        }
        delay = decision.retryAfterMs;
      } else {
        delay = this.backoff(attempt);
      }
      this.logger.warn(
        `${req.operation}: ${target} failed on attempt ${attempt}/${maxAttempts} (${maskPhoneNumbers(decision.error.message)}); retrying in ${delay} ms`,
      );
      await this.sleep(delay);
    }
  }

  /**
   * Through the HttpService's axios instance: its promise API (`axiosRef`, the documented way to
   * get one) skips the Observable and cancel token HttpService.request builds per call; a test
   * double of HttpService without `axiosRef` still works through `request`.
   */
  private send(config: AxiosRequestConfig<string | undefined>): Promise<AxiosResponse<string>> {
    const axiosRef = (this.http as { axiosRef?: HttpService['axiosRef'] }).axiosRef;
    if (axiosRef) return axiosRef.request<string>(config);
    return firstValueFrom(this.http.request<string>(config));
  }

  private debugEnabled(): boolean {
    if (!this.logger.debug) return false;
    return this.customLogger || isLogLevelEnabled('debug', this.logger as Logger);
  }

  /** Full jitter: uniform in [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))). */
  private backoff(attempt: number): number {
    return backoffDelay(attempt, this.config.retry, this.random);
  }

  private success<T>(req: HubtelRequest, res: AxiosResponse<string>, attempts: number): HubtelResponse<T> {
    const text = typeof res.data === 'string' ? res.data : '';
    let data: unknown;
    if (text.trim() !== '') {
      try {
        data = JSON.parse(text);
      } catch {
        const details = { httpStatus: res.status, body: truncate(text), attempts };
        const message = `${req.operation}: ${req.method} ${req.api} ${req.path} answered ${res.status} with a body that is not JSON`;
        // The platform accepted a non-idempotent request but we cannot read what it did.
        if (!req.idempotent) {
          throw new HubtelUnknownOutcomeError(
            `${message}; its outcome is unknown: check its status before sending it again`,
            details,
          );
        }
        throw new HubtelApiError(message, details);
      }
    }
    return { status: res.status, data: data as T, headers: plainHeaders(res.headers), attempts };
  }

  private decideOnStatus(req: HubtelRequest, res: AxiosResponse<string>, attempt: number): Decision {
    const status = res.status;
    const headers = plainHeaders(res.headers);
    const text = typeof res.data === 'string' ? res.data : '';
    const parsed = parseJson(text);
    const body = parsed === undefined ? truncate(text) : parsed;
    const responseCode = extractResponseCode(parsed);
    const meaning = describeHubtelCode(req.api, responseCode);
    const platformMessage = extractMessage(parsed);
    const where = `${req.operation}: ${req.method} ${req.api} ${req.path}`;
    const suffix =
      (responseCode !== undefined ? ` (code ${responseCode}${meaning ? `: ${meaning}` : ''})` : '') +
      (platformMessage ? ` — ${maskPhoneNumbers(platformMessage)}` : '');
    const details: HubtelErrorDetails = { httpStatus: status, responseCode, body, attempts: attempt };
    const retryAfterMs = parseRetryAfter(headers['retry-after'], this.now());
    if (retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;

    if (status === 429) {
      return {
        retry: true,
        retryAfterMs,
        error: new HubtelRateLimitedError(
          `${where} was rate limited by the platform (HTTP 429) after ${attempt} attempt(s)${suffix}`,
          details,
        ),
      };
    }
    if (status === 503) {
      return {
        retry: true,
        retryAfterMs,
        error: new HubtelApiError(
          `${where} failed: the platform is unavailable (HTTP 503) after ${attempt} attempt(s)${suffix}`,
          details,
        ),
      };
    }
    if (status === 502 || status === 504) {
      if (!req.idempotent) {
        return {
          retry: false,
          error: new HubtelUnknownOutcomeError(
            `${where} got HTTP ${status} from a gateway: the request may have reached the platform, so its outcome is unknown. It was not retried: check its status before sending it again`,
            details,
          ),
        };
      }
      return {
        retry: true,
        error: new HubtelApiError(
          `${where} failed with HTTP ${status} after ${attempt} attempt(s)${suffix}`,
          details,
        ),
      };
    }
    if (status === 401) {
      return {
        retry: false,
        error: new HubtelAuthenticationError(
          `${where} was refused: the ${req.api} API credentials (clientId/clientSecret) are wrong or lack access (HTTP 401)${suffix}`,
          details,
        ),
      };
    }
    if (status === 402 || (req.api === 'sms' && status === 400 && responseCode === '12')) {
      return {
        retry: false,
        error: new HubtelInsufficientCreditError(
          `${where} was refused: the account has no credit left (HTTP ${status})${suffix}`,
          details,
        ),
      };
    }
    if (status === 403 && looksLikeHtml(headers['content-type'], text)) {
      return {
        retry: false,
        error: new HubtelIpNotAllowedError(
          `${where} was refused with an HTML 403 page: this server's IP address is probably not on the platform's allow-list for the ${req.api} API (ask Hubtel to allow-list your server's public IP)`,
          details,
        ),
      };
    }
    if (status >= 300 && status < 400) {
      const location = headers.location ? ` to ${headers.location}` : '';
      return {
        retry: false,
        error: new HubtelApiError(
          `${where} was redirected${location} (HTTP ${status}); check the ${req.api} base URL`,
          details,
        ),
      };
    }
    return {
      retry: false,
      error: new HubtelApiError(`${where} failed with HTTP ${status}${suffix}`, details),
    };
  }

  private decideOnFailure(
    req: HubtelRequest,
    failure: AttemptFailure,
    attempt: number,
    timeoutMs: number,
  ): Decision {
    const where = `${req.operation}: ${req.method} ${req.api} ${req.path}`;
    const details: HubtelErrorDetails = { attempts: attempt, cause: sanitizedCause(failure) };
    if (failure.kind === 'pre-send') {
      return {
        retry: true,
        error: new HubtelNetworkError(
          `${where} could not connect to the platform (${failure.code}) after ${attempt} attempt(s); nothing was sent`,
          details,
        ),
      };
    }
    const what =
      failure.kind === 'timeout'
        ? `timed out after ${timeoutMs} ms`
        : `lost its connection (${failure.code})`;
    if (!req.idempotent) {
      return {
        retry: false,
        error: new HubtelUnknownOutcomeError(
          `${where} ${what}: the request may have reached the platform, so its outcome is unknown. It was not retried: check its status before sending it again`,
          details,
        ),
      };
    }
    if (failure.kind === 'timeout') {
      return {
        retry: true,
        error: new HubtelTimeoutError(`${where} ${what} on each of ${attempt} attempt(s)`, details),
      };
    }
    return {
      retry: true,
      error: new HubtelNetworkError(`${where} ${what} after ${attempt} attempt(s)`, details),
    };
  }
}

/** Builds a transport from a module's resolved options; the usual provider factory body. */
export function createHttpTransport(
  http: HttpService,
  config: HttpTransportConfig,
  loggerContext?: string,
): HttpTransport {
  return new HttpTransport(http, loggerContext === undefined ? config : { ...config, loggerContext });
}

function outboundSignal(req: HubtelRequest, status: string, began: number): HubtelOutboundSignal {
  return {
    kind: 'outbound',
    api: req.api,
    operation: req.operation,
    status,
    durationMs: performance.now() - began,
  };
}

function classifyFailure(error: unknown): AttemptFailure {
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

function queryString(query: HubtelRequest['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function plainHeaders(headers: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const source =
    headers && typeof (headers as { toJSON?: unknown }).toJSON === 'function'
      ? (headers as { toJSON(): Record<string, unknown> }).toJSON()
      : ((headers as Record<string, unknown> | undefined) ?? {});
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || value === null) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
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
  return text.length > HUBTEL_ERROR_BODY_LIMIT ? `${text.slice(0, HUBTEL_ERROR_BODY_LIMIT)}…` : text;
}

function looksLikeHtml(contentType: string | undefined, text: string): boolean {
  return /html/i.test(contentType ?? '') || /^\s*</.test(text);
}

/** The platform's own outcome code from an error body: responseCode, ResponseCode, code, or status. */
export function extractResponseCode(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  for (const key of ['responseCode', 'ResponseCode', 'code', 'Code']) {
    const value = b[key];
    if (typeof value === 'string' && /^\w{1,16}$/.test(value.trim())) return value.trim();
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  }
  // The SMS API puts its numeric sub-code in `status`; a word such as "Failed" is not a code.
  for (const key of ['status', 'Status']) {
    const value = b[key];
    if (typeof value === 'number' && Number.isInteger(value)) return String(value);
    if (typeof value === 'string' && /^\d{1,6}$/.test(value.trim())) return value.trim();
  }
  return undefined;
}

function extractMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  for (const key of ['message', 'Message', 'statusDescription', 'error', 'Error']) {
    const value = b[key];
    if (typeof value === 'string' && value.trim() !== '')
      return value.length > 300 ? `${value.slice(0, 300)}…` : value;
  }
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
