import {
  FakeHttpServer,
  type FakeReply,
  type RecordedRequest,
} from '../../../../test/support/fake-http-server.js';
import { basicAuthHeader } from '../sandbox.http.js';
import type { HubtelSandbox } from '../sandbox.server.js';

/** A merchant / service-app stand-in (the repository's FakeHttpServer) recording what the sandbox sends it. */
export interface Receiver {
  url: string;
  /** Every request received, oldest first (clear with `requests.length = 0`). */
  requests: RecordedRequest[];
  /** Decides the answer per request (default 200 {ok: true}). */
  respond: (req: RecordedRequest) => FakeReply | Promise<FakeReply>;
  /** Resolves when `n` requests arrived; rejects after `timeoutMs`. */
  waitForCount(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const server = await FakeHttpServer.start();
  const receiver: Receiver = {
    url: server.url,
    requests: server.requests,
    respond: () => ({ status: 200, body: { ok: true } }),
    async waitForCount(n, timeoutMs = 10_000) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`receiver got ${server.requests.length}/${n} requests`)),
          timeoutMs,
        );
      });
      try {
        await Promise.race([server.waitForRequests(n), timedOut]);
      } finally {
        clearTimeout(timer);
      }
      return server.requests;
    },
    close: () => server.close(),
  };
  server.route('*', /^/, (req) => receiver.respond(req));
  return receiver;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** fetch with the sandbox's credentials of one API (or none / wrong ones). */
export async function call(
  sandbox: HubtelSandbox,
  method: string,
  path: string,
  options: {
    body?: unknown;
    raw?: string;
    auth?: 'sms' | 'api' | 'none' | { clientId: string; clientSecret: string };
    headers?: Record<string, string>;
  } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const auth = options.auth ?? 'none';
  if (auth !== 'none')
    headers.Authorization = basicAuthHeader(typeof auth === 'string' ? sandbox.credentials[auth] : auth);
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  // A POST is JSON unless the test says otherwise (the admin API refuses any other POST).
  if (
    (body !== undefined || method === 'POST') &&
    !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')
  )
    headers['Content-Type'] = 'application/json';
  const res = await fetch(`${sandbox.url}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A valid checkout creation request (contract fields). */
export function checkoutRequest(
  receiver: { url: string },
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    totalAmount: 12.5,
    description: 'Two data bundles',
    callbackUrl: `${receiver.url}/hubtel/checkout/callback`,
    returnUrl: `${receiver.url}/shop/return`,
    cancellationUrl: `${receiver.url}/shop/cancelled`,
    clientReference: `ref-${Math.random().toString(36).slice(2, 12)}`,
    merchantAccountNumber: '2000000',
    ...overrides,
  };
}
