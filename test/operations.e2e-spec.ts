/**
 * Health and metrics (issue 13), over real HTTP:
 *   - the example app (src/) after a paid checkout through the sandbox: GET /metrics shows the
 *     callback received and accepted, the handlers run, the platform calls by API; a malformed
 *     callback moves `callbacks_rejected_total{reason}`; GET /health is up with the memory store;
 *   - the example app on a real Redis (REDIS_URL): /health up with the Redis store and the BullMQ
 *     runner, 503 once the Redis server is gone, and 503 once it is back empty until the loss of
 *     its data is acknowledged;
 *   - a Nest app on each adapter (Express, Fastify) with CheckoutModule and the same /health and
 *     /metrics: the answers' status and content type, the counters of a checkout paid there.
 */
import { RedisStore } from 'nestjs-hubtel/redis';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { OperationsModule } from '../src/ops/operations.module.js';
import {
  ADAPTERS,
  callbackBody,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';
import {
  eventually,
  placeOrder,
  pressPayPageButton,
  startExampleInProcess,
  waitForOrder,
  type InProcessExample,
} from './support/example-app.harness.js';
import { RedisServer, redisBinary } from './support/redis-server.js';

/** One scrape of /metrics: the sum of a metric's samples whose labels include `labels`. */
class Scrape {
  constructor(readonly text: string) {}

  value(name: string, labels: Record<string, string> = {}): number {
    let sum = 0;
    for (const line of this.text.split('\n')) {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match || match[1] !== name) continue;
      const present = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
      );
      if (Object.entries(labels).every(([key, value]) => present[key] === value)) sum += Number(match[3]);
    }
    return sum;
  }
}

async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Scrape(await res.text());
}

async function health(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/health`);
  return { status: res.status, body: await res.json() };
}

async function postCallback(url: string, body: unknown): Promise<number> {
  const res = await fetch(`${url}/hubtel/checkout/callback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('the example app: GET /metrics and GET /health', () => {
  let shop: InProcessExample;

  beforeAll(async () => {
    shop = await startExampleInProcess();
  });
  afterAll(() => shop?.close());

  it('counts a paid checkout: the callback received and accepted, the handlers run, the platform calls by API', async () => {
    const before = await scrape(shop.example.opsUrl);
    const { orderId, checkoutUrl } = await placeOrder(shop.url, {
      product: 'kente-mug',
      phone: '0241234567',
    });
    await pressPayPageButton(checkoutUrl, 'pay-momo');
    await waitForOrder(shop.url, orderId, (order) => order.status === 'paid' && order.settled);
    // The receipt SMS goes out from the paid handler: wait until it is counted.
    const after = await eventually(async () => {
      const now = await scrape(shop.example.opsUrl);
      return now.value('hubtel_sms_recipients_total', { outcome: 'sent' }) >
        before.value('hubtel_sms_recipients_total', { outcome: 'sent' })
        ? now
        : undefined;
    });
    const moved = (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels);

    expect(moved('hubtel_callbacks_received_total', { source: 'checkout' })).toBe(1);
    expect(moved('hubtel_callbacks_accepted_total', { source: 'checkout' })).toBe(1);
    expect(moved('hubtel_callbacks_rejected_total', { source: 'checkout' })).toBe(0);
    expect(moved('hubtel_handler_runs_total', { pipeline: 'checkout' })).toBeGreaterThanOrEqual(1);
    expect(moved('hubtel_handler_failures_total', { pipeline: 'checkout' })).toBe(0);
    expect(moved('hubtel_jobs_done_total', { pipeline: 'checkout' })).toBeGreaterThanOrEqual(1);
    expect(
      moved('hubtel_platform_requests_total', {
        api: 'checkout',
        operation: 'checkout.createInvoice',
        status: '200',
      }),
    ).toBe(1);
    expect(moved('hubtel_platform_requests_total', { api: 'sms' })).toBeGreaterThanOrEqual(1);
    expect(moved('hubtel_platform_request_duration_seconds_count', { api: 'checkout' })).toBe(1);
    // No phone number, reference or order id in any label.
    expect(after.text).not.toMatch(/233241234567|0241234567/);
    expect(after.text).not.toContain(orderId);
  });

  it('counts a malformed callback as rejected, with the code it was answered', async () => {
    const before = await scrape(shop.example.opsUrl);
    expect(await postCallback(shop.url, { ResponseCode: '0000' })).toBe(400);
    const after = await scrape(shop.example.opsUrl);
    const labels = { source: 'checkout', reason: 'HUBTEL_INVALID_BODY' };
    expect(
      after.value('hubtel_callbacks_rejected_total', labels) -
        before.value('hubtel_callbacks_rejected_total', labels),
    ).toBe(1);
    expect(
      after.value('hubtel_callbacks_received_total', { source: 'checkout' }) -
        before.value('hubtel_callbacks_received_total', { source: 'checkout' }),
    ).toBe(1);
  });

  it('counts a data-bundle session: its service-flow steps with latency, the fulfillment request, handlers and callback', async () => {
    const before = await scrape(shop.example.opsUrl);
    const session = shop.sandbox.serviceApp(shop.url, {
      mobile: '233241234567',
      serviceCode: 'data-bundles',
      operator: 'Hubtel-Android',
    });
    await session.start();
    await session.reply('050 123 4567');
    await session.choose('DATA_3GB');
    await session.pay();
    await session.waitForCallback();
    const after = await eventually(async () => {
      const now = await scrape(shop.example.opsUrl);
      return now.value('hubtel_fulfillment_callbacks_sent_total', { status: 'success' }) >
        before.value('hubtel_fulfillment_callbacks_sent_total', { status: 'success' })
        ? now
        : undefined;
    });
    const moved = (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels);

    expect(moved('hubtel_service_flow_steps_total', { request: 'initiation', response: 'response' })).toBe(1);
    expect(moved('hubtel_service_flow_steps_total', { request: 'response', response: 'response' })).toBe(1);
    expect(moved('hubtel_service_flow_steps_total', { request: 'response', response: 'addtocart' })).toBe(1);
    expect(moved('hubtel_service_flow_step_duration_seconds_count')).toBe(3);
    expect(moved('hubtel_callbacks_received_total', { source: 'fulfillment' })).toBe(1);
    expect(moved('hubtel_callbacks_accepted_total', { source: 'fulfillment' })).toBe(1);
    expect(moved('hubtel_handler_runs_total', { pipeline: 'service-app' })).toBeGreaterThanOrEqual(1);
    expect(moved('hubtel_fulfillment_callbacks_sent_total', { status: 'success' })).toBe(1);
    expect(moved('hubtel_platform_requests_total', { api: 'fulfillment', status: '200' })).toBe(1);
    expect(after.text).not.toMatch(/233241234567|233501234567/);
  });

  it('is healthy with the store in memory and the jobs run in process', async () => {
    const { status, body } = await health(shop.example.opsUrl);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'ok',
      info: {
        hubtel_store: { status: 'up', stores: expect.arrayContaining(['MemoryStore']) },
        hubtel_runner: { status: 'up', runner: 'in-process' },
      },
    });
  });
});

redisBinary.describe('the example app on Redis: GET /health', () => {
  let server: RedisServer;
  let shop: InProcessExample | undefined;

  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(async () => {
    await shop?.close();
    await server?.dispose();
  });

  it('is up with the Redis store and the BullMQ runner, answers 503 once Redis is gone, and once it is back empty until the loss is acknowledged', async () => {
    shop = await startExampleInProcess({ redisUrl: server.url });
    const up = await health(shop.example.opsUrl);
    expect(up.status).toBe(200);
    expect(up.body.info.hubtel_store).toMatchObject({
      status: 'up',
      stores: expect.arrayContaining(['RedisStore']),
    });
    expect(up.body.info.hubtel_runner).toMatchObject({
      status: 'up',
      runner: 'BullmqJobRunner',
      redis: 'ready',
    });

    await server.stop();
    const down = await health(shop.example.opsUrl);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({
      status: 'error',
      error: { hubtel_store: { status: 'down' }, hubtel_runner: { status: 'down' } },
    });

    // Redis back, empty (no persistence), on the same port: both reconnect, and the store says
    // it lost its data until an operator acknowledges it.
    await server.restart();
    const lost = await eventually(async () => {
      const answer = await health(shop!.example.opsUrl);
      const store = answer.body.info?.hubtel_store ?? answer.body.error?.hubtel_store;
      const reconnected = answer.body.info?.hubtel_runner && (store?.status === 'up' || store?.lost);
      return reconnected ? answer : undefined;
    }, 20_000);
    expect(lost.status).toBe(503);
    expect(lost.body.error.hubtel_store).toMatchObject({
      status: 'down',
      lost: [{ where: [`127.0.0.1:${server.port}`] }],
      message: expect.stringContaining('LOST ITS DATA'),
    });
    await shop.example.app.get(RedisStore).acknowledgeLoss();
    expect((await health(shop.example.opsUrl)).status).toBe(200);
  }, 60_000);
});

describe.each(ADAPTERS)('a Nest app on %s with CheckoutModule: GET /metrics and GET /health', (adapter) => {
  let sandbox: HubtelSandbox;
  let t: CheckoutTestApp;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    const urls = sandbox.baseUrls();
    t = await startCheckoutApp(
      adapter,
      {
        ...sandbox.credentials.api,
        baseUrls: { checkout: urls.checkout, status: urls.status },
        posSalesId: sandbox.posSalesId,
        merchantAccountNumber: sandbox.posSalesId,
        returnUrl: 'https://shop.example.test/return',
        cancellationUrl: 'https://shop.example.test/cancel',
        retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
      },
      {},
      undefined,
      false,
      [OperationsModule.withRoutes()],
    );
  });
  afterAll(async () => {
    await t?.close();
    await sandbox?.stop();
  });

  it('counts a checkout paid through the sandbox, and a forged callback rejected by verification', async () => {
    const before = await scrape(t.url);
    const created = await t.service.createInvoice({
      totalAmount: 10,
      description: 'Data bundle',
      clientReference: `ops-${adapter}`,
      callbackUrl: t.callbackUrl,
    });
    await sandbox.pay(created.checkoutId);
    await t.handlers.waitFor('paid');
    await t.service.drain();
    // The right reference with another amount: answered 200, rejected by verification.
    const forged = callbackBody({ ref: `ops-${adapter}`, checkoutId: created.checkoutId, amount: 1 });
    expect((await t.post(forged)).status).toBe(200);
    const after = await scrape(t.url);
    const moved = (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels);
    expect(moved('hubtel_callbacks_received_total', { source: 'checkout' })).toBe(2);
    expect(moved('hubtel_callbacks_accepted_total', { source: 'checkout' })).toBe(1);
    expect(moved('hubtel_callbacks_rejected_total', { source: 'checkout' })).toBe(1);
    expect(
      moved('hubtel_handler_runs_total', {
        pipeline: 'checkout',
        handler: 'RecordingHandlers.onPaid@hubtel.checkout.paid',
      }),
    ).toBe(1);
    expect(
      moved('hubtel_platform_requests_total', { api: 'checkout', operation: 'checkout.createInvoice' }),
    ).toBe(1);
  });

  it('counts a request refused by the access guard (a wrong path secret) with its code', async () => {
    const secret = 'ops-path-secret-0123456789';
    const urls = sandbox.baseUrls();
    const guarded = await startCheckoutApp(
      adapter,
      {
        ...sandbox.credentials.api,
        baseUrls: { checkout: urls.checkout, status: urls.status },
        posSalesId: sandbox.posSalesId,
        merchantAccountNumber: sandbox.posSalesId,
        returnUrl: 'https://shop.example.test/return',
        cancellationUrl: 'https://shop.example.test/cancel',
        access: { pathSecret: secret },
      },
      {},
      undefined,
      false,
      [OperationsModule.withRoutes()],
    );
    try {
      const body = callbackBody({ ref: 'ops-guarded', checkoutId: 'chk-guarded' });
      expect((await guarded.post(body, { path: 'hubtel/checkout/callback/not-the-secret' })).status).toBe(
        404,
      );
      expect((await guarded.post(body)).status).toBe(404);
      const after = await scrape(guarded.url);
      expect(
        after.value('hubtel_callbacks_rejected_total', { source: 'checkout', reason: 'HUBTEL_NOT_FOUND' }),
      ).toBe(2);
      expect(after.value('hubtel_callbacks_received_total', { source: 'checkout' })).toBe(2);
    } finally {
      await guarded.close();
    }
  });

  it('answers /health 200 with the store and the runner', async () => {
    const { status, body } = await health(t.url);
    expect(status).toBe(200);
    expect(body.details).toEqual({
      hubtel_store: { status: 'up', stores: ['MemoryStore'] },
      hubtel_runner: { status: 'up', runner: 'in-process' },
    });
  });
});
