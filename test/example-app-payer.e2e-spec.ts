/**
 * The example shop against forged "Success" copies around a genuine payment (issue 21, item 4):
 * copies with the right reference, CheckoutId and amount but another phone number, sent over real
 * HTTP to the shop's callback URL before, during and after the sandbox's genuine payment. What the
 * shop records and texts comes from verified facts (its own order, the invoice's payee, the status
 * check), so in every trial the receipt goes to the buyer and the buyer is the recorded payer.
 * Before the fix the payer came from "the latest callback of the round": the forger, in about
 * half the trials.
 */
import { OrdersService } from '../src/shop/orders.service.js';
import { startExampleInProcess, waitForOrder, type InProcessExample } from './support/example-app.harness.js';
import { redisDatabase, type RedisDatabase } from './support/redis-server.js';
import { checkoutSettled } from './support/job-settle.js';
import { storeFixture, STORE_KINDS } from './support/test-stores.js';

const BUYER = '233244123456';
const FORGER = '233209999999';
const TRIALS = 15;

for (const kind of STORE_KINDS) {
  const stores = storeFixture(kind);
  stores.describe(`example shop: forged Success copies never swap the payer (${kind} store)`, () => {
    let shop: InProcessExample;
    let redis: RedisDatabase | undefined;

    beforeAll(async () => {
      if (kind === 'redis') redis = await redisDatabase();
      // The spacing of checks is not what this is about (see checkout-forged-early): checks of one
      // invoice 20 ms apart, so each trial's genuine callback is confirmed quickly.
      const overrides = {
        checkout: { verification: { recheck: { delayMs: 5, maxDelayMs: 20, minIntervalMs: 20 } } },
      };
      shop = await startExampleInProcess({ ...(redis ? { redisUrl: redis.url } : {}), overrides });
    }, 60_000);
    afterAll(async () => {
      await shop?.close();
      await redis?.dispose();
      await stores.dispose();
    });

    async function order(): Promise<string> {
      const res = await fetch(`${shop.url}/orders`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ product: 'kente-mug', phone: '0244123456', name: 'Ama' }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { orderId: string }).orderId;
    }

    function forge(url: string, orderId: string, checkoutId: string, amount: number): Promise<Response> {
      return fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          ResponseCode: '0000',
          Status: 'Success',
          Data: {
            CheckoutId: checkoutId,
            SalesInvoiceId: 'f00dfeed',
            ClientReference: orderId,
            Status: 'Success',
            Amount: amount,
            CustomerPhoneNumber: FORGER,
            PaymentDetails: { MobileMoneyNumber: FORGER, PaymentType: 'mobilemoney', Channel: 'vodafone-gh' },
            Description: 'The payment was successful',
          },
        }),
      });
    }

    it(`sends the receipt to the buyer and records the buyer as payer, in each of ${TRIALS} trials`, async () => {
      const orders = shop.example.app.get(OrdersService);
      for (let trial = 0; trial < TRIALS; trial++) {
        const orderId = await order();
        const invoice = shop.sandbox.invoice(orderId)!;
        const send = () => forge(invoice.callbackUrl, orderId, invoice.checkoutId, invoice.totalAmount);

        // Copies before the payment (a round waits for its re-checks), then a stream of copies
        // while the genuine callback arrives and is confirmed, then a few after.
        await send();
        let flooding = true;
        const flood = (async () => {
          while (flooding) await Promise.all([send(), send()]);
        })();
        await shop.sandbox.pay(orderId, { phone: BUYER });
        await waitForOrder(shop.url, orderId, (o) => o.status === 'paid' && o.receipt.status === 'sent');
        flooding = false;
        await flood;
        await Promise.all([send(), send()]);
        // Every copy's job run to its end (on Redis: BullMQ's queue empty too, as drain() sees this
        // process only), so a copy that would swap the payer has done so before the check.
        await checkoutSettled(shop.example.app);

        // The order as stored (the JSON API masks the numbers).
        const stored = (await orders.get(orderId))!;
        expect({ trial, to: stored.receipt.to, payer: stored.payment?.payer }).toEqual({
          trial,
          to: BUYER,
          payer: BUYER,
        });
      }
      expect(shop.sandbox.messagesTo(FORGER)).toEqual([]);
      expect(shop.sandbox.messagesTo(BUYER)).toHaveLength(TRIALS);
    }, 120_000);
  });
}
