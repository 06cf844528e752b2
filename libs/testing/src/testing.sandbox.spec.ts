import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Body, Controller, Headers, HttpCode, Module, Post, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { HubtelConfigError, HubtelNetworkError } from 'nestjs-hubtel';
import { CHECKOUT_OPTIONS_RECIPE, checkoutOptionsFromEnv } from '../../checkout/src/checkout.options.js';
import { SERVICE_APP_OPTIONS_RECIPE } from '../../service-app/src/service-app.options.js';
import { serviceAppOptionsFromEnv } from '../../service-app/src/service-app.options.js';
import { smsOptionsFromEnv } from '../../sms/src/sms.options.js';
import { SMS_OPTIONS_RECIPE } from '../../sms/src/sms.options.js';
import { createTestSandbox, type TestSandbox } from './testing.sandbox.js';
import {
  endpointUrl,
  sendCheckoutCallback,
  sendFulfillmentRequest,
  sendJson,
  sendServiceFlowRequest,
} from './testing.http.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function recordingServer(
  answer: (seen: Seen, res: http.ServerResponse) => void = (_s, res) =>
    res.writeHead(201, { 'Content-Type': 'application/json' }).end('{"ok":true}'),
) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(s);
      answer(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    seen,
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('TestSandbox', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
  });
  afterAll(() => sandbox.stop());
  afterEach(() => {
    sandbox.detach();
    sandbox.reset();
  });

  it('gives module options that the modules accept and that point at it', () => {
    const sms = SMS_OPTIONS_RECIPE.resolve(sandbox.smsOptions({ senderId: 'Shop' }));
    expect(sms.baseUrl).toBe(sandbox.url);
    expect(sms.credentials).toEqual({ clientId: 'sandbox-sms', clientSecret: 'sandbox-sms-secret' });
    const checkout = CHECKOUT_OPTIONS_RECIPE.resolve(sandbox.checkoutOptions());
    expect(checkout.baseUrls).toEqual({ checkout: sandbox.url, status: sandbox.url });
    expect(checkout.posSalesId).toBe(sandbox.posSalesId);
    expect(checkout.callbackUrl).toBe(`${sandbox.url}/_tunnel/hubtel/checkout/callback`);
    expect(checkout.returnUrl).toBe(`${sandbox.url}/_tunnel/return`);
    const direct = CHECKOUT_OPTIONS_RECIPE.resolve(
      sandbox.checkoutOptions({
        appUrl: 'http://127.0.0.1:3000/',
        posSalesId: undefined,
        baseUrls: { status: 'http://status.test' },
      }),
    );
    expect(direct.callbackUrl).toBe('http://127.0.0.1:3000/hubtel/checkout/callback');
    expect(direct.baseUrls).toEqual({ checkout: sandbox.url, status: 'http://status.test' });
    expect(direct.verification.confirmWithStatusCheck).toBe(false);
    expect(SERVICE_APP_OPTIONS_RECIPE.resolve(sandbox.serviceAppOptions()).callbackUrl).toBe(sandbox.url);
    // Its variables are what the modules' env helpers read.
    const env = sandbox.env();
    expect(checkoutOptionsFromEnv(env)).toMatchObject({
      clientId: 'sandbox-api',
      posSalesId: sandbox.posSalesId,
      baseUrls: { checkout: sandbox.url, status: sandbox.url },
    });
    expect(smsOptionsFromEnv(env)).toMatchObject({ clientId: 'sandbox-sms', baseUrl: sandbox.url });
    expect(serviceAppOptionsFromEnv(env)).toMatchObject({
      callbackUrl: sandbox.url,
      statusCheck: { clientId: 'sandbox-api', posSalesId: sandbox.posSalesId, url: sandbox.url },
    });
  });

  it('relays tunnel calls to the attached app unchanged, and answers with the app’s answer', async () => {
    const app = await recordingServer();
    try {
      sandbox.attach(app.url);
      expect(sandbox.attachedUrl).toBe(app.url);
      const res = await fetch(`${sandbox.tunnelUrl}/hubtel/checkout/callback/s3cret?x=1&y=%2F`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache', 'X-Extra': 'kept' },
        body: '{"a":1}',
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ ok: true });
      expect(app.seen).toHaveLength(1);
      expect(app.seen[0]).toMatchObject({
        method: 'POST',
        url: '/hubtel/checkout/callback/s3cret?x=1&y=%2F',
        body: '{"a":1}',
      });
      expect(app.seen[0]!.headers).toMatchObject({
        'content-type': 'application/json',
        'cache-control': 'no-cache',
        'x-extra': 'kept',
        'content-length': '7',
      });
      const get = await fetch(`${sandbox.tunnelUrl}`);
      expect(get.status).toBe(201);
      expect(app.seen[1]).toMatchObject({ method: 'GET', url: '/' });
    } finally {
      await app.close();
    }
  });

  it('relays a body sent after 100-continue (curl does so for large bodies)', async () => {
    const app = await recordingServer();
    try {
      sandbox.attach(app.url);
      const answered = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${sandbox.tunnelUrl}/big`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Expect: '100-continue' },
        });
        req.on('continue', () => req.end('{"a":1}'));
        req.on('response', (res) => res.resume().on('end', () => resolve(res.statusCode!)));
        req.on('error', reject);
      });
      expect(answered).toBe(201);
      expect(app.seen[0]).toMatchObject({ method: 'POST', url: '/big', body: '{"a":1}' });
      expect(app.seen[0]!.headers.expect).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('answers 502 with a machine-readable body when no app is attached or the app is down', async () => {
    const res = await fetch(`${sandbox.tunnelUrl}/x`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ error: 'HUBTEL_TUNNEL_NOT_ATTACHED' });
    const gone = await recordingServer();
    await gone.close();
    sandbox.attach(gone.url);
    const down = await fetch(`${sandbox.tunnelUrl}/x`, { method: 'POST', body: '{}' });
    expect(down.status).toBe(502);
    expect(await down.json()).toMatchObject({ error: 'HUBTEL_TUNNEL_UNREACHABLE' });
    expect(() => sandbox.attach('not a url')).toThrow(HubtelConfigError);
    expect(() => sandbox.attach({ getHttpServer: () => http.createServer() })).toThrow(/not listening/);
  });

  it('markPaid pays an invoice in its records without sending the callback', async () => {
    const app = await recordingServer();
    try {
      const init = await fetch(`${sandbox.url}/items/initiate`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Authorization: `Basic ${Buffer.from('sandbox-api:sandbox-api-secret').toString('base64')}`,
        },
        body: JSON.stringify({
          totalAmount: 9,
          description: 'x',
          callbackUrl: `${app.url}/cb`,
          returnUrl: `${app.url}/r`,
          cancellationUrl: `${app.url}/c`,
          clientReference: 'mark-1',
        }),
      });
      expect(init.status).toBe(200);
      const result = await sandbox.markPaid('mark-1');
      expect(result.invoice.state).toBe('paid');
      expect(result.deliveries.map((d) => d.state)).toEqual(['dropped']);
      expect(app.seen).toHaveLength(0);
    } finally {
      await app.close();
    }
  });
});

@Controller()
class EchoController {
  @Post(['hubtel/checkout/callback', 'api/fulfillment', 'api/service-flow', 'custom'])
  @HttpCode(200)
  echo(@Body() body: unknown, @Headers() headers: Record<string, string>) {
    return { body, cacheControl: headers['cache-control'] ?? null, accept: headers.accept ?? null };
  }
}
@Module({ controllers: [EchoController] })
class EchoModule {}

describe.each(['express', 'fastify'])('send helpers against a Nest app on %s', (adapter) => {
  let app: INestApplication;
  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [EchoModule] }).compile();
    app =
      adapter === 'fastify'
        ? moduleRef.createNestApplication(new FastifyAdapter())
        : moduleRef.createNestApplication();
  });
  afterEach(() => app.close());

  it('sends to an app that is only initialised (listening for the call, like supertest), concurrently', async () => {
    await app.init();
    const answers = await Promise.all([1, 2, 3].map((n) => sendCheckoutCallback(app, { n })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => (a.body as { body: { n: number } }).body.n)).toEqual([1, 2, 3]);
    expect((answers[0]!.body as { cacheControl: string }).cacheControl).toBe('no-cache');
    expect(answers[0]!.url).toMatch(/\/hubtel\/checkout\/callback$/);
    expect(app.getHttpServer().listening).toBe(false);
  });

  it('sends to a listening app, with each helper’s route and headers', async () => {
    await app.listen(0, '127.0.0.1');
    const f = await sendFulfillmentRequest(app, { OrderId: 'o' });
    expect(f.url).toMatch(/\/api\/fulfillment$/);
    const s = await sendServiceFlowRequest(app, { Type: 'initiation' });
    expect((s.body as { accept: string }).accept).toBe('application/json');
    const custom = await sendJson(await app.getUrl(), { x: 1 }, { path: '/custom' });
    expect(custom.status).toBe(200);
    const malformed = await sendCheckoutCallback(app, '{"broken":');
    expect(malformed.status).toBe(400);
  });
});

describe('endpointUrl and errors', () => {
  it('adds the path to an origin and keeps a URL that has one', () => {
    expect(endpointUrl('http://127.0.0.1:3000', '/hubtel/checkout/callback')).toBe(
      'http://127.0.0.1:3000/hubtel/checkout/callback',
    );
    expect(endpointUrl('http://127.0.0.1:3000/', 'x')).toBe('http://127.0.0.1:3000/x');
    expect(endpointUrl('http://127.0.0.1:3000/api/cb/secret', '/ignored')).toBe(
      'http://127.0.0.1:3000/api/cb/secret',
    );
    expect(() => endpointUrl('ftp://x', '/a')).toThrow(HubtelConfigError);
    expect(() => endpointUrl('nope', '/a')).toThrow(HubtelConfigError);
  });

  it('rejects with a HubtelNetworkError when nothing listens', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    await expect(sendCheckoutCallback(`http://127.0.0.1:${port}`, {})).rejects.toBeInstanceOf(
      HubtelNetworkError,
    );
    await expect(sendJson({} as never, {})).rejects.toBeInstanceOf(HubtelConfigError);
  });
});

describe('TestSandbox.forAccount: one account of a sandbox serving several', () => {
  let hubtel: TestSandbox;
  const callback = { clientId: 'north-cb', clientSecret: 'north-cb-secret' };

  beforeAll(async () => {
    hubtel = await createTestSandbox({
      accounts: [{ name: 'north', senderIds: ['NorthShop'], credentials: { callback } }],
    });
  });
  afterAll(() => hubtel.stop());

  it("gives that account's keys, POS Sales ID, sender and callback credentials, accepted by the modules' resolvers", () => {
    const north = hubtel.forAccount('north');
    const checkout = CHECKOUT_OPTIONS_RECIPE.resolve(north.checkoutOptions());
    expect(checkout.credentials).toMatchObject({
      clientId: 'sandbox-north-api',
      clientSecret: 'sandbox-north-api-secret',
    });
    expect(checkout.posSalesId).toBe('2000001');
    expect(north.smsOptions()).toMatchObject({ clientId: 'sandbox-north-sms', senderId: 'NorthShop' });
    expect(SMS_OPTIONS_RECIPE.resolve(north.smsOptions()).senderId).toBe('NorthShop');
    const service = north.serviceAppOptions();
    expect(service.callbackCredentials).toEqual(callback);
    expect(service.statusCheck).toMatchObject({ clientId: 'sandbox-north-api', posSalesId: '2000001' });
    expect(north.env()).toMatchObject({ HUBTEL_ACCOUNTS: 'north', HUBTEL_NORTH_POS_SALES_ID: '2000001' });
    // The default account's options are unchanged by the second account.
    expect(hubtel.checkoutOptions()).toMatchObject({ clientId: 'sandbox-api', posSalesId: '2000000' });
    expect(hubtel.forAccount('default').checkoutOptions()).toEqual(hubtel.checkoutOptions());
    expect(() => hubtel.forAccount('south')).toThrow(/no account "south"/);
  });

  it("drives and pays sessions of that account's service", () => {
    const session = hubtel.forAccount('north').markServicePaid('north-session', { amount: 3 });
    expect(session.account).toBe('north');
    expect(hubtel.sessions({ account: 'north' }).map((s) => s.sessionId)).toEqual(['north-session']);
    expect(hubtel.forAccount('north').serviceApp('http://127.0.0.1:9').record.account).toBe('north');
  });
});
