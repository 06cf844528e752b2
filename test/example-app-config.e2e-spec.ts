/**
 * The example app's configuration and its own endpoints:
 *   - the environment decides sandbox or real platform, and says what is missing;
 *   - with HUBTEL_* credentials and URLs it runs against "the platform" those variables name
 *     (here a HubtelSandbox with other credentials, reached only through the variables), starts
 *     no sandbox of its own, and nothing else changes: same purchase, receipt and service flow;
 *   - bad input to its own endpoints is answered 4xx with a clear body, never 500.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { HubtelConfigError } from 'nestjs-hubtel';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { exampleConfigFromEnv } from '../src/app.config.js';
import { startExampleApp, type ExampleApp } from '../src/bootstrap.js';
import {
  FAST_OVERRIDES,
  placeOrder,
  pressPayPageButton,
  startExampleInProcess,
  waitForOrder,
  type InProcessExample,
} from './support/example-app.harness.js';

const REAL_ENV = {
  HUBTEL_CLIENT_ID: 'live-api-id',
  HUBTEL_CLIENT_SECRET: 'live-api-secret-value',
  HUBTEL_SMS_CLIENT_ID: 'live-sms-id',
  HUBTEL_SMS_CLIENT_SECRET: 'live-sms-secret-value',
  HUBTEL_SMS_SENDER_ID: 'LiveShop',
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('exampleConfigFromEnv', () => {
  it('with nothing set: the embedded sandbox, 127.0.0.1:3000', () => {
    expect(exampleConfigFromEnv({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      shopName: 'Adinkra Goods',
      ops: { port: 3001, host: '127.0.0.1' },
      orderLimits: {},
      platform: { kind: 'sandbox', port: 0, host: '127.0.0.1' },
    });
    // Operations next to the shop's port, or a free one with a free shop port; limits from the env.
    expect(
      exampleConfigFromEnv({ PORT: '0', ORDERS_PER_CLIENT_PER_MINUTE: '3', ORDERS_PER_MINUTE: '50' }),
    ).toMatchObject({ ops: { port: 0 }, orderLimits: { perClientPerMinute: 3, perMinute: 50 } });
    expect(exampleConfigFromEnv({ OPS_PORT: '9464', OPS_HOST: '10.0.0.5' })).toMatchObject({
      ops: { port: 9464, host: '10.0.0.5' },
    });
    expect(() => exampleConfigFromEnv({ ORDERS_PER_MINUTE: '0' })).toThrow('ORDERS_PER_MINUTE');
    expect(() => exampleConfigFromEnv({ OPS_PORT: 'x' })).toThrow('OPS_PORT');
    expect(
      exampleConfigFromEnv({
        PORT: '0',
        HOST: '0.0.0.0',
        SANDBOX_PORT: '4010',
        PUBLIC_URL: 'https://shop.example.com/',
      }),
    ).toMatchObject({
      port: 0,
      host: '0.0.0.0',
      publicUrl: 'https://shop.example.com',
      platform: { kind: 'sandbox', port: 4010 },
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ SANDBOX_PORT: '-1' }, 'SANDBOX_PORT'],
    [{ PUBLIC_URL: 'ftp://shop.example.com' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
  ])('refuses %j naming %s', (env, name) => {
    const error = (() => {
      try {
        exampleConfigFromEnv(env);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as Error).message).toContain(name);
  });

  it('one platform credential switches to the real platform, which then needs the rest (named, values not echoed)', () => {
    let error: unknown;
    try {
      exampleConfigFromEnv({
        HUBTEL_CLIENT_ID: 'live-api-id',
        HUBTEL_CLIENT_SECRET: 'live-api-secret-value',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HubtelConfigError);
    const message = (error as Error).message;
    for (const name of [
      'HUBTEL_SMS_CLIENT_ID',
      'HUBTEL_SMS_CLIENT_SECRET',
      'HUBTEL_SMS_SENDER_ID',
      'PUBLIC_URL',
    ])
      expect(message).toContain(name);
    expect(message).not.toContain('live-api-secret-value');
    expect(exampleConfigFromEnv({ ...REAL_ENV, PUBLIC_URL: 'https://shop.example.com' }).platform.kind).toBe(
      'hubtel',
    );
  });
});

describe('a port already in use (another copy of the app, its OPS_PORT = PORT + 1 by default)', () => {
  it('names the variable to set and the process that holds the port, in terms of the environment', async () => {
    // Another process holds the port, as the neighbouring replica's /health and /metrics would.
    const holder = spawn(process.execPath, [
      '-e',
      "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => console.log(s.address().port))",
    ]);
    try {
      const port = await new Promise<number>((resolve, reject) => {
        holder.stdout.once('data', (c: Buffer) => resolve(Number(c.toString().trim())));
        holder.once('exit', reject);
      });
      for (const [variable, env] of [
        ['PORT', { PORT: String(port), OPS_PORT: '0' }],
        ['OPS_PORT', { PORT: '0', OPS_PORT: String(port) }],
      ] as const) {
        const error = await startExampleApp(exampleConfigFromEnv(env), { logger: false }).then(
          (app) => app.close().then(() => undefined),
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(HubtelConfigError);
        const message = (error as Error).message;
        expect(message).toMatch(
          new RegExp(`^Invalid environment variable ${variable}: ${port} is already in use`),
        );
        expect(message).not.toContain('nestjs-hubtel option');
        if (process.platform === 'linux') expect(message).toContain(`(by process ${holder.pid} (`);
        expect(message).toContain(`set ${variable} to another port`);
        expect(message).toContain('OPS_PORT');
      }
    } finally {
      holder.kill();
    }
  }, 60_000);
});

describe('real-platform mode: the same app configured only through HUBTEL_* variables', () => {
  let platform: HubtelSandbox;
  let example: ExampleApp;
  let shop: string;

  beforeAll(async () => {
    // Stands in for Hubtel, with credentials and a POS Sales ID the sandbox defaults do not have.
    platform = await HubtelSandbox.start({
      credentials: {
        sms: { clientId: REAL_ENV.HUBTEL_SMS_CLIENT_ID, clientSecret: REAL_ENV.HUBTEL_SMS_CLIENT_SECRET },
        api: { clientId: REAL_ENV.HUBTEL_CLIENT_ID, clientSecret: REAL_ENV.HUBTEL_CLIENT_SECRET },
      },
      posSalesId: '11684',
    });
    const port = await freePort();
    const config = exampleConfigFromEnv({
      ...REAL_ENV,
      PORT: String(port),
      OPS_PORT: '0', // PORT + 1 may be another process's
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      HUBTEL_SMS_URL: platform.url,
      HUBTEL_CHECKOUT_URL: platform.url,
      HUBTEL_STATUS_URL: platform.url,
      HUBTEL_CALLBACK_URL: platform.url,
      HUBTEL_POS_SALES_ID: '11684',
      HUBTEL_MERCHANT_ACCOUNT_NUMBER: '11684',
      HUBTEL_RETRY_BASE_DELAY_MS: '5',
    });
    expect(config.platform.kind).toBe('hubtel');
    example = await startExampleApp(
      { ...config, overrides: { serviceApp: FAST_OVERRIDES.serviceApp } },
      { logger: false },
    );
    shop = example.url;
  });

  afterAll(async () => {
    await example?.close();
    await platform?.stop();
  });

  it('starts no sandbox of its own and offers no simulator', async () => {
    expect(example.mode).toBe('hubtel');
    expect(example.sandbox).toBeUndefined();
    expect(example.addresses.sandbox).toBeUndefined();
    expect(() => example.app.get(HubtelSandbox)).toThrow();
    expect((await fetch(`${shop}/simulator`)).status).toBe(404);
    const page = await (await fetch(shop)).text();
    expect(page).not.toContain('no real money moves');
  });

  it('sells through the platform the variables name: invoice, payment page, verified callback, SMS receipt', async () => {
    const { orderId, checkoutUrl } = await placeOrder(shop, { product: 'adinkra-tote', phone: '0277000111' });
    expect(checkoutUrl.startsWith(`${platform.url}/pay/`)).toBe(true);
    const invoice = platform.invoice(orderId)!;
    expect(invoice).toMatchObject({
      totalAmount: 60,
      merchantAccountNumber: '11684',
      callbackUrl: `${shop}/hubtel/checkout/callback`,
      returnUrl: `${shop}/orders/${orderId}`,
      cancellationUrl: `${shop}/orders/${orderId}/cancelled`,
      payeeMobileNumber: '233277000111',
    });
    expect(await pressPayPageButton(checkoutUrl, 'pay-momo')).toBe(`${shop}/orders/${orderId}`);
    const order = await waitForOrder(
      shop,
      orderId,
      (o) => o.status === 'paid' && o.receipt.status === 'sent',
    );
    expect(order.payment?.confirmedByStatusCheck).toBe(true);
    const [receipt] = platform.messagesTo('233277000111');
    expect(receipt).toMatchObject({ from: 'LiveShop' });
    expect(receipt!.content).toContain(orderId);
  });

  it('serves the programmable service; its fulfillment callback goes to HUBTEL_CALLBACK_URL', async () => {
    const session = platform.serviceApp(shop, { mobile: '233277000111' });
    await session.start();
    await session.reply('0277000111');
    await session.choose('DATA_1GB');
    await session.pay();
    expect(await session.waitForCallback()).toMatchObject({ serviceStatus: 'success', matched: true });
  });
});

describe("sandbox mode in process: where to go, and bad input to the app's own endpoints (4xx with a clear body, never 500)", () => {
  let shop: InProcessExample;

  beforeAll(async () => {
    shop = await startExampleInProcess();
  });

  afterAll(async () => {
    await shop?.close();
  });

  const postJson = (body: string, type = 'application/json') =>
    fetch(`${shop.url}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': type },
      body,
      redirect: 'manual',
    });

  it.each([
    ['an empty object', '{}', ['product', 'phone']],
    ['an unknown product', '{"product":"gold-bar","phone":"0241234567"}', ['product']],
    ['a product that is not a string', '{"product":["kente-mug"],"phone":"0241234567"}', ['product']],
    ['a phone that is not a number', '{"product":"kente-mug","phone":"call me"}', ['phone']],
    ['a phone that is an object', '{"product":"kente-mug","phone":{"$gt":""}}', ['phone']],
    ['a national number without its 0', '{"product":"kente-mug","phone":"241234567"}', ['phone']],
    [
      'a name with characters the processor refuses',
      '{"product":"kente-mug","phone":"0241234567","name":"A & B"}',
      ['name'],
    ],
    [
      'a name that is too long',
      `{"product":"kente-mug","phone":"0241234567","name":"${'a'.repeat(61)}"}`,
      ['name'],
    ],
    ['an array', '[{"product":"kente-mug","phone":"0241234567"}]', ['(body)']],
  ])('POST /orders with %s: 400 naming the fields', async (_name, body, fields) => {
    const res = await postJson(body);
    expect(res.status).toBe(400);
    const json = (await res.json()) as {
      statusCode: number;
      code: string;
      message: string;
      issues: Array<{ field: string }>;
    };
    expect(json).toMatchObject({ statusCode: 400, code: 'INVALID_ORDER' });
    expect(json.issues.map((i) => i.field).sort()).toEqual([...fields].sort());
    expect(shop.sandbox.invoices()).toEqual([]);
  });

  it('POST /orders with malformed JSON, a huge body or text: 4xx', async () => {
    for (const [body, type] of [
      ['{"product":', 'application/json'],
      ['null', 'application/json'], // the JSON parser takes objects and arrays only
      [`{"product":"kente-mug","phone":"0241234567","name":"${'x'.repeat(300_000)}"}`, 'application/json'],
      ['product=kente-mug', 'text/plain'],
    ] as const) {
      const res = await postJson(body, type);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      await res.arrayBuffer();
    }
    expect(shop.sandbox.invoices()).toEqual([]);
  });

  it('a bad form shows the shop again with the error, what was typed kept and escaped', async () => {
    const res = await postJson(
      new URLSearchParams({ product: 'kente-mug', phone: '<script>alert(1)</script>' }).toString(),
      'application/x-www-form-urlencoded',
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toContain('data-testid="error"');
    expect(html).toContain('value="&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(html).not.toContain('<script>alert(1)</script>');
  });

  it('unknown or malformed order ids: 404, as a page or as JSON', async () => {
    for (const path of [
      '/orders/ord_000000000000000000000000',
      '/orders/..%2F..%2Fetc',
      '/orders/ord_000000000000000000000000/cancelled',
      '/orders/x/cancelled',
    ]) {
      const res = await fetch(`${shop.url}${path}`);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('Order not found');
    }
    const res = await fetch(`${shop.url}/api/orders/${'%00'.repeat(3)}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ statusCode: 404, code: 'ORDER_NOT_FOUND' });
  });

  it("the modules' routes in the app answer junk with 400", async () => {
    for (const path of ['/hubtel/checkout/callback', '/api/service-flow', '/api/fulfillment']) {
      const res = await fetch(`${shop.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"Data":[1,2]}',
      });
      expect(res.status).toBe(400);
      await res.arrayBuffer();
    }
  });

  it('a good JSON order: 201 with where to pay and where to follow the order', async () => {
    const res = await postJson('{"product":"kente-mug","phone":"+233 24 123 4567","name":"Kofi"}');
    expect(res.status).toBe(201);
    const body = (await res.json()) as { orderId: string; checkoutUrl: string; orderUrl: string };
    expect(body.orderUrl).toBe(`${shop.url}/orders/${body.orderId}`);
    expect(shop.sandbox.invoice(body.orderId)).toMatchObject({
      totalAmount: 25,
      payeeName: 'Kofi',
      payeeMobileNumber: '233241234567',
    });
  });

  it("lists the shop, the simulator, the app's platform-facing URLs and the sandbox's dashboard", async () => {
    const { example, sandbox, url } = shop;
    expect(example.mode).toBe('sandbox');
    expect(example.addresses).toEqual({
      shop: `${url}/`,
      simulator: `${url}/simulator`,
      serviceFlow: `${url}/api/service-flow`,
      fulfillment: `${url}/api/fulfillment`,
      checkoutCallback: `${url}/hubtel/checkout/callback`,
      sandbox: sandbox.url,
      sandboxDashboard: sandbox.dashboardUrl,
    });
    for (const page of [example.addresses.shop, example.addresses.simulator!, sandbox.url]) {
      const res = await fetch(page);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      await res.arrayBuffer();
    }
  });
});
