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
import { CaptureLogger } from './support/capture-logger.js';
import { AppProcess } from './support/multi-process.js';
import { RedisServer, redisBinary, redisDatabase, type RedisDatabase } from './support/redis-server.js';
import { findProduct } from '../src/shop/catalog.js';
import { OrdersService, RECEIPT_SENDING_STALE_MS, publicOrder } from '../src/shop/orders.service.js';

/** The example merchant app, as `npm start` runs it. */
const EXAMPLE_APP = new URL('../src/main.ts', import.meta.url).pathname;

/**
 * The most the stall lasts: longer than the Redis store's command timeout (2 s), so every write
 * during it fails. It ends once the write of "sent" is seen failing (logged), sooner.
 */
const STALL_MS = 6_000;

redisBinary.describe('example shop: a Redis stall during the SMS receipt', () => {
  let redis: RedisServer;
  let sandbox: HubtelSandbox;
  let shop: InProcessExample;
  const logger = new CaptureLogger();

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await HubtelSandbox.start();
    shop = await startExampleInProcess({ sandbox, redisUrl: redis.url, logger });
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
      // Frozen until the write of "sent" timed out (it says so, and tries again), STALL_MS at most.
      const failed = `Recording the SMS receipt of order ${orderId} (sent) failed`;
      const until = Date.now() + STALL_MS;
      while (!logger.lines.some((l) => l.message.includes(failed)) && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(logger.lines.filter((l) => l.message.includes(failed))).not.toEqual([]);
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
    // Still sending: shown so until a run of the paid handler finds it, or until it is stale.
    expect(
      publicOrder({ ...order, status: 'paid', receipt: (await orders.get(order.id))!.receipt }, (p) => p),
    ).toMatchObject({ receipt: { status: 'sending' }, settled: false });
    // The paid handler's next run: the claim's run is over, its outcome lost.
    expect(await orders.settleLostReceipt(order.id)).toBe(true);
    expect(await orders.settleLostReceipt(order.id)).toBe(false);
    const settled = (await orders.get(order.id))!;
    expect(settled.receipt).toMatchObject({ status: 'unknown', to: '233244123456' });
    expect(await orders.claimReceipt(order.id, '233244123456')).toBe(false);
    // A claim no run came back to, past RECEIPT_SENDING_STALE_MS: shown as unknown.
    const view = publicOrder(
      {
        ...settled,
        status: 'paid',
        receipt: {
          status: 'sending',
          since: new Date(Date.now() - RECEIPT_SENDING_STALE_MS - 1).toISOString(),
        },
      },
      (p) => p,
    );
    expect(view).toMatchObject({ receipt: { status: 'unknown' }, settled: true });
  });
});

/**
 * The example app as its own process (src/main.ts, real-platform mode against this test's
 * sandbox, orders in Redis, jobs on BullMQ there), killed with SIGKILL while the receipt SMS is on
 * its way (issue 30, item 10). The SMS went out, but no process lived to record it: the receipt
 * must not stay "sending". The restarted app takes the paid job over and settles the receipt as
 * "unknown" (it cannot know whether the SMS went out: the SMS API finds a message only by the id
 * of the answer that was lost), never sending a second SMS.
 */
redisBinary.describe('example shop: killed while the SMS receipt is being sent', () => {
  let redis: RedisDatabase;
  let sandbox: HubtelSandbox;
  let app: AppProcess;

  beforeAll(async () => {
    redis = await redisDatabase();
    sandbox = await HubtelSandbox.start();
    const { api, sms } = sandbox.credentials;
    const urls = sandbox.baseUrls();
    app = await AppProcess.start('shop', {
      entry: EXAMPLE_APP,
      env: {
        HUBTEL_CLIENT_ID: api.clientId,
        HUBTEL_CLIENT_SECRET: api.clientSecret,
        HUBTEL_SMS_CLIENT_ID: sms.clientId,
        HUBTEL_SMS_CLIENT_SECRET: sms.clientSecret,
        HUBTEL_SMS_SENDER_ID: 'Shop',
        HUBTEL_SMS_URL: urls.sms,
        HUBTEL_CHECKOUT_URL: urls.checkout,
        HUBTEL_STATUS_URL: urls.status,
        HUBTEL_CALLBACK_URL: urls.fulfillmentCallback,
        HUBTEL_POS_SALES_ID: sandbox.posSalesId,
        REDIS_URL: redis.url,
        NO_COLOR: '1',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await app?.stop();
    await sandbox?.stop();
    await redis?.dispose();
  });

  it('the receipt settles as "unknown" after the restart, with the one SMS that went out', async () => {
    // The platform takes the SMS at once and answers 3 s later: the app is killed meanwhile.
    sandbox.faults.add({
      match: { path: '/v1/messages/send' },
      processRequest: true,
      delayMs: 3_000,
      times: 1,
    });
    const { orderId, checkoutUrl } = await placeOrder(app.url, { product: 'kente-mug', phone: '0244123456' });
    await pressPayPageButton(checkoutUrl, 'pay-momo');
    await waitForOrder(app.url, orderId, (o) => o.receipt.status === 'sending', 20_000);
    // Killed once the platform holds the SMS: "sending" is recorded before the request leaves, and a
    // loaded machine can kill the app in between (then no SMS went out at all).
    await sandbox.waitForMessage((m) => m.content.includes(orderId), { timeoutMs: 20_000 });
    await app.kill();
    await app.restart();

    // BullMQ hands the paid job to the restarted app once the dead one's lock lapses.
    const done = await waitForOrder(app.url, orderId, (o) => o.receipt.status !== 'sending', 60_000);
    const receipts = () => sandbox.messages().filter((m) => m.content.includes(orderId));
    expect(receipts()).toHaveLength(1);
    expect(done).toMatchObject({ status: 'paid', receipt: { status: 'unknown' }, settled: true });
    // Logged once the store has it (the line may reach the pipe after the page says so).
    await app.output.waitFor(
      new RegExp(`SMS receipt for order ${orderId} to 233\\*{6}456: the run sending it ended`),
      {
        timeoutMs: 10_000,
      },
    );
    // And it stays so: nothing resends it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await getOrder(app.url, orderId)).receipt.status).toBe('unknown');
    expect(receipts()).toHaveLength(1);
  }, 150_000);
});
