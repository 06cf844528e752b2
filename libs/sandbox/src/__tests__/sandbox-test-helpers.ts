import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basicAuthHeader } from '../sandbox-http.js';
import type { HubtelSandbox } from '../hubtel-sandbox.js';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  text: string;
  body: unknown;
  at: number;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Decide the answer per request (default 200 {ok: true}). */
  respond: (
    req: ReceivedRequest,
  ) =>
    | { status: number; body?: unknown; delayMs?: number }
    | Promise<{ status: number; body?: unknown; delayMs?: number }>;
  /** Resolves when `n` requests arrived. */
  waitForCount(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A tiny merchant / service-app stand-in that records what the sandbox sends it. */
export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: (() => void)[] = [];
  const receiver: Receiver = {
    url: '',
    requests,
    respond: () => ({ status: 200, body: { ok: true } }),
    waitForCount(n, timeoutMs = 10_000) {
      if (requests.length >= n) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${requests.length}/${n} requests`)),
          timeoutMs,
        );
        const check = () => {
          if (requests.length >= n) {
            clearTimeout(timer);
            resolve(requests);
          } else waiters.push(check);
        };
        waiters.push(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* keep text */
      }
      const entry: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        text,
        body,
        at: Date.now(),
      };
      requests.push(entry);
      for (const w of waiters.splice(0)) w();
      const answer = await receiver.respond(entry);
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      const payload = answer.body === undefined ? '' : JSON.stringify(answer.body);
      res.writeHead(answer.status, { 'Content-Type': 'application/json' });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
  if (body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
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
