import { STATUS_CODES } from 'node:http';
import { HttpModule } from '@nestjs/axios';
import type { DynamicModule } from '@nestjs/common';
import axios, {
  AxiosError,
  AxiosHeaders,
  CanceledError,
  type AxiosAdapter,
  type AxiosResponse,
  type InternalAxiosRequestConfig,
} from 'axios';
import { EnvHttpProxyAgent, getGlobalDispatcher, request, type Dispatcher } from 'undici';

const ABSOLUTE_URL = /^[a-z][a-z\d+\-.]*:\/\//i;
const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

let envProxyAgent: Dispatcher | undefined;

/** Read at the first request, not at import: configuration may set the variables later. */
function defaultDispatcher(): Dispatcher {
  if (PROXY_VARIABLES.some((name) => process.env[name])) {
    envProxyAgent ??= new EnvHttpProxyAgent();
    return envProxyAgent;
  }
  return getGlobalDispatcher();
}

/**
 * An axios adapter on `undici.request`: HttpService keeps what users expect of it, at about half the
 * CPU of axios' `node:http` adapter. Redirects are never followed; a `proxy` or agents are refused.
 * `dispatcher` defaults to an `EnvHttpProxyAgent` when HTTP(S)_PROXY is set, else undici's global one.
 */
export function createUndiciAxiosAdapter(dispatcher?: Dispatcher): AxiosAdapter {
  return function undiciAxiosAdapter(config) {
    return send(config, dispatcher ?? defaultDispatcher());
  };
}

async function send(config: InternalAxiosRequestConfig, dispatcher: Dispatcher): Promise<AxiosResponse> {
  if (config.proxy || config.httpAgent || config.httpsAgent)
    throw new AxiosError(
      'The undici adapter does not take axios `proxy`, `httpAgent` or `httpsAgent`; set HTTP(S)_PROXY or pass a dispatcher',
      AxiosError.ERR_NOT_SUPPORT,
      config,
    );
  const url = fullUrl(config);
  const method = (config.method ?? 'get').toUpperCase() as Dispatcher.HttpMethod;
  const headers = requestHeaders(config);
  const body = requestBody(config);

  if (config.signal?.aborted) throw new CanceledError(undefined, undefined, config);
  const controller = new AbortController();
  let reason: 'timeout' | 'cancel' | undefined;
  const abort = (why: 'timeout' | 'cancel') => {
    reason ??= why;
    controller.abort();
  };
  const timeoutMs = config.timeout ?? 0;
  const timer = timeoutMs > 0 ? setTimeout(abort, timeoutMs, 'timeout') : undefined;
  const cancel = () => abort('cancel');
  const signal = config.signal as AbortSignal | undefined;
  signal?.addEventListener?.('abort', cancel);
  config.cancelToken?.subscribe?.(cancel);
  const cleanUp = () => {
    if (timer) clearTimeout(timer);
    signal?.removeEventListener?.('abort', cancel);
    config.cancelToken?.unsubscribe?.(cancel);
  };

  let streamed = false;
  try {
    const res = await request(url, { method, headers, body, signal: controller.signal, dispatcher });
    const response: AxiosResponse = {
      data: undefined,
      status: res.statusCode,
      statusText: STATUS_CODES[res.statusCode] ?? '',
      headers: new AxiosHeaders(res.headers as Record<string, string | string[]>),
      config,
      request: { method, url },
    };
    if (config.responseType === 'stream') {
      // The caller reads the stream: the time-out covered the wait for the answer's head only.
      streamed = true;
      cleanUp();
      response.data = res.body;
    } else {
      const raw = await readBody(res, config);
      response.data =
        config.responseType === 'arraybuffer'
          ? raw
          : raw.toString((config.responseEncoding as BufferEncoding | undefined) ?? 'utf8');
    }
    const validate = config.validateStatus;
    if (!validate || validate(response.status)) return response;
    throw new AxiosError(
      `Request failed with status code ${response.status}`,
      response.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST,
      config,
      response.request,
      response,
    );
  } catch (error) {
    if (error instanceof AxiosError) throw error;
    if (reason === 'timeout')
      throw new AxiosError(
        config.timeoutErrorMessage ?? `timeout of ${timeoutMs}ms exceeded`,
        config.transitional?.clarifyTimeoutError ? AxiosError.ETIMEDOUT : AxiosError.ECONNABORTED,
        config,
        { method, url },
      );
    if (reason === 'cancel') throw new CanceledError(undefined, undefined, config);
    const err = error as Error & { code?: string };
    throw AxiosError.from(err, err.code, config, { method, url });
  } finally {
    if (!streamed) cleanUp();
  }
}

function fullUrl(config: InternalAxiosRequestConfig): string {
  // axios' own URL building (baseURL, params, paramsSerializer), only when it has work to do.
  if (config.params || config.paramsSerializer) return axios.getUri(config);
  const url = config.url ?? '';
  if (!config.baseURL || ABSOLUTE_URL.test(url)) return url;
  return url ? `${config.baseURL.replace(/\/+$/, '')}/${url.replace(/^\/+/, '')}` : config.baseURL;
}

function requestHeaders(config: InternalAxiosRequestConfig): Record<string, string> {
  // Unset (null or false) headers left out, several values joined: axios' own rendering.
  const out = AxiosHeaders.from(config.headers).toJSON(true) as Record<string, string>;
  // As axios' Node adapter does: some gateways refuse requests without one.
  if (!config.headers.has('User-Agent')) out['User-Agent'] = `axios/${axios.VERSION}`;
  if (config.auth) {
    const pair = `${config.auth.username ?? ''}:${config.auth.password ?? ''}`;
    out.Authorization = `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
  }
  return out;
}

type Body = Dispatcher.DispatchOptions['body'];

function requestBody(config: InternalAxiosRequestConfig): Body {
  const data: unknown = config.data;
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string' || Buffer.isBuffer(data) || data instanceof Uint8Array) return data;
  throw new AxiosError(
    `The undici adapter cannot send a request body of type ${Object.prototype.toString.call(data)}`,
    AxiosError.ERR_BAD_REQUEST,
    config,
  );
}

async function readBody(res: Dispatcher.ResponseData, config: InternalAxiosRequestConfig): Promise<Buffer> {
  const limit = config.maxContentLength ?? -1;
  const declared = Number(res.headers['content-length']);
  if (limit < 0 || (Number.isFinite(declared) && declared <= limit)) {
    // undici reads exactly the declared length, so no limit check per chunk is needed.
    return Buffer.from(await res.body.arrayBuffer());
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      res.body.destroy();
      throw new AxiosError(`maxContentLength size of ${limit} exceeded`, AxiosError.ERR_BAD_RESPONSE, config);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

/** The HttpModule every module of the suite imports: HttpService on the undici adapter. */
export function hubtelHttpModule(): DynamicModule {
  return HttpModule.register({ adapter: createUndiciAxiosAdapter() });
}
