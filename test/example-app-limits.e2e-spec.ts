/**
 * Issue 21, item 7, on the example app (src/) against the sandbox, over real HTTP:
 *   - `POST /orders` is limited (per client and for all clients): past the limit 429, and no
 *     invoice is created at the platform;
 *   - an unpaid order expires with its invoice: the invoice is status-checked at most
 *     `reconciliation.maxChecks` times, then both are expired, and the order is kept briefly
 *     (Redis: its TTL is hours, not 30 days);
 *   - `/health` and `/metrics` are served on the operations port, not on the shop's.
 */
import { RedisStore } from 'nestjs-hubtel/redis';
import {
  eventually,
  getOrder,
  placeOrder,
  startExampleInProcess,
  waitForOrder,
  type InProcessExample,
} from './support/example-app.harness.js';
import { redisBinary, redisDatabase, type RedisDatabase } from './support/redis-server.js';

const HOUR_MS = 3_600_000;

const orderJson = (shopUrl: string, phone = '0241234567') =>
  fetch(`${shopUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ product: 'kente-mug', phone }),
  });

describe('the example app: POST /orders limit and the operations port', () => {
  let shop: InProcessExample;

  beforeAll(async () => {
    shop = await startExampleInProcess({ orderLimits: { perClientPerMinute: 3, perMinute: 5 } });
  });
  afterAll(() => shop?.close());

  it('answers 429 past the per-client limit, and creates no invoice for it', async () => {
    for (let i = 0; i < 3; i++) expect((await orderJson(shop.url)).status).toBe(201);
    const refused = await orderJson(shop.url);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      statusCode: 429,
      message: expect.stringMatching(/too many/i),
    });
    expect(shop.sandbox.invoices()).toHaveLength(3);
    // The form (a browser) is limited the same way.
    await expect(placeOrder(shop.url, { product: 'kente-mug', phone: '0241234567' })).rejects.toThrow(/429/);
    expect(shop.sandbox.invoices()).toHaveLength(3);
    // Other routes are not limited.
    expect((await fetch(`${shop.url}/`)).status).toBe(200);
  });

  it('serves /health and /metrics on the operations port only', async () => {
    const ops = shop.example.opsUrl;
    expect(new URL(ops).port).not.toBe(new URL(shop.url).port);
    for (const path of ['/health', '/metrics']) {
      const onShop = await fetch(`${shop.url}${path}`);
      await onShop.arrayBuffer();
      expect(onShop.status).toBe(404);
    }
    const health = await fetch(`${ops}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    const metrics = await fetch(`${ops}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('hubtel_');
    // And nothing of the shop there.
    const notShop = await fetch(`${ops}/orders`, { method: 'POST' });
    await notShop.arrayBuffer();
    expect(notShop.status).toBe(404);
  });
});

const RECONCILE_FAST = {
  // First check at once, then every 20 ms; at most 3 checks, the last one at 1.5 s.
  reconciliation: { delayMs: 0, intervalMs: 20, maxIntervalMs: 20, giveUpAfterMs: 1_500, maxChecks: 3 },
};

const statusChecks = (shop: InProcessExample) =>
  shop.sandbox.requests().filter((r) => r.method === 'GET' && r.path.includes('/status')).length;

describe('the example app: an unpaid order expires with its invoice (memory store)', () => {
  let shop: InProcessExample;

  beforeAll(async () => {
    shop = await startExampleInProcess({ overrides: { checkout: RECONCILE_FAST } });
  });
  afterAll(() => shop?.close());

  it('checks the never-paid invoice at most maxChecks times, then the order and the invoice are expired', async () => {
    const { orderId } = await placeOrder(shop.url, { product: 'kente-mug', phone: '0241234567' });
    await waitForOrder(shop.url, orderId, (order) => order.status === 'expired', 10_000);
    expect(statusChecks(shop)).toBeLessThanOrEqual(3);
    const checks = statusChecks(shop);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(statusChecks(shop)).toBe(checks);
    expect((await getOrder(shop.url, orderId)).settled).toBe(true);
  });
});

redisBinary.describe(
  'the example app on Redis: an unpaid order is kept with its invoice, not 30 days',
  () => {
    let server: RedisDatabase;
    let shop: InProcessExample | undefined;
    let redis: RedisStore | undefined;

    beforeAll(async () => {
      server = await redisDatabase();
      redis = new RedisStore({ url: server.url });
      await redis.connect();
    });
    afterAll(async () => {
      await shop?.close();
      await redis?.close();
      await server?.dispose();
    });

    it('gives an unpaid order the invoice watch time plus an hour, and an expired one an hour', async () => {
      shop = await startExampleInProcess({ redisUrl: server.url, overrides: { checkout: RECONCILE_FAST } });
      const { orderId } = await placeOrder(shop.url, { product: 'kente-mug', phone: '0241234567' });
      const ttl = () => redis!.client.pttl(`example:order:${orderId}`);
      const unpaid = await ttl();
      expect(unpaid).toBeGreaterThan(0);
      expect(unpaid).toBeLessThanOrEqual(1_500 + HOUR_MS);
      await waitForOrder(shop.url, orderId, (order) => order.status === 'expired', 15_000);
      const expired = await eventually(async () => {
        const left = await ttl();
        return left > 0 && left <= HOUR_MS ? left : undefined;
      });
      expect(expired).toBeLessThanOrEqual(HOUR_MS);
      expect(statusChecks(shop)).toBeLessThanOrEqual(3);
    }, 30_000);
  },
);
