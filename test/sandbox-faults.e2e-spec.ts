/**
 * Every fault the sandbox injects, against the example app (in process) and the modules it uses:
 * what the platform can do wrong, and what the modules do about it — retry what is safe to retry,
 * never resend what may have gone through, run a paid handler once however often the news comes,
 * and never believe a callback that does not match.
 *
 *   SMS send           delay · time-out · 502 · dropped connection · 200 without a messageId
 *                      (unknown outcome, not resent) · 503, 429 (retried) · 500 (not retried) ·
 *                      403 HTML (not allow-listed)
 *   checkout initiate  502 / 403 HTML → the shop answers 502, never 500
 *   status check       502 · 503 · time-out (retried) · 403 HTML
 *   checkout callback  dropped (reconciler) · delayed · duplicated · wrong amount · wrong checkout
 *                      id · forged reference · malformed body · non-final status
 *   fulfillment        request duplicated · dropped · forged; callback 5xx and time-out (retried
 *                      until accepted)
 */
import { Injectable, Module } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { HubtelApiError, HubtelIpNotAllowedError, HubtelUnknownOutcomeError } from 'nestjs-hubtel';
import {
  CheckoutReconciler,
  CheckoutService,
  OnCheckoutPaid,
  OnCheckoutRejected,
  type CheckoutPaidEvent,
  type CheckoutRejectedEvent,
} from 'nestjs-hubtel/checkout';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { ServiceAppEvents, type FulfillmentCallbackSentEvent } from 'nestjs-hubtel/service-app';
import { SmsService } from 'nestjs-hubtel/sms';
import { BundleDeliveries } from '../src/bundles/bundle-deliveries.service.js';
import { OrdersService } from '../src/shop/orders.service.js';
import {
  eventually,
  FAST_OVERRIDES,
  getOrder,
  startExampleInProcess,
  type InProcessExample,
} from './support/example-app.harness.js';

const SEND = '/v1/messages/send';

const paid: CheckoutPaidEvent[] = [];
const rejected: CheckoutRejectedEvent[] = [];
const callbacksSent: FulfillmentCallbackSentEvent[] = [];

/** What the app's modules told its handlers, recorded by handlers of its own (as a user writes them). */
@Injectable()
class Recorder {
  @OnCheckoutPaid({ id: 'test-recorder' })
  paid(e: CheckoutPaidEvent): void {
    paid.push(e);
  }
  @OnCheckoutRejected({ id: 'test-recorder' })
  rejected(e: CheckoutRejectedEvent): void {
    rejected.push(e);
  }
  @OnEvent(ServiceAppEvents.CallbackSent)
  callbackSent(e: FulfillmentCallbackSentEvent): void {
    callbacksSent.push(e);
  }
}

@Module({ providers: [Recorder] })
class RecorderModule {}

describe('sandbox faults: the modules handle each one (example app in process)', () => {
  let sandbox: HubtelSandbox;
  let shop: InProcessExample;
  let sms: SmsService;
  let checkout: CheckoutService;
  let reconciler: CheckoutReconciler;
  let orders: OrdersService;
  let deliveries: BundleDeliveries;
  let phoneSeq = 0;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    shop = await startExampleInProcess({
      sandbox,
      imports: [RecorderModule],
      overrides: {
        // Time-outs short enough for a hung request to end the test quickly, long enough for a loaded machine.
        sms: { ...FAST_OVERRIDES.sms, timeoutMs: 1_500 },
        checkout: {
          ...FAST_OVERRIDES.checkout,
          timeoutMs: 1_500,
          // Invoices are due for a status check at once, but only when a test runs a pass.
          reconciliation: { delayMs: 0, intervalMs: 3_600_000 },
        },
        serviceApp: { ...FAST_OVERRIDES.serviceApp, callbackTimeoutMs: 1_500 },
      },
    });
    const app = shop.example.app;
    sms = app.get(SmsService);
    checkout = app.get(CheckoutService);
    reconciler = app.get(CheckoutReconciler);
    orders = app.get(OrdersService);
    deliveries = app.get(BundleDeliveries);
  });

  afterAll(async () => {
    await shop?.close();
    await sandbox?.stop();
  });

  beforeEach(() => sandbox.reset());

  /** A fresh number per test, so the SMS counts of one test never see another's. */
  function nextPhone(): string {
    return `2332440${String(++phoneSeq).padStart(5, '0')}`;
  }

  const requestsTo = (path: string) => sandbox.requests().filter((r) => r.path === path);
  const paidFor = (ref: string) => paid.filter((e) => e.clientReference === ref);
  const rejectedFor = (ref: string) => rejected.filter((e) => e.clientReference === ref);

  /** An order through the shop's JSON API: the shop creates the invoice in the sandbox. */
  async function placeOrder(phone: string, product = 'kente-mug'): Promise<string> {
    const res = await fetch(`${shop.url}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ product, phone }),
    });
    const body = (await res.json()) as { orderId: string; checkoutUrl: string };
    expect(res.status).toBe(201);
    expect(body.checkoutUrl.startsWith(`${sandbox.url}/pay/`)).toBe(true);
    return body.orderId;
  }

  /* ------------------------------------------ SMS send ------------------------------------------ */

  describe('SMS send', () => {
    it('delay shorter than the time-out: answered late, sent once', async () => {
      const to = nextPhone();
      sandbox.faults.add({ match: { path: SEND }, delayMs: 300, times: 1 });
      const sent = await sms.send({ to, content: 'late but fine' });
      expect(sent.messageId).toBe(sandbox.messagesTo(to)[0]!.messageId);
      expect(requestsTo(SEND)).toHaveLength(1);
    });

    it('time-out after the platform took it: HubtelUnknownOutcomeError, not resent', async () => {
      const to = nextPhone();
      sandbox.faults.add({ match: { path: SEND }, processRequest: true, timeout: true, times: 1 });
      await expect(sms.send({ to, content: 'did it go?' })).rejects.toBeInstanceOf(HubtelUnknownOutcomeError);
      // It did go out: a blind resend would have texted twice.
      expect(sandbox.messagesTo(to)).toHaveLength(1);
      expect(requestsTo(SEND)).toHaveLength(1);
    });

    it('502 after the platform took it: HubtelUnknownOutcomeError, not resent', async () => {
      const to = nextPhone();
      sandbox.faults.add({ match: { path: SEND }, processRequest: true, status: 502, times: 1 });
      await expect(sms.send({ to, content: 'gateway hiccup' })).rejects.toBeInstanceOf(
        HubtelUnknownOutcomeError,
      );
      expect(sandbox.messagesTo(to)).toHaveLength(1);
      expect(requestsTo(SEND)).toHaveLength(1);
    });

    it('connection dropped after sending: HubtelUnknownOutcomeError, not resent', async () => {
      const to = nextPhone();
      sandbox.faults.add({ match: { path: SEND }, processRequest: true, dropConnection: true, times: 1 });
      await expect(sms.send({ to, content: 'reset' })).rejects.toBeInstanceOf(HubtelUnknownOutcomeError);
      expect(requestsTo(SEND)).toHaveLength(1);
    });

    it('503 (not processed): retried, sent exactly once', async () => {
      const to = nextPhone();
      sandbox.faults.add({ match: { path: SEND }, status: 503, times: 2 });
      const sent = await sms.send({ to, content: 'third time lucky' });
      expect(requestsTo(SEND).map((r) => r.statusCode)).toEqual([503, 503, 200]);
      expect(sandbox.messagesTo(to).map((m) => m.messageId)).toEqual([sent.messageId]);
    });

    it('429 with Retry-After: retried after the wait the platform asked for, sent once', async () => {
      const to = nextPhone();
      sandbox.faults.add({ match: { path: SEND }, status: 429, headers: { 'Retry-After': '0' }, times: 1 });
      const sent = await sms.send({ to, content: 'slow down' });
      expect(requestsTo(SEND).map((r) => r.statusCode)).toEqual([429, 200]);
      expect(sandbox.messagesTo(to).map((m) => m.messageId)).toEqual([sent.messageId]);
    });

    it("200 with a body that is not the contract's (no messageId): HubtelUnknownOutcomeError, not resent", async () => {
      sandbox.faults.add({
        match: { path: SEND },
        processRequest: true,
        status: 200,
        body: { ok: true },
        times: 1,
      });
      await expect(sms.send({ to: nextPhone(), content: 'odd answer' })).rejects.toBeInstanceOf(
        HubtelUnknownOutcomeError,
      );
      expect(requestsTo(SEND)).toHaveLength(1);
    });

    it('500: a plain API error, not retried', async () => {
      const to = nextPhone();
      sandbox.faults.add({ match: { path: SEND }, status: 500, times: 1 });
      const error = await sms.send({ to, content: 'server error' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HubtelApiError);
      expect(error).not.toBeInstanceOf(HubtelUnknownOutcomeError);
      expect((error as HubtelApiError).httpStatus).toBe(500);
      expect(requestsTo(SEND)).toHaveLength(1);
      expect(sandbox.messagesTo(to)).toEqual([]);
    });

    it('403 HTML page (address not allow-listed): HubtelIpNotAllowedError', async () => {
      sandbox.faults.add({ match: { path: SEND }, html: true, times: 1 });
      await expect(sms.send({ to: nextPhone(), content: 'blocked' })).rejects.toBeInstanceOf(
        HubtelIpNotAllowedError,
      );
      expect(requestsTo(SEND)).toHaveLength(1);
    });

    it('a paid order whose receipt send timed out: paid once, the receipt not resent', async () => {
      const phone = nextPhone();
      const orderId = await placeOrder(phone);
      sandbox.faults.add({ match: { path: SEND }, processRequest: true, timeout: true, times: 1 });
      await sandbox.pay(orderId);
      await checkout.drain();
      const order = await getOrder(shop.url, orderId);
      expect(order).toMatchObject({ status: 'paid', receipt: { status: 'unknown' } });
      expect(paidFor(orderId)).toHaveLength(1);
      expect(requestsTo(SEND)).toHaveLength(1);
      expect(sandbox.messagesTo(phone)).toHaveLength(1);
    });
  });

  /* ------------------------------------- checkout initiate ------------------------------------- */

  describe('checkout initiate', () => {
    it.each([
      ['502 after processing', { status: 502, processRequest: true }],
      ['a time-out', { timeout: true }],
      ['403 HTML', { html: true }],
    ])(
      '%s: the shop answers 502 with a JSON error (never 500) and the order is not left waiting',
      async (_name, fault) => {
        sandbox.faults.add({ match: { path: '/items/initiate' }, times: 1, ...fault });
        const res = await fetch(`${shop.url}/orders`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ product: 'shea-soap', phone: nextPhone() }),
        });
        expect(res.status).toBe(502);
        expect(await res.json()).toMatchObject({ statusCode: 502, code: 'CHECKOUT_UNAVAILABLE' });
        expect(requestsTo('/items/initiate')).toHaveLength(1);
        const stuck = (await orders.list()).filter((o) => o.status === 'awaiting-payment' && !o.checkoutUrl);
        expect(stuck).toEqual([]);
      },
    );
  });

  /* ---------------------------------------- status check ---------------------------------------- */

  describe('transaction status check', () => {
    const statusPath = () => `/transactions/${sandbox.posSalesId}/status`;

    it('502 then a time-out: retried (an idempotent read), answered on the third attempt', async () => {
      const orderId = await placeOrder(nextPhone());
      sandbox.faults.add({ match: { api: 'status' }, status: 502, times: 1 });
      sandbox.faults.add({ match: { api: 'status' }, timeout: true, times: 1 });
      const status = await checkout.getStatus(orderId);
      expect(status).toMatchObject({ status: 'Unpaid', paid: false });
      expect(requestsTo(statusPath())).toHaveLength(3);
    });

    it('503 for longer than the transport retries while confirming a callback: the job retries, paid once', async () => {
      const phone = nextPhone();
      const orderId = await placeOrder(phone);
      sandbox.faults.add({ match: { api: 'status' }, status: 503, times: 4 });
      await sandbox.pay(orderId);
      await checkout.drain();
      expect(await getOrder(shop.url, orderId)).toMatchObject({
        status: 'paid',
        receipt: { status: 'sent' },
      });
      expect(paidFor(orderId)).toHaveLength(1);
      expect(paidFor(orderId)[0]!.confirmedByStatusCheck).toBe(true);
      expect(requestsTo(statusPath()).map((r) => r.statusCode)).toEqual([503, 503, 503, 503, 200]);
      expect(sandbox.messagesTo(phone)).toHaveLength(1);
    });

    it('403 HTML page: HubtelIpNotAllowedError', async () => {
      const orderId = await placeOrder(nextPhone());
      sandbox.faults.add({ match: { api: 'status' }, html: true, times: 1 });
      await expect(checkout.getStatus(orderId)).rejects.toBeInstanceOf(HubtelIpNotAllowedError);
      expect(requestsTo(statusPath())).toHaveLength(1);
    });
  });

  /* -------------------------------------- checkout callback -------------------------------------- */

  describe('checkout web callback', () => {
    it('dropped: the reconciler finds the payment by status check — paid once; the late callback changes nothing', async () => {
      const phone = nextPhone();
      const orderId = await placeOrder(phone);
      const { deliveries: sent } = await sandbox.pay(orderId, { fault: { drop: true } });
      expect(sent.map((d) => d.state)).toEqual(['dropped']);
      await checkout.drain();
      expect((await getOrder(shop.url, orderId)).status).toBe('awaiting-payment');

      await reconciler.runOnce();
      await checkout.drain();
      expect(await getOrder(shop.url, orderId)).toMatchObject({
        status: 'paid',
        receipt: { status: 'sent' },
      });
      expect(paidFor(orderId)).toHaveLength(1);
      expect(paidFor(orderId)[0]!.source).toBe('status-check');

      // The platform sends it after all.
      const late = await sandbox.redeliver(sent[0]!.id);
      expect(late.state).toBe('delivered');
      await checkout.drain();
      await reconciler.runOnce();
      await checkout.drain();
      expect(paidFor(orderId)).toHaveLength(1);
      expect(sandbox.messagesTo(phone)).toHaveLength(1);
    });

    it('delayed: the payer is back before it; the order turns paid when it arrives', async () => {
      const orderId = await placeOrder(nextPhone());
      const { deliveries: sent } = await sandbox.pay(orderId, { fault: { delayMs: 150 } });
      expect(sent.map((d) => d.state)).toEqual(['scheduled']);
      expect((await getOrder(shop.url, orderId)).status).toBe('awaiting-payment');
      await sandbox.waitForDelivery((d) => d.clientReference === orderId);
      await checkout.drain();
      expect((await getOrder(shop.url, orderId)).status).toBe('paid');
      expect(paidFor(orderId)).toHaveLength(1);
    });

    it('duplicated (3 copies at once): every copy acknowledged, the paid handler runs once, one receipt', async () => {
      const phone = nextPhone();
      const orderId = await placeOrder(phone);
      const { deliveries: sent } = await sandbox.pay(orderId, { fault: { duplicate: 3, concurrent: true } });
      expect(sent).toHaveLength(3);
      expect(sent.map((d) => d.statusCode)).toEqual([200, 200, 200]);
      await checkout.drain();
      expect(paidFor(orderId)).toHaveLength(1);
      expect(sandbox.messagesTo(phone)).toHaveLength(1);
      expect((await getOrder(shop.url, orderId)).status).toBe('paid');
    });

    it('wrong amount: rejected (AMOUNT_MISMATCH), never paid, no receipt', async () => {
      const phone = nextPhone();
      const orderId = await placeOrder(phone);
      const { deliveries: sent } = await sandbox.pay(orderId, { fault: { amount: (a) => a - 20 } });
      // Acknowledged like any callback: the answer tells a forger nothing.
      expect(sent[0]!.statusCode).toBe(200);
      await checkout.drain();
      expect(rejectedFor(orderId).map((e) => [e.reason, e.amountClaimed, e.amountExpected])).toEqual([
        ['AMOUNT_MISMATCH', 5, 25],
      ]);
      expect(paidFor(orderId)).toEqual([]);
      expect((await getOrder(shop.url, orderId)).status).toBe('awaiting-payment');
      expect(sandbox.messagesTo(phone)).toEqual([]);
    });

    it('wrong checkout id: rejected (CHECKOUT_ID_MISMATCH), never paid', async () => {
      const orderId = await placeOrder(nextPhone());
      await sandbox.pay(orderId, { fault: { checkoutId: true } });
      await checkout.drain();
      expect(rejectedFor(orderId).map((e) => e.reason)).toEqual(['CHECKOUT_ID_MISMATCH']);
      expect(paidFor(orderId)).toEqual([]);
      expect((await getOrder(shop.url, orderId)).status).toBe('awaiting-payment');
    });

    it("tampered into a body that is not the contract's: answered 400, nothing recorded or emitted", async () => {
      const orderId = await placeOrder(nextPhone());
      const { deliveries: sent } = await sandbox.pay(orderId, {
        fault: { body: (b) => ({ ...b, Data: { ...(b.Data as object), Amount: '25.00' } }) },
      });
      expect(sent[0]).toMatchObject({ state: 'failed', statusCode: 400 });
      await checkout.drain();
      expect(paidFor(orderId)).toEqual([]);
      expect(rejectedFor(orderId)).toEqual([]);
      expect((await getOrder(shop.url, orderId)).status).toBe('awaiting-payment');
    });

    it('a non-final status (Pending): acknowledged and ignored, the order still waits', async () => {
      const orderId = await placeOrder(nextPhone());
      const { deliveries: sent } = await sandbox.pay(orderId, {
        fault: {
          body: (b) => ({ ...b, Status: 'Pending', Data: { ...(b.Data as object), Status: 'Pending' } }),
        },
      });
      expect(sent[0]!.statusCode).toBe(200);
      await checkout.drain();
      expect(paidFor(orderId)).toEqual([]);
      expect((await getOrder(shop.url, orderId)).status).toBe('awaiting-payment');
    });

    it('forged (a reference the shop never created): rejected (UNKNOWN_REFERENCE), the real order untouched', async () => {
      const orderId = await placeOrder(nextPhone());
      const { deliveries: sent } = await sandbox.pay(orderId, { fault: { forge: true } });
      const forgedRef = (sent[0]!.body as { Data: { ClientReference: string } }).Data.ClientReference;
      expect(forgedRef).not.toBe(orderId);
      await checkout.drain();
      expect(rejectedFor(forgedRef).map((e) => e.reason)).toEqual(['UNKNOWN_REFERENCE']);
      expect(paidFor(forgedRef)).toEqual([]);
      expect(paidFor(orderId)).toEqual([]);
      expect((await getOrder(shop.url, orderId)).status).toBe('awaiting-payment');
    });
  });

  /* ------------------------------------ programmable services ------------------------------------ */

  describe('programmable services', () => {
    async function toCart(mobile = '233241234567') {
      const session = sandbox.serviceApp(shop.url, { mobile });
      await session.start();
      await session.reply('0241234567');
      await session.choose('DATA_1GB');
      return session;
    }

    it('fulfillment callback answered 500, 503, then timed out: retried until the platform accepts it', async () => {
      sandbox.faults.add({ match: { path: '/callback' }, status: 500, times: 1 });
      sandbox.faults.add({ match: { path: '/callback' }, status: 503, times: 1 });
      sandbox.faults.add({ match: { path: '/callback' }, timeout: true, times: 1 });
      const session = await toCart();
      const { order } = await session.pay();
      const callback = await session.waitForCallback(20_000);
      expect(callback).toMatchObject({ orderId: order.orderId, serviceStatus: 'success', matched: true });
      expect(requestsTo('/callback').map((r) => r.faultId !== null)).toEqual([true, true, true, false]);
      expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === order.orderId)).toHaveLength(1);
      expect(await deliveries.get(order.orderId)).toBeDefined();
      const sent = await eventually(() => callbacksSent.find((e) => e.orderId === order.orderId));
      expect(sent.attempts).toBe(4);
    });

    it('fulfillment request duplicated: the bundle is delivered once, one callback', async () => {
      const session = await toCart();
      const { order, deliveries: sent } = await session.pay({ fault: { duplicate: 2 } });
      expect(sent).toHaveLength(2);
      expect(sent.every((d) => d.statusCode === 200)).toBe(true);
      await session.waitForCallback();
      await sandbox.settled();
      await eventually(() => callbacksSent.find((e) => e.orderId === order.orderId));
      expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === order.orderId)).toHaveLength(1);
      expect((await deliveries.list()).filter((d) => d.orderId === order.orderId)).toHaveLength(1);
    });

    it('fulfillment request dropped: nothing delivered until the platform sends it, then once', async () => {
      const session = await toCart();
      const { order, deliveries: sent } = await session.pay({ fault: { drop: true } });
      expect(sent.map((d) => d.state)).toEqual(['dropped']);
      expect(await deliveries.get(order.orderId)).toBeUndefined();
      await sandbox.redeliver(sent[0]!.id);
      const callback = await session.waitForCallback();
      expect(callback.serviceStatus).toBe('success');
      expect(await deliveries.get(order.orderId)).toBeDefined();
    });

    it('forged fulfillment request (no session of this app): refused 404, nothing delivered, no callback', async () => {
      const session = await toCart();
      const { order, deliveries: sent } = await session.pay({ fault: { forge: true } });
      const forged = sent[0]!.body as { OrderId: string; SessionId: string };
      expect(forged.OrderId).not.toBe(order.orderId);
      expect(sent[0]).toMatchObject({ state: 'failed', statusCode: 404 });
      expect(await deliveries.get(forged.OrderId)).toBeUndefined();
      expect(await deliveries.get(order.orderId)).toBeUndefined();
      await sandbox.settled();
      expect(sandbox.fulfillmentCallbacks()).toEqual([]);
    });
  });
});
