import { setTimeout as delay } from 'node:timers/promises';
import { type Logger, type LoggerService } from '@nestjs/common';
import type { HttpService } from '@nestjs/axios';
import type { AxiosRequestConfig, AxiosResponse } from 'axios';
import { firstValueFrom } from 'rxjs';
import { HubtelError } from '../errors/hubtel.errors.js';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import { isLogLevelEnabled } from '../logging/log-level.js';
import { maskPhoneNumbers, redactToString } from '../logging/redact.js';
import type { HubtelApi, HubtelCredentials, HubtelRetryOptions } from '../options/hubtel-options.types.js';
import { backoffDelay } from '../retry/backoff.js';
import type { HubtelOutboundSignal, HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import {
  classifyFailure,
  decideOnFailure,
  decideOnStatus,
  decodeSuccess,
  type Decision,
} from './http-transport.responses.js';

/** One call to the platform. */
export interface HubtelRequest {
  /** Which API: picks the base URL and the credentials. */
  api: HubtelApi;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the API's base URL, starting with "/"; encode path segments yourself. */
  path: string;
  /** Query parameters; undefined values are left out. */
  query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** JSON body, sent exactly as given (field names and casing untouched). */
  body?: unknown;
  /** Extra headers (e.g. `Cache-Control: no-cache`). Cannot replace `Authorization`. */
  headers?: Readonly<Record<string, string>>;
  /** Sending it twice does no harm (reads, status checks): only then retried once it may have arrived. */
  idempotent: boolean;
  /** Short name for logs and error messages, e.g. `sms.sendBatch`, `checkout.initiate`. */
  operation: string;
  /** Time-out of each attempt for this call; defaults to the transport's. */
  timeoutMs?: number;
  /** Non-2xx statuses returned instead of thrown (`[404]`: a status check's unknown reference). */
  acceptStatus?: readonly number[];
  /** At most this many attempts, within `retry.maxAttempts` (1: a health probe). */
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

/** Test seams: a timer, the jitter's [0, 1) source, the clock, a logger (given no context argument). */
export interface HttpTransportHooks {
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
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
  telemetry?: HubtelTelemetry;
}

const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const keepAsIs = [(body: unknown) => body];

/**
 * The suite's one outbound HTTP client (on @nestjs/axios' HttpService). Retried: failures before
 * anything was sent, 429 and 503; 502, 504, time-outs and broken connections only when
 * `idempotent`, else HubtelUnknownOutcomeError at once (a resend could act twice). A `Retry-After`
 * above `maxDelayMs` throws at once (with `retryAfterMs`) rather than block or retry too early.
 */
export class HttpTransport {
  private readonly logger: LoggerService;
  private readonly authHeaders: Partial<Record<HubtelApi, string>>;

  constructor(
    private readonly http: HttpService,
    private readonly config: HttpTransportConfig,
  ) {
    this.logger = config.hooks?.logger ?? new HubtelLogger(config.loggerContext ?? 'HubtelHttp');
    this.authHeaders = {};
    for (const [api, pair] of Object.entries(config.credentials ?? {}))
      if (pair)
        this.authHeaders[api as HubtelApi] =
          `Basic ${Buffer.from(`${pair.clientId}:${pair.clientSecret}`).toString('base64')}`;
  }

  /** The configured base URL of an API, or undefined when this transport does not call it. */
  baseUrl(api: HubtelApi): string | undefined {
    return this.config.baseUrls[api];
  }

  async request<T = unknown>(req: HubtelRequest): Promise<HubtelResponse<T>> {
    const base = this.config.baseUrls[req.api];
    if (!base)
      throw new HubtelError(
        'HUBTEL_CONFIG_INVALID',
        `${req.operation}: no base URL is configured for the ${req.api} API`,
      );
    if (!req.path.startsWith('/'))
      throw new HubtelError('HUBTEL_CONFIG_INVALID', `${req.operation}: request path must start with "/"`);
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(req.query ?? {}))
      if (value !== undefined) params.append(key, String(value));
    const query = params.size > 0 ? `?${params}` : '';
    const target = `${req.method} ${req.api} ${req.path}`;
    const data = req.body === undefined ? undefined : JSON.stringify(req.body);
    const timeoutMs = req.timeoutMs ?? this.config.timeoutMs;
    const maxAttempts = Math.max(1, Math.min(req.maxAttempts ?? Infinity, this.config.retry.maxAttempts));
    const config = axiosRequest(req, base + req.path + query, this.authHeaders[req.api], timeoutMs, data);
    // A referenced timer, unlike the pipeline's: a script awaiting a send must not exit mid-retry.
    const { now = Date.now, random = Math.random, sleep = delay } = this.config.hooks ?? {};
    const { telemetry } = this.config;

    for (let attempt = 1; ; attempt++) {
      // Building a debug line masks the whole body: skip it when nobody would see it (a hooks
      // logger decides for itself which levels it prints).
      const debug =
        this.logger.debug !== undefined &&
        (this.config.hooks?.logger !== undefined || isLogLevelEnabled('debug', this.logger as Logger));
      if (debug)
        this.logger.debug!(
          maskPhoneNumbers(`→ ${target}${query} [${req.operation}] attempt ${attempt}/${maxAttempts}`) +
            (data === undefined ? '' : ` body=${redactToString(req.body)}`),
        );
      const started = debug ? now() : 0;
      const began = telemetry ? performance.now() : 0;
      let decision: Decision;
      try {
        const res = await this.send(config);
        telemetry?.record(outboundSignal(req, String(res.status), began));
        if (debug)
          this.logger.debug!(`← ${res.status} ${target} [${req.operation}] in ${now() - started} ms`);
        if ((res.status >= 200 && res.status < 300) || req.acceptStatus?.includes(res.status))
          return decodeSuccess<T>(req, res, attempt);
        decision = decideOnStatus(req, res, attempt, now());
      } catch (error) {
        if (error instanceof HubtelError) throw error;
        const failure = classifyFailure(error);
        telemetry?.record(outboundSignal(req, failure.kind === 'timeout' ? 'timeout' : 'network', began));
        decision = decideOnFailure(req, failure, attempt, timeoutMs);
      }

      if (!decision.retry || attempt >= maxAttempts) throw decision.error;
      // The backoff stays within maxDelayMs; only a longer Retry-After gets past it.
      const delay = decision.retryAfterMs ?? backoffDelay(attempt, this.config.retry, random);
      if (delay > this.config.retry.maxDelayMs) {
        this.logger.warn(
          `${req.operation}: ${target} asked to retry after ${delay} ms, more than retry.maxDelayMs (${this.config.retry.maxDelayMs}); giving up`,
        );
        throw decision.error;
      }
      this.logger.warn(
        `${req.operation}: ${target} failed on attempt ${attempt}/${maxAttempts} (${maskPhoneNumbers(decision.error.message)}); retrying in ${delay} ms`,
      );
      await sleep(delay);
    }
  }

  // axiosRef skips the Observable HttpService.request builds; a test double with only `request` works.
  private send(config: AxiosRequestConfig<string | undefined>): Promise<AxiosResponse<string>> {
    const axiosRef = (this.http as { axiosRef?: HttpService['axiosRef'] }).axiosRef;
    if (axiosRef) return axiosRef.request<string>(config);
    return firstValueFrom(this.http.request<string>(config));
  }
}

/** The axios request for `req` at `url`, sent as is on every attempt; `data` is the JSON text. */
function axiosRequest(
  req: HubtelRequest,
  url: string,
  auth: string | undefined,
  timeout: number,
  data: string | undefined,
): AxiosRequestConfig<string | undefined> {
  const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': 'application/json' };
  for (const name in req.headers ?? {})
    if (name.toLowerCase() !== 'authorization') headers[name] = req.headers![name]!;
  if (auth) headers.Authorization = auth;
  return {
    url,
    method: req.method,
    headers,
    data,
    timeout,
    responseType: 'text',
    // The body is JSON text already; we parse the answer ourselves, so an HTML error page is kept.
    transformRequest: keepAsIs,
    transformResponse: keepAsIs,
    validateStatus: null,
    // A redirected POST may be replayed as a GET elsewhere; report it instead.
    maxRedirects: 0,
    maxContentLength: MAX_RESPONSE_BYTES,
    transitional: { clarifyTimeoutError: true, silentJSONParsing: true, forcedJSONParsing: false },
  };
}

function outboundSignal(req: HubtelRequest, status: string, began: number): HubtelOutboundSignal {
  const { api, operation } = req;
  return { kind: 'outbound', api, operation, status, durationMs: performance.now() - began };
}
