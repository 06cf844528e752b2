import { randomInt, randomUUID } from 'node:crypto';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { SandboxReply } from './sandbox.route-types.js';
import type { SandboxCredentialPair } from './sandbox.option-types.js';

/** 32 lower-case hex characters, the form of the platform's checkout and invoice ids. */
export function hexId(): string {
  return randomUUID().replaceAll('-', '');
}

/** A 10-digit network transaction id. */
export function networkTransactionId(): string {
  return String(randomInt(1_000_000_000, 9_999_999_999));
}

export function isoNow(now = Date.now()): string {
  return new Date(now).toISOString();
}

/** The platform writes SMS `updateTime` without fraction or zone (`2023-05-30T16:43:15`). */
export function platformTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

export function isHttpUrl(value: unknown): value is string {
  const protocol = typeof value === 'string' && value.trim() !== '' && URL.parse(value)?.protocol;
  return protocol === 'http:' || protocol === 'https:';
}

export function round2(value: number): number {
  return Math.round((value + Number.EPSILON) * 100) / 100;
}

/** The platform's lenient reading of a recipient (`+233…`, `0241234567`), as digits only. */
export function platformMsisdn(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^\+?(\d{9,15})$/.exec(value.replace(/[\s-]/g, ''));
  if (!m) return undefined;
  const digits = m[1]!;
  if (/^0\d{9}$/.test(digits)) return `233${digits.slice(1)}`;
  if (digits.startsWith('0')) return undefined;
  return digits;
}

/** Ghana's mobile-money networks, MTN first, with the number prefixes of each. */
export const MOBILE_MONEY_CHANNELS = Object.freeze([
  { networkId: '62001', channel: 'mtn-gh', label: 'MTN Mobile Money', prefixes: '24 25 53 54 55 59' },
  { networkId: '62002', channel: 'vodafone-gh', label: 'Telecel Cash', prefixes: '20 50' },
  { networkId: '62003', channel: 'tigo-gh', label: 'AirtelTigo Money', prefixes: '26 27 56 57' },
]);

/** Network of a Ghanaian MSISDN by prefix (MTN when unknown, as most traffic is). */
export function ghanaNetwork(msisdn: string): (typeof MOBILE_MONEY_CHANNELS)[number] {
  const prefix = msisdn.startsWith('233') ? msisdn.slice(3, 5) : '';
  return (
    MOBILE_MONEY_CHANNELS.find((n) => n.prefixes.split(' ').includes(prefix)) ?? MOBILE_MONEY_CHANNELS[0]!
  );
}

const OUTCOME_WORDING = {
  paid: 'has been approved and processed successfully.',
  failed: 'failed: the customer did not approve it or entered a wrong PIN.',
  refused: 'failed: the description contains characters the processor refuses (& * ! % @).',
};

/** The platform's `Description` of a payment's outcome on a mobile-money channel (`mtn-gh`, ...). */
export function paymentDescription(channel: string, outcome: keyof typeof OUTCOME_WORDING): string {
  const label = MOBILE_MONEY_CHANNELS.find((c) => c.channel === channel)?.label ?? 'mobile money';
  return `The ${label} payment ${OUTCOME_WORDING[outcome]}`;
}

export function parseBasicAuth(header: string | undefined): SandboxCredentialPair | undefined {
  if (!header) return undefined;
  const m = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
}

export function basicAuthHeader(pair: SandboxCredentialPair): string {
  return `Basic ${Buffer.from(`${pair.clientId}:${pair.clientSecret}`, 'utf8').toString('base64')}`;
}

export function writeReply(res: ServerResponse, reply: SandboxReply): void {
  if (res.headersSent || res.destroyed) return;
  const [payload, type] =
    reply.json !== undefined
      ? [JSON.stringify(reply.json), 'application/json']
      : reply.html !== undefined
        ? [reply.html, 'text/html']
        : [reply.text, 'text/plain'];
  const headers: Record<string, string | number> = { ...reply.headers };
  if (payload !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
    headers['Content-Type'] = `${type}; charset=utf-8`;
  headers['Content-Length'] = payload === undefined ? 0 : Buffer.byteLength(payload);
  res.writeHead(reply.status, headers);
  res.end(payload);
}

/** A page of the sandbox's own: never cached nor sniffed, no referrer, no scripts unless `csp` allows them. */
export function htmlReply(
  html: string,
  status = 200,
  csp = "default-src 'none'; style-src 'unsafe-inline'",
): SandboxReply {
  const headers = { 'Cache-Control': 'no-store', 'Content-Security-Policy': csp };
  return {
    status,
    html,
    headers: { ...headers, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' },
  };
}

export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

export interface OutboundResult {
  statusCode: number;
  /** Answer headers, names lower-cased. */
  headers: Record<string, string>;
  body: string;
  durationMs: number;
}

export class OutboundError extends Error {
  constructor(
    message: string,
    readonly durationMs: number,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

/**
 * One request and its whole answer (or its first `keepBytes`), on its own connection: duplicated
 * callbacks really arrive concurrently, and no pooled socket outlives the call to keep a test
 * process alive. The sandbox's callbacks and the testing kit's sends both go through it.
 */
export async function requestOnce(
  method: string,
  url: string,
  body: string | Buffer,
  options: { headers?: OutgoingHttpHeaders; timeoutMs: number; signal?: AbortSignal; keepBytes?: number },
): Promise<OutboundResult> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  if (!isHttpUrl(url)) throw new OutboundError(`Not an http(s) URL: ${url}`, 0, false);
  const target = new URL(url);
  const sent = { ...options.headers } as Record<string, string>;
  // Credentials written in the URL go as Basic auth, as node:http sends them (origin drops them).
  if ((target.username || target.password) && !Object.keys(sent).some((k) => /^authorization$/i.test(k))) {
    const user = `${decodeLoosely(target.username)}:${decodeLoosely(target.password)}`;
    sent.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
  }
  // Loaded on first use: the bins parse their arguments with #light/sandbox before any package loads.
  const { Client } = await import('undici');
  const client = new Client(target.origin);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void client.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  try {
    const res = await client.request({
      method,
      path: `${target.pathname}${target.search}`,
      headers: sent, // Content-Length: undici's, from the body
      body,
      signal: options.signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (size < (options.keepBytes ?? Infinity)) chunks.push(chunk);
      size += chunk.length;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const text = Buffer.concat(chunks).toString('utf8');
    return { statusCode: res.statusCode, headers, body: text, durationMs: elapsed() };
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    const why = options.signal?.aborted
      ? 'the sandbox stopped before an answer came'
      : code
        ? `${code}: ${message}`
        : message;
    throw new OutboundError(why, elapsed(), timedOut);
  } finally {
    clearTimeout(timer);
    void client.destroy();
  }
}

/** decodeURIComponent, or the text as written when it holds a malformed escape. */
export function decodeLoosely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The text parsed as JSON, or the text itself when it is not JSON. */
export function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The host name of a `Host` header, lower-case, without port or IPv6 brackets. */
export function hostNameOf(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end < 0 ? value : value.slice(1, end);
  }
  const colon = value.lastIndexOf(':');
  return (colon < 0 ? value : value.slice(0, colon)).replace(/\.$/, '');
}

/**
 * Whether a request's `Host` names the sandbox (`allowed`, or loopback: `localhost`, `*.localhost`,
 * 127.0.0.0/8, `::1`, names that cannot point elsewhere): a DNS-rebinding page sends its own name
 * and is refused. No `Host` (HTTP/1.0, no browser) is let through.
 */
export function isAllowedHost(header: string | undefined, allowed: ReadonlySet<string>): boolean {
  const name = hostNameOf(header);
  if (name === undefined || allowed.has('*') || allowed.has(name)) return true;
  return /^(localhost|.*\.localhost|::1|127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.test(name);
}

/** Whether a `Content-Type` header is `application/json` (parameters such as charset allowed). */
export function isJsonContentType(header: string | undefined): boolean {
  return header?.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}
