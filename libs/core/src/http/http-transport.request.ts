/** How one HubtelRequest becomes the axios request HttpTransport sends on every attempt. */
import type { AxiosRequestConfig } from 'axios';
import type { HubtelApi, HubtelCredentials } from '../options/hubtel-options.types.js';
import type { HubtelRequest } from './http-transport.js';

const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const keepAsIs = [(body: unknown) => body];
const TRANSITIONAL = Object.freeze({
  clarifyTimeoutError: true,
  silentJSONParsing: true,
  forcedJSONParsing: false,
});

/** The Authorization header of each API that has a key pair. */
export function basicAuthHeaders(
  credentials: Partial<Record<HubtelApi, HubtelCredentials | undefined>> | undefined,
): Partial<Record<HubtelApi, string>> {
  const headers: Partial<Record<HubtelApi, string>> = {};
  for (const [api, pair] of Object.entries(credentials ?? {}))
    if (pair)
      headers[api as HubtelApi] =
        `Basic ${Buffer.from(`${pair.clientId}:${pair.clientSecret}`).toString('base64')}`;
  return headers;
}

/** The axios request for `req` at `url`, sent as is on every attempt. */
export function axiosRequest(
  req: HubtelRequest,
  url: string,
  auth: string | undefined,
  timeoutMs: number,
  /** The body as JSON text. */
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
}

export function queryString(query: HubtelRequest['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined) params.append(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}
