/**
 * The example shop on Redis: a Redis stall while the SMS receipt is being sent (issue 21, item 8).
 * The SMS went out, but writing "sent" timed out (the store's 2 s command timeout): the receipt
 * stayed "sending" forever, and a retried handler saw a claim it could not resolve. The receipt
 * must converge to "sent", with one SMS, once Redis answers again. A real redis-server, frozen
 * with SIGSTOP and thawed with SIGCONT; real HTTP against the sandbox.
 */
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import {
  getOrder,
  placeOrder,
  pressPayPageButton,
  startExampleInProcess,
  waitForOrder,
  type InProcessExample,
} from './support/example-app.harness.js';
import { RedisServer, redisBinary } from './support/redis-server.js';
import { findProduct } from '../src/shop/catalog.js';
import { OrdersService, RECEIPT_SENDING_STALE_MS, publicOrder } from '../src/shop/orders.service.js';

/** Longer than the Redis store's command timeout (2 s), so every write during it fails. */
const STALL_MS = 6_000;

redisBinary.describe('example shop: a Redis stall during the SMS receipt', () => {
  let redis: RedisServer;
  let sandbox: HubtelSandbox;
  let shop: InProcessExample;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await HubtelSandbox.start();
    shop = await startExampleInProcess({ sandbox, redisUrl: redis.url });
  });
  afterAll(async () => {
    redis?.resume();
    await shop?.close();
    await sandbox?.stop();
    await redis?.dispose();
  });

  it('the receipt ends "sent", one SMS, after Redis answers again', async () => {
    // The SMS takes a second: time to freeze Redis while it is on its way.
    sandbox.faults.add({ match: { path: '/v1/messages/send' }, delayMs: 1_000, times: 1 });
    const { orderId, checkoutUrl } = await placeOrder(shop.url, {
      product: 'kente-mug',
      phone: '0244123456',
    });
    await pressPayPageButton(checkoutUrl, 'pay-momo');
    await waitForOrder(shop.url, orderId, (o) => o.receipt.status === 'sending', 10_000);

    redis.pause();
    try {
      // The SMS goes out while Redis is frozen: recording it cannot succeed now.
      const deadline = Date.now() + 5_000;
      while (sandbox.messages().length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(sandbox.messages()).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    } finally {
      redis.resume();
    }

    const done = await waitForOrder(shop.url, orderId, (o) => o.receipt.status !== 'sending', 20_000);
    expect(done).toMatchObject({
      status: 'paid',
      receipt: { status: 'sent', messageId: sandbox.messages()[0]!.messageId },
      settled: true,
    });
    // And it stays so, with the one SMS (a retried handler sends nothing more).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await getOrder(shop.url, orderId)).receipt.status).toBe('sent');
    expect(sandbox.messages()).toHaveLength(1);
  }, 60_000);

  it('a claim whose outcome was lost (a stall longer than the patience, a crash) settles as unknown, never resent', async () => {
    const orders = shop.example.app.get(OrdersService);
    const order = await orders.create(findProduct('kente-mug')!, '233244123456');
    expect(await orders.claimReceipt(order.id, '233244123456')).toBe(true);
    // Still fresh: another run may be sending it; nothing changes.
    await orders.settleStaleReceipt(order.id);
    expect((await orders.get(order.id))!.receipt.status).toBe('sending');
    // Stale: shown as unknown (the page stops waiting) and settled so in the store.
    const later = Date.now() + RECEIPT_SENDING_STALE_MS + 1;
    await orders.settleStaleReceipt(order.id, later);
    const settled = (await orders.get(order.id))!;
    expect(settled.receipt).toMatchObject({ status: 'unknown', to: '233244123456' });
    expect(await orders.claimReceipt(order.id, '233244123456')).toBe(false);
    const view = publicOrder(
      { ...settled, status: 'paid', receipt: { status: 'sending', since: new Date(0).toISOString() } },
      (p) => p,
    );
    expect(view).toMatchObject({ receipt: { status: 'unknown' }, settled: true });
  });
});
