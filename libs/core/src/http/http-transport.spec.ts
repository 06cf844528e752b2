import { jest } from '@jest/globals';
import { HttpService } from '@nestjs/axios';
import { Logger, type LoggerService } from '@nestjs/common';
import axios from 'axios';
import { FakeHttpServer, closedPort } from '../../../../test/support/fake-http-server.js';
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
} from '../errors/hubtel.errors.js';
import { HttpTransport, type HttpTransportConfig } from './http-transport.js';
import { parseRetryAfter } from './http-transport.responses.js';
import { createUndiciAxiosAdapter } from './undici-axios-adapter.js';

class CaptureLogger implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log(message: unknown) {
    this.lines.push({ level: 'log', message: String(message) });
  }
  error(message: unknown) {
    this.lines.push({ level: 'error', message: String(message) });
  }
  warn(message: unknown) {
    this.lines.push({ level: 'warn', message: String(message) });
  }
  debug(message: unknown) {
    this.lines.push({ level: 'debug', message: String(message) });
  }
  verbose(message: unknown) {
    this.lines.push({ level: 'verbose', message: String(message) });
  }
  text(): string {
    return this.lines.map((l) => l.message).join('\n');
  }
}

const SMS_PAIR = { clientId: 'sms-id', clientSecret: 'sms-SECRET-xyz' };
const PAY_PAIR = { clientId: 'pay-id', clientSecret: 'pay-SECRET-abc' };
// Long enough that a loaded machine still sends the request before the time-out (the fake server
// shares this process's event loop): the time-out specs count the requests the server received.
const TIMEOUT_MS = 400;
const basic = (p: { clientId: string; clientSecret: string }) =>
  `Basic ${Buffer.from(`${p.clientId}:${p.clientSecret}`).toString('base64')}`;

// Every behaviour holds on axios' own Node adapter and on the undici adapter the modules use.
describe.each([
  ['axios Node adapter', () => axios.create()],
  ['undici adapter', () => axios.create({ adapter: createUndiciAxiosAdapter() })],
])('HttpTransport (%s)', (_adapter, createAxios) => {
  let fake: FakeHttpServer;
  let sleeps: number[];
  let logger: CaptureLogger;
  const http = new HttpService(createAxios());

  function transport(
    overrides: Partial<HttpTransportConfig> = {},
    onSleep?: (ms: number) => Promise<void> | void,
  ) {
    return new HttpTransport(http, {
      baseUrls: { sms: fake.url, checkout: fake.url, status: fake.url, fulfillment: fake.url },
      credentials: { sms: SMS_PAIR, checkout: PAY_PAIR, status: PAY_PAIR },
      timeoutMs: 2_000,
      retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 },
      loggerContext: 'TransportSpec',
      hooks: {
        logger,
        random: () => 0.5,
        now: () => Date.parse('2026-01-01T00:00:00Z'),
        sleep: async (ms) => {
          sleeps.push(ms);
          await onSleep?.(ms);
        },
      },
      ...overrides,
    });
  }

  beforeEach(async () => {
    fake = await FakeHttpServer.start();
    sleeps = [];
    logger = new CaptureLogger();
  });
  afterEach(() => fake.close());

  it('sends JSON with the Basic auth pair of the API it calls and returns the parsed answer', async () => {
    fake.route('POST', '/v1/x', () => ({
      status: 201,
      body: { ok: true, id: 'a1' },
      headers: { 'X-Trace': 't1' },
    }));
    const res = await transport().request<{ ok: boolean; id: string }>({
      api: 'sms',
      method: 'POST',
      path: '/v1/x',
      body: { From: 'Shop', Recipients: ['233241234567'] },
      // Any spelling of Authorization is dropped: the configured pair is the only one ever sent.
      headers: { 'Cache-Control': 'no-cache', authorization: 'Basic forged', AUTHORIZATION: 'Basic forged2' },
      idempotent: false,
      operation: 'spec.send',
    });
    expect(res).toEqual({
      status: 201,
      data: { ok: true, id: 'a1' },
      headers: expect.objectContaining({ 'x-trace': 't1' }),
      attempts: 1,
    });
    const [req] = fake.requests;
    expect(req.headers.authorization).toBe(basic(SMS_PAIR));
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers['cache-control']).toBe('no-cache');
    expect(req.rawBody).toBe('{"From":"Shop","Recipients":["233241234567"]}');
  });

  it('uses the checkout pair for checkout/status, and no Authorization where none is configured', async () => {
    fake.route('*', /.*/, () => ({ status: 200, body: {} }));
    const t = transport();
    await t.request({
      api: 'status',
      method: 'GET',
      path: '/transactions/P1/status',
      query: { clientReference: 'r 1', skip: undefined },
      idempotent: true,
      operation: 'spec.status',
    });
    await t.request({
      api: 'fulfillment',
      method: 'POST',
      path: '/callback',
      body: {},
      headers: { Authorization: 'Basic forged' },
      idempotent: false,
      operation: 'spec.cb',
    });
    expect(fake.requests[0].headers.authorization).toBe(basic(PAY_PAIR));
    expect(fake.requests[0].url).toBe('/transactions/P1/status?clientReference=r+1');
    expect(fake.requests[1].headers.authorization).toBeUndefined();
  });

  it('returns undefined data for an empty 2xx body, and accepted non-2xx statuses as responses', async () => {
    fake.enqueue('GET', '/a', { status: 204 });
    fake.enqueue('GET', '/b', { status: 404, body: { message: 'not found' } });
    const t = transport();
    expect(
      (await t.request({ api: 'status', method: 'GET', path: '/a', idempotent: true, operation: 'a' })).data,
    ).toBeUndefined();
    const res = await t.request({
      api: 'status',
      method: 'GET',
      path: '/b',
      idempotent: true,
      operation: 'b',
      acceptStatus: [404],
    });
    expect(res.status).toBe(404);
    expect(res.data).toEqual({ message: 'not found' });
  });

  describe('retries that happen', () => {
    it('retries a connection refused before sending, even for a non-idempotent send', async () => {
      const port = await closedPort();
      const late = new FakeHttpServer();
      late.route('POST', '/send', () => ({ status: 200, body: { ok: 1 } }));
      try {
        // The platform comes up during the first backoff.
        const t = transport({ baseUrls: { sms: `http://127.0.0.1:${port}` } }, () => late.listen(port));
        const res = await t.request({
          api: 'sms',
          method: 'POST',
          path: '/send',
          body: {},
          idempotent: false,
          operation: 'spec.send',
        });
        expect(res.attempts).toBe(2);
        expect(late.requests).toHaveLength(1);
        expect(sleeps).toEqual([50]); // full jitter: 0.5 * min(1000, 100 * 2^0)
      } finally {
        await late.close();
      }
    });

    it('throws HubtelNetworkError when the connection is refused on every attempt', async () => {
      const port = await closedPort();
      const t = transport({ baseUrls: { sms: `http://127.0.0.1:${port}` } });
      const err = await t
        .request({
          api: 'sms',
          method: 'POST',
          path: '/send',
          body: {},
          idempotent: false,
          operation: 'spec.send',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelNetworkError);
      expect(err.code).toBe('HUBTEL_NETWORK_ERROR');
      expect(err.attempts).toBe(3);
      expect(err.message).toMatch(/ECONNREFUSED.*nothing was sent/);
      expect(sleeps).toEqual([50, 100]); // backoff doubles
    });

    it('retries 429 honouring Retry-After in seconds, and 503 honouring an HTTP date', async () => {
      fake.enqueue('POST', '/send', { status: 429, headers: { 'Retry-After': '1' } });
      fake.enqueue('POST', '/send', {
        status: 503,
        headers: { 'Retry-After': 'Thu, 01 Jan 2026 00:00:00 GMT' },
      });
      fake.route('POST', '/send', () => ({ status: 200, body: { ok: true } }));
      const res = await transport().request({
        api: 'sms',
        method: 'POST',
        path: '/send',
        body: { a: 1 },
        idempotent: false,
        operation: 'spec.send',
      });
      expect(res.attempts).toBe(3);
      expect(fake.requests).toHaveLength(3);
      expect(sleeps).toEqual([1000, 0]);
      expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(2);
    });

    it('gives up at once when Retry-After asks for more than maxDelayMs', async () => {
      fake.route('POST', '/send', () => ({
        status: 429,
        headers: { 'Retry-After': '60' },
        body: { message: 'slow down' },
      }));
      const err = await transport()
        .request({
          api: 'sms',
          method: 'POST',
          path: '/send',
          body: {},
          idempotent: false,
          operation: 'spec.send',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelRateLimitedError);
      expect(err.retryAfterMs).toBe(60_000);
      expect(err.httpStatus).toBe(429);
      expect(fake.requests).toHaveLength(1);
      expect(sleeps).toEqual([]);
    });

    it('throws HubtelRateLimitedError when 429 persists through every attempt', async () => {
      fake.route('POST', '/send', () => ({ status: 429, body: { message: 'Too many requests' } }));
      const err = await transport()
        .request({
          api: 'sms',
          method: 'POST',
          path: '/send',
          body: {},
          idempotent: false,
          operation: 'spec.send',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelRateLimitedError);
      expect(err.code).toBe('HUBTEL_RATE_LIMITED');
      expect(fake.requests).toHaveLength(3);
    });

    it.each([502, 504])('retries %i for an idempotent call', async (status) => {
      fake.enqueue('GET', '/status', { status });
      fake.route('GET', '/status', () => ({ status: 200, body: { s: 'Paid' } }));
      const res = await transport().request({
        api: 'status',
        method: 'GET',
        path: '/status',
        idempotent: true,
        operation: 'spec.status',
      });
      expect(res.data).toEqual({ s: 'Paid' });
      expect(fake.requests).toHaveLength(2);
    });

    it('retries a time-out for an idempotent call, then throws HubtelTimeoutError', async () => {
      fake.route('GET', '/status', () => ({ status: 200, body: {}, delayMs: 5_000 }));
      const err = await transport({ timeoutMs: TIMEOUT_MS })
        .request({
          api: 'status',
          method: 'GET',
          path: '/status',
          idempotent: true,
          operation: 'spec.status',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelTimeoutError);
      expect(err.code).toBe('HUBTEL_TIMEOUT');
      expect(err.message).toMatch(new RegExp(`timed out after ${TIMEOUT_MS} ms`));
      expect(fake.requests).toHaveLength(3);
    });

    it('succeeds when an idempotent call times out once and then answers', async () => {
      fake.enqueue('GET', '/status', { status: 200, body: {}, delayMs: 5_000 });
      fake.route('GET', '/status', () => ({ status: 200, body: { second: true } }));
      const res = await transport({ timeoutMs: TIMEOUT_MS }).request({
        api: 'status',
        method: 'GET',
        path: '/status',
        idempotent: true,
        operation: 'spec.status',
      });
      expect(res.data).toEqual({ second: true });
      expect(res.attempts).toBe(2);
    });
  });

  describe('retries that must not happen', () => {
    it.each([502, 504])(
      'a non-idempotent call answered %i fails with HubtelUnknownOutcomeError after one request',
      async (status) => {
        fake.route('POST', '/send', () => ({
          status,
          body: '<html>Bad gateway</html>',
          headers: { 'Content-Type': 'text/html' },
        }));
        const err = await transport()
          .request({
            api: 'sms',
            method: 'POST',
            path: '/send',
            body: {},
            idempotent: false,
            operation: 'sms.send',
          })
          .catch((e) => e);
        expect(err).toBeInstanceOf(HubtelUnknownOutcomeError);
        expect(err.code).toBe('HUBTEL_UNKNOWN_OUTCOME');
        expect(err.message).toMatch(/outcome is unknown/);
        expect(err.message).toMatch(/check its status before sending it again/);
        expect(err.httpStatus).toBe(status);
        expect(fake.requests).toHaveLength(1);
        expect(sleeps).toEqual([]);
      },
    );

    it('a non-idempotent call that times out is not retried', async () => {
      fake.route('POST', '/send', () => ({ status: 200, body: {}, delayMs: 5_000 }));
      const err = await transport({ timeoutMs: TIMEOUT_MS })
        .request({
          api: 'checkout',
          method: 'POST',
          path: '/send',
          body: {},
          idempotent: false,
          operation: 'checkout.initiate',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelUnknownOutcomeError);
      expect(err.message).toMatch(new RegExp(`timed out after ${TIMEOUT_MS} ms.*outcome is unknown`));
      expect(fake.requests).toHaveLength(1);
    });

    it('a non-idempotent call whose connection is cut after sending is not retried', async () => {
      fake.route('POST', '/send', () => ({ destroy: true }));
      const err = await transport()
        .request({
          api: 'sms',
          method: 'POST',
          path: '/send',
          body: {},
          idempotent: false,
          operation: 'sms.send',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelUnknownOutcomeError);
      expect(fake.requests).toHaveLength(1);
    });

    it('an idempotent call whose connection is cut is retried, then HubtelNetworkError', async () => {
      fake.route('GET', '/status', () => ({ destroy: true }));
      const err = await transport()
        .request({
          api: 'status',
          method: 'GET',
          path: '/status',
          idempotent: true,
          operation: 'spec.status',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelNetworkError);
      expect(fake.requests).toHaveLength(3);
    });

    it('a 500 is not retried, even when idempotent', async () => {
      fake.route('GET', '/status', () => ({ status: 500, body: { message: 'boom' } }));
      const err = await transport()
        .request({
          api: 'status',
          method: 'GET',
          path: '/status',
          idempotent: true,
          operation: 'spec.status',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelApiError);
      expect(err.httpStatus).toBe(500);
      expect(fake.requests).toHaveLength(1);
    });
  });

  describe('error mapping', () => {
    const call = (api: 'sms' | 'checkout' = 'sms') =>
      transport()
        .request({ api, method: 'POST', path: '/send', body: {}, idempotent: false, operation: `${api}.op` })
        .catch((e) => e);

    it('401 → HubtelAuthenticationError naming the API, without the credentials', async () => {
      fake.route('POST', '/send', () => ({ status: 401, body: { message: 'Unauthorized' } }));
      const err = await call();
      expect(err).toBeInstanceOf(HubtelAuthenticationError);
      expect(err).toBeInstanceOf(HubtelApiError);
      expect(err.code).toBe('HUBTEL_AUTHENTICATION_FAILED');
      expect(err.httpStatus).toBe(401);
      expect(err.message).toMatch(/sms API credentials/);
      const everything = `${err.message} ${JSON.stringify(err)} ${String(err.cause ?? '')}`;
      expect(everything).not.toContain(SMS_PAIR.clientSecret);
      expect(everything).not.toContain(basic(SMS_PAIR).slice(6));
    });

    it('402 → HubtelInsufficientCreditError; SMS 400 sub-code 12 too', async () => {
      fake.enqueue('POST', '/send', { status: 402, body: { message: 'Payment required' } });
      fake.enqueue('POST', '/send', { status: 400, body: { status: 12, message: 'Payment required' } });
      const a = await call();
      const b = await call();
      expect(a).toBeInstanceOf(HubtelInsufficientCreditError);
      expect(a.code).toBe('HUBTEL_INSUFFICIENT_CREDIT');
      expect(b).toBeInstanceOf(HubtelInsufficientCreditError);
      expect(b.responseCode).toBe('12');
    });

    it('403 as an HTML page → HubtelIpNotAllowedError mentioning the allow-list', async () => {
      fake.route('POST', '/send', () => ({
        status: 403,
        body: '<!DOCTYPE html><html><body>Forbidden</body></html>',
        headers: { 'Content-Type': 'text/html' },
      }));
      const err = await call('checkout');
      expect(err).toBeInstanceOf(HubtelIpNotAllowedError);
      expect(err.code).toBe('HUBTEL_IP_NOT_ALLOWED');
      expect(err.message).toMatch(/IP address is probably not on the platform's allow-list/);
      expect(err.body).toContain('<html>');
    });

    it('403 as JSON stays a plain HubtelApiError (SMS: recipient not opted in)', async () => {
      fake.route('POST', '/send', () => ({ status: 403, body: { message: 'Recipient has not opted in' } }));
      const err = await call();
      expect(err).toBeInstanceOf(HubtelApiError);
      expect(err).not.toBeInstanceOf(HubtelIpNotAllowedError);
      expect(err.code).toBe('HUBTEL_API_ERROR');
    });

    it('400 with an SMS sub-code → HubtelApiError with the code, its meaning and the body', async () => {
      fake.route('POST', '/send', () => ({
        status: 400,
        body: { status: 1, message: 'Invalid destination' },
      }));
      const err = await call();
      expect(err).toBeInstanceOf(HubtelApiError);
      expect(err.httpStatus).toBe(400);
      expect(err.responseCode).toBe('1');
      expect(err.message).toMatch(/code 1: invalid destination number/);
      expect(err.body).toEqual({ status: 1, message: 'Invalid destination' });
    });

    it('a checkout responseCode is explained from the platform codes (4101 wrong keys)', async () => {
      fake.route('POST', '/send', () => ({ status: 400, body: { responseCode: '4101', status: 'Failed' } }));
      const err = await call('checkout');
      expect(err.responseCode).toBe('4101');
      expect(err.message).toMatch(/wrong API keys/);
    });

    it('500 with a long text body → HubtelApiError with the body cut to about 2 KB', async () => {
      fake.route('POST', '/send', () => ({
        status: 500,
        body: 'x'.repeat(10_000),
        headers: { 'Content-Type': 'text/plain' },
      }));
      const err = await call();
      expect(err).toBeInstanceOf(HubtelApiError);
      expect(err.httpStatus).toBe(500);
      expect((err.body as string).length).toBeLessThanOrEqual(2_049);
    });

    it('a redirect is reported, not followed', async () => {
      fake.route('POST', '/send', () => ({
        status: 301,
        headers: { Location: 'https://elsewhere.example/send' },
      }));
      const err = await call();
      expect(err).toBeInstanceOf(HubtelApiError);
      expect(err.message).toMatch(/redirected to https:\/\/elsewhere.example\/send/);
      expect(fake.requests).toHaveLength(1);
    });

    it('a 2xx that is not JSON: unknown outcome for a send, API error for a read', async () => {
      fake.route('*', /.*/, () => ({ status: 200, body: 'OK!', headers: { 'Content-Type': 'text/plain' } }));
      expect(await call()).toBeInstanceOf(HubtelUnknownOutcomeError);
      const read = await transport()
        .request({ api: 'status', method: 'GET', path: '/s', idempotent: true, operation: 'r' })
        .catch((e) => e);
      expect(read).toBeInstanceOf(HubtelApiError);
    });

    it('every error is a HubtelError with toJSON that leaves the body out', async () => {
      fake.route('POST', '/send', () => ({ status: 500, body: { message: 'boom', To: '233241234567' } }));
      const err = await call();
      expect(err).toBeInstanceOf(HubtelError);
      expect(JSON.stringify(err)).not.toContain('233241234567');
    });
  });

  describe('logging', () => {
    it('logs requests at debug and retries at warn, with phone numbers masked and no credentials', async () => {
      fake.enqueue('POST', '/send', { status: 503, body: { message: 'busy for 233241234567' } });
      fake.route('POST', '/send', () => ({ status: 200, body: {} }));
      await transport().request({
        api: 'sms',
        method: 'POST',
        path: '/send',
        body: {
          From: 'Shop',
          To: '233241234567',
          Recipients: ['+233 20 765 4321'],
          clientSecret: SMS_PAIR.clientSecret,
        },
        idempotent: false,
        operation: 'sms.send',
      });
      const text = logger.text();
      expect(logger.lines.some((l) => l.level === 'debug' && l.message.includes('POST sms /send'))).toBe(
        true,
      );
      expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('retrying'))).toBe(true);
      expect(text).toContain('233******567');
      expect(text).not.toContain('233241234567');
      expect(text).not.toContain('765 4321');
      expect(text).not.toContain(SMS_PAIR.clientSecret);
      expect(text).not.toContain(basic(SMS_PAIR).slice(6));
      expect(text).not.toMatch(/authorization/i);
    });

    it("with Nest's Logger, builds the debug lines only when debug is on", async () => {
      const debug = jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
      fake.route('POST', '/send', () => ({ status: 200, body: {} }));
      const send = () =>
        transport({ hooks: { sleep: async () => undefined } }).request({
          api: 'sms',
          method: 'POST',
          path: '/send',
          body: { To: '233241234567' },
          idempotent: false,
          operation: 'sms.send',
        });
      try {
        Logger.overrideLogger(['error', 'warn']);
        await send();
        expect(debug).not.toHaveBeenCalled();
        Logger.overrideLogger(['debug', 'log']);
        await send();
        const lines = debug.mock.calls.map((call) => String(call[0]));
        expect(lines).toHaveLength(2);
        expect(lines[0]).toContain('233******567');
        expect(lines.join('\n')).not.toContain('233241234567');
      } finally {
        debug.mockRestore();
        Logger.overrideLogger(['verbose', 'debug', 'log', 'warn', 'error', 'fatal']);
      }
    });
  });

  it('refuses an API without a configured base URL', async () => {
    const t = transport({ baseUrls: { sms: fake.url } });
    await expect(
      t.request({ api: 'checkout', method: 'GET', path: '/x', idempotent: true, operation: 'x' }),
    ).rejects.toMatchObject({
      code: 'HUBTEL_CONFIG_INVALID',
    });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads seconds and HTTP dates, never negative, ignores junk', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:02 GMT', now)).toBe(2000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('HttpTransport on a test double of HttpService', () => {
  it('sends through `request` when the double has no axiosRef (a common Nest override)', async () => {
    const fake = await FakeHttpServer.start();
    try {
      fake.route('POST', '/v1/x', () => ({ status: 200, body: { ok: true } }));
      const real = new HttpService(axios.create({ adapter: createUndiciAxiosAdapter() }));
      const sent: unknown[] = [];
      const double = {
        request: (config: Parameters<HttpService['request']>[0]) => {
          sent.push(config.url);
          return real.request(config);
        },
      } as unknown as HttpService;
      const res = await new HttpTransport(double, {
        baseUrls: { sms: fake.url },
        credentials: { sms: SMS_PAIR },
        timeoutMs: 2_000,
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
        hooks: { logger: new CaptureLogger() },
      }).request<{ ok: boolean }>({
        api: 'sms',
        method: 'POST',
        path: '/v1/x',
        body: {},
        idempotent: false,
        operation: 'spec.double',
      });
      expect(res.data).toEqual({ ok: true });
      expect(sent).toEqual([`${fake.url}/v1/x`]);
      expect(fake.requests[0]?.headers.authorization).toBe(basic(SMS_PAIR));
    } finally {
      await fake.close();
    }
  });
});
