import { once } from 'node:events';
import type { OutgoingHttpHeaders, Server } from 'node:http';
import { HubtelConfigError, HubtelNetworkError, HubtelTimeoutError } from '#light/core';
import { jsonOrText, requestOnce, serverOrigin } from '#light/sandbox';
import { TESTING_DEFAULTS, TESTING_PATHS } from './testing.constants.js';

/** Where to send: an origin or endpoint URL, or a Nest app (one only initialised is listened on). */
export type HubtelTestTarget = string | URL | NestAppLike;

/** The part of `INestApplication` the helpers use (no import of @nestjs/common types needed). */
export interface NestAppLike {
  getHttpServer(): unknown;
}

export interface SendOptions {
  /** Path of the endpoint when the target is an app or an origin. Default: the module's route. */
  path?: string;
  /** Extra request headers (they win over the defaults). */
  headers?: Record<string, string>;
  /** Give up after this long (HubtelTimeoutError). Default 10 s. */
  timeoutMs?: number;
}

export interface SentResponse<T = unknown> {
  status: number;
  /** Response headers, names lower-cased. */
  headers: Record<string, string>;
  /** The body parsed as JSON when it is JSON, else the text. */
  body: T;
  text: string;
  url: string;
}

const JSON_ONLY = { 'Content-Type': 'application/json' };
const JSON_BOTH_WAYS = { ...JSON_ONLY, Accept: 'application/json' };

/** A sender as the platform sends: its default path and the contract's headers, either overridable. */
function platformSender(defaultPath: string, headers: Record<string, string>) {
  return <T = unknown>(target: HubtelTestTarget, body: unknown, options: SendOptions = {}) =>
    sendJson<T>(target, body, {
      ...options,
      path: options.path ?? defaultPath,
      headers: { ...headers, ...options.headers },
    });
}

/** POSTs a checkout callback the way the platform does (a string body is sent as it is). */
export const sendCheckoutCallback = platformSender(TESTING_PATHS.checkoutCallback, {
  ...JSON_ONLY,
  'Cache-Control': 'no-cache',
});
/** POSTs a fulfillment request the way the platform does. */
export const sendFulfillmentRequest = platformSender(TESTING_PATHS.fulfillment, JSON_ONLY);
/** POSTs one service-flow request the way the platform does. */
export const sendServiceFlowRequest = platformSender(TESTING_PATHS.serviceFlow, JSON_BOTH_WAYS);
/** POSTs a fulfillment callback to a platform receiver (the sandbox's `POST /callback`). */
export const sendFulfillmentCallback = platformSender(TESTING_PATHS.fulfillmentCallback, JSON_BOTH_WAYS);

/** POSTs JSON (or a string as it is) to a target and reads the whole answer. */
export async function sendJson<T = unknown>(
  target: HubtelTestTarget,
  body: unknown,
  options: SendOptions = {},
): Promise<SentResponse<T>> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  if (payload === undefined)
    throw new HubtelConfigError('body', 'cannot be sent as JSON (undefined or a function)');
  const headers = { 'Content-Type': 'application/json', ...options.headers };
  if (typeof target === 'string' || target instanceof URL)
    return post<T>(endpointUrl(target, options.path), payload, headers, options.timeoutMs);
  if (target && typeof (target as NestAppLike).getHttpServer === 'function') {
    await adapterReady(target as NestAppLike);
    return withListeningServer(serverOf(target), (origin) =>
      post<T>(endpointUrl(origin, options.path), payload, headers, options.timeoutMs),
    );
  }
  throw new HubtelConfigError('target', 'must be a URL or a Nest application');
}

/** The endpoint URL: a URL with a path as it is; an origin (path `/`) plus `path`. */
export function endpointUrl(target: string | URL, path?: string): string {
  let url: URL;
  try {
    url = new URL(String(target));
  } catch {
    throw new HubtelConfigError('target', `"${String(target).slice(0, 200)}" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new HubtelConfigError('target', `must be an http(s) URL, got ${url.protocol}`);
  if ((url.pathname === '/' || url.pathname === '') && path)
    return `${url.origin}${path.startsWith('/') ? '' : '/'}${path}${url.search}`;
  return url.href;
}

/** Fastify serves nothing until `ready()` ran, which init() alone does not run. */
async function adapterReady(app: NestAppLike): Promise<void> {
  const getAdapter = (app as { getHttpAdapter?: () => { getInstance?: () => unknown } }).getHttpAdapter;
  const instance = typeof getAdapter === 'function' ? getAdapter.call(app)?.getInstance?.() : undefined;
  const ready = (instance as { ready?: () => PromiseLike<unknown> } | undefined)?.ready;
  if (typeof ready === 'function' && typeof (instance as { server?: unknown }).server === 'object')
    await ready.call(instance);
}

function serverOf(app: NestAppLike): Server {
  const server = app.getHttpServer() as Server | undefined;
  if (!server || typeof server.listen !== 'function' || typeof server.address !== 'function')
    throw new HubtelConfigError(
      'target',
      'getHttpServer() did not return a Node HTTP server; call await app.init() first',
    );
  return server;
}

/** `http://host:port` of a listening server, reachable from this process. */
export function appOrigin(server: Server): string {
  const address = server.address();
  if (!address || typeof address === 'string')
    throw new HubtelConfigError('target', 'the app is not listening on a TCP port');
  // Any address (`::` too) is reached on 127.0.0.1: `::1` is missing where IPv6 is turned off.
  return serverOrigin(server, address.address === '::' ? '' : address.address);
}

// An app that is initialised but not listening is listened on an ephemeral port for the calls in
// flight (several concurrent sends share it), then closed again, as supertest does.
const temporary = new WeakMap<Server, { ready: Promise<string>; users: number }>();

async function withListeningServer<T>(server: Server, use: (origin: string) => Promise<T>): Promise<T> {
  if (server.listening && !temporary.has(server)) return use(appOrigin(server));
  let entry = temporary.get(server);
  if (!entry) {
    entry = {
      users: 0,
      ready: once(server.listen(0, '127.0.0.1'), 'listening').then(
        () => appOrigin(server),
        (err: Error) => {
          throw new HubtelConfigError('target', `could not listen on the app's server: ${err.message}`);
        },
      ),
    };
    temporary.set(server, entry);
  }
  entry.users++;
  try {
    return await use(await entry.ready);
  } finally {
    if (--entry.users === 0) {
      temporary.delete(server);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}

async function post<T>(
  url: string,
  payload: string,
  headers: Record<string, string>,
  timeoutMs: number = TESTING_DEFAULTS.requestTimeoutMs,
): Promise<SentResponse<T>> {
  const answer = await request('POST', url, payload, headers, timeoutMs);
  const json = answer.text !== '' && /\bjson\b/i.test(answer.headers['content-type'] ?? '');
  return { ...answer, body: (json ? jsonOrText(answer.text) : answer.text) as T, url };
}

/** One request on its own connection (the sandbox's client), its failures as Hubtel errors. */
export async function request(
  method: string,
  url: string,
  body: string | Buffer,
  headers: OutgoingHttpHeaders,
  timeoutMs: number,
): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  try {
    const answer = await requestOnce(method, url, body, { headers, timeoutMs });
    return { status: answer.statusCode, headers: answer.headers, text: answer.body };
  } catch (err) {
    const why = `${method} ${url}: ${(err as Error).message}`;
    throw (err as { timedOut?: boolean }).timedOut
      ? new HubtelTimeoutError(why, { cause: err })
      : new HubtelNetworkError(why, { cause: err });
  }
}
