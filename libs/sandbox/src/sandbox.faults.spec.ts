import { HubtelValidationError } from 'nestjs-hubtel';
import { HubtelSandbox } from './sandbox.server.js';
import { call, checkoutRequest, startReceiver, type Receiver } from './__tests__/sandbox.test-helpers.js';

const sms = { From: 'Shop', Recipients: ['233241234567'], Content: 'hi' };

describe('HubtelSandbox fault injection', () => {
  let sandbox: HubtelSandbox;
  let merchant: Receiver;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    merchant = await startReceiver();
  });
  afterEach(async () => {
    await sandbox.settled();
    sandbox.reset();
    merchant.requests.length = 0;
    merchant.respond = () => ({ status: 200, body: { ok: true } });
  });
  afterAll(async () => {
    await sandbox.stop();
    await merchant.close();
  });

  const send = () => call(sandbox, 'POST', '/v1/messages/batch/simple/send', { body: sms, auth: 'sms' });
  const newInvoice = async (overrides: Record<string, unknown> = {}) => {
    const req = checkoutRequest(merchant, overrides);
    const res = await call(sandbox, 'POST', '/items/initiate', { body: req, auth: 'api' });
    expect(res.status).toBe(200);
    return { ref: req.clientReference as string, checkoutId: res.json.data.checkoutId as string, req };
  };

  describe('on requests the sandbox receives', () => {
    it('status: answers the 5xx in the API error shape, for the next N requests only', async () => {
      const fault = sandbox.faults.add({ match: { api: 'sms' }, status: 503, times: 2 });
      const first = await send();
      expect(first.status).toBe(503);
      expect(first.json).toEqual({ status: 503, message: 'The request failed on the server.' });
      expect((await send()).status).toBe(503);
      expect((await send()).status).toBe(200);
      expect(fault.hits).toBe(2);
      expect(fault.remaining).toBe(0);
      // The faulted requests did nothing.
      expect(sandbox.messages()).toHaveLength(1);
      expect(sandbox.requests().map((r) => [r.statusCode, r.faultId])).toEqual([
        [503, fault.id],
        [503, fault.id],
        [200, null],
      ]);
    });

    it('status with a custom body (JSON or text), and the checkout error shape by default', async () => {
      sandbox.faults.add({ match: { path: '/items/initiate' }, status: 500, times: 1 });
      const shaped = await call(sandbox, 'POST', '/items/initiate', {
        body: checkoutRequest(merchant),
        auth: 'api',
      });
      expect(shaped.status).toBe(500);
      expect(shaped.json).toEqual({
        responseCode: '500',
        status: 'Error',
        message: 'The request failed on the server.',
        data: null,
      });

      sandbox.faults.add({ match: { api: 'sms' }, status: 502, body: 'Bad Gateway', times: 1 });
      const text = await send();
      expect(text.status).toBe(502);
      expect(text.text).toBe('Bad Gateway');
      sandbox.faults.add({
        match: { api: 'sms' },
        status: 402,
        body: { status: 402, message: 'no credit' },
        times: 1,
      });
      expect(await send()).toMatchObject({ status: 402, json: { status: 402, message: 'no credit' } });
    });

    it('html: answers a 403 HTML page (the allow-list gateway), not JSON', async () => {
      sandbox.faults.add({ match: { api: 'status' }, html: true, times: 1 });
      const res = await call(sandbox, 'GET', `/transactions/${sandbox.posSalesId}/status?clientReference=x`, {
        auth: 'api',
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.text).toContain('<h1>403 Forbidden</h1>');
      expect(res.json).toBeUndefined();
    });

    it('delayMs: answers normally, later', async () => {
      sandbox.faults.add({ match: { method: 'POST', path: /batch/ }, delayMs: 200, times: 1 });
      const started = Date.now();
      const res = await send();
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(sandbox.messages()).toHaveLength(1);
    });

    it('timeout: never answers; the client gives up and nothing was processed', async () => {
      sandbox.faults.add({ match: { api: 'sms' }, timeout: true, times: 1 });
      await expect(
        fetch(`${sandbox.url}/v1/messages/batch/simple/send`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Authorization: `Basic ${Buffer.from('sandbox-sms:sandbox-sms-secret').toString('base64')}`,
          },
          body: JSON.stringify(sms),
          signal: AbortSignal.timeout(300),
        }),
      ).rejects.toThrow();
      expect(sandbox.messages()).toEqual([]);
      expect((await send()).status).toBe(200);
    });

    it('dropConnection: the connection closes without an answer', async () => {
      sandbox.faults.add({ match: { api: 'sms' }, dropConnection: true, times: 1 });
      await expect(send()).rejects.toThrow(/fetch failed/);
      expect(sandbox.messages()).toEqual([]);
    });

    it('processRequest: the request takes effect, then the answer is lost (the unknown-outcome case)', async () => {
      sandbox.faults.add({ match: { api: 'sms' }, dropConnection: true, processRequest: true, times: 1 });
      await expect(send()).rejects.toThrow();
      expect(sandbox.messages()).toHaveLength(1);

      sandbox.faults.add({ match: { api: 'checkout' }, status: 504, processRequest: true, times: 1 });
      const req = checkoutRequest(merchant);
      expect((await call(sandbox, 'POST', '/items/initiate', { body: req, auth: 'api' })).status).toBe(504);
      expect(sandbox.invoice(req.clientReference as string)).toBeDefined();
    });

    it('matches by method, path and api; leaves the sandbox admin routes alone unless named', async () => {
      sandbox.faults.add({ status: 500 });
      sandbox.faults.add({ match: { api: 'admin' }, status: 418, times: 1 });
      expect((await send()).status).toBe(500);
      expect((await call(sandbox, 'GET', '/_sandbox/stats')).status).toBe(418);
      expect((await call(sandbox, 'GET', '/_sandbox/stats')).status).toBe(200);
      sandbox.faults.clear();
      expect((await send()).status).toBe(200);

      const onlyGet = sandbox.faults.add({ match: { method: 'get', path: '/v1/messages/*' }, status: 500 });
      expect((await send()).status).toBe(200);
      expect((await call(sandbox, 'GET', '/v1/messages/x', { auth: 'sms' })).status).toBe(500);
      onlyGet.remove();
      expect((await call(sandbox, 'GET', '/v1/messages/x', { auth: 'sms' })).status).toBe(404);
    });

    it('refuses invalid fault specs with a typed error', () => {
      expect(() => sandbox.faults.add({})).toThrow(HubtelValidationError);
      expect(() => sandbox.faults.add({ status: 700 })).toThrow(/status/);
      expect(() => sandbox.faults.add({ status: 500, times: 0 })).toThrow(/times/);
      expect(() => sandbox.faults.add({ timeout: true, dropConnection: true })).toThrow(/one of/);
      expect(() => sandbox.faults.addCallback({})).toThrow(HubtelValidationError);
      expect(() => sandbox.faults.addCallback({ duplicate: 0 })).toThrow(/duplicate/);
    });
  });

  describe('on callbacks the sandbox sends', () => {
    it('drop: the callback is not sent, recorded as dropped, and can be re-sent', async () => {
      const { ref } = await newInvoice();
      sandbox.faults.addCallback({ drop: true, times: 1 });
      const { deliveries } = await sandbox.pay(ref);
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ state: 'dropped', faults: ['drop'], statusCode: null });
      await sandbox.settled();
      expect(merchant.requests).toEqual([]);
      const resent = await sandbox.redeliver(deliveries[0]!.id);
      expect(resent.state).toBe('delivered');
      expect(merchant.requests).toHaveLength(1);
      expect(merchant.requests[0]!.body).toEqual(deliveries[0]!.body);
    });

    it('duplicate: the same callback N times, one after another', async () => {
      const { ref } = await newInvoice();
      sandbox.faults.addCallback({ match: { clientReference: ref }, duplicate: 3 });
      const { deliveries } = await sandbox.pay(ref);
      expect(deliveries.map((d) => [d.copy, d.copies, d.state])).toEqual([
        [1, 3, 'delivered'],
        [2, 3, 'delivered'],
        [3, 3, 'delivered'],
      ]);
      expect(merchant.requests).toHaveLength(3);
      expect(new Set(merchant.requests.map((r) => r.rawBody)).size).toBe(1);
    });

    it('duplicate + concurrent: the copies are in flight at the same time', async () => {
      const { ref } = await newInvoice();
      const arrivedAt: number[] = [];
      const answeredAt: number[] = [];
      // Answer only once all three arrived: sequential sending would stall here until the wait gives up.
      merchant.respond = async () => {
        arrivedAt.push(Date.now());
        await merchant.waitForCount(3, 5_000).catch(() => undefined);
        answeredAt.push(Date.now());
        return { status: 200 };
      };
      await sandbox.pay(ref, { fault: { duplicate: 3, concurrent: true } });
      expect(merchant.requests).toHaveLength(3);
      expect(Math.max(...arrivedAt)).toBeLessThanOrEqual(Math.min(...answeredAt));
    });

    it('amount: a callback with a wrong amount, while the status check keeps the real one', async () => {
      const { ref } = await newInvoice({ totalAmount: 50 });
      sandbox.faults.addCallback({ amount: (a) => a / 10, times: 1 });
      const { deliveries } = await sandbox.pay(ref);
      expect(deliveries[0]!.faults).toEqual(['amount']);
      expect(merchant.requests[0]!.body).toMatchObject({ Data: { Amount: 5, ClientReference: ref } });
      const status = await call(
        sandbox,
        'GET',
        `/transactions/${sandbox.posSalesId}/status?clientReference=${ref}`,
        { auth: 'api' },
      );
      expect(status.json.data.amount).toBe(50);
    });

    it('checkoutId: a callback naming another checkout', async () => {
      const { ref, checkoutId } = await newInvoice();
      await sandbox.pay(ref, { fault: { checkoutId: true } });
      const data = (merchant.requests[0]!.body as any).Data;
      expect(data.ClientReference).toBe(ref);
      expect(data.CheckoutId).toMatch(/^[0-9a-f]{32}$/);
      expect(data.CheckoutId).not.toBe(checkoutId);
    });

    it('forge: a callback for a reference the merchant never created', async () => {
      const { ref, checkoutId } = await newInvoice();
      await sandbox.pay(ref, { fault: { forge: true } });
      const data = (merchant.requests[0]!.body as any).Data;
      expect(data.ClientReference).toMatch(/^forged-/);
      expect(data.CheckoutId).not.toBe(checkoutId);
      expect(sandbox.invoice(data.ClientReference)).toBeUndefined();
    });

    it('body: any other change', async () => {
      const { ref } = await newInvoice();
      await sandbox.pay(ref, { fault: { body: (b) => ({ ...b, Status: 'Weird' }) } });
      expect(merchant.requests[0]!.body).toMatchObject({ Status: 'Weird', ResponseCode: '0000' });
    });

    it('delayMs: the browser is redirected first, the callback arrives later', async () => {
      const { checkoutId, req } = await newInvoice();
      sandbox.faults.addCallback({ delayMs: 300, times: 1 });
      const res = await fetch(`${sandbox.url}/pay/${checkoutId}/momo`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'phone=0241234567',
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(req.returnUrl);
      expect(merchant.requests).toEqual([]);
      expect(sandbox.deliveries()[0]).toMatchObject({ state: 'scheduled', faults: ['delay'] });
      const delivered = await sandbox.waitForDelivery((d) => d.checkoutId === checkoutId);
      expect(delivered.state).toBe('delivered');
      expect(merchant.requests).toHaveLength(1);
    });

    it('per invoice vs global "next N": only the matching callbacks are hit', async () => {
      const a = await newInvoice();
      const b = await newInvoice();
      sandbox.faults.addCallback({ match: { clientReference: a.ref }, drop: true });
      await sandbox.pay(b.ref);
      await sandbox.pay(a.ref);
      expect(merchant.requests.map((r) => (r.body as any).Data.ClientReference)).toEqual([b.ref]);

      const global = sandbox.faults.addCallback({ drop: true, times: 2 });
      const [c, d, e] = [await newInvoice(), await newInvoice(), await newInvoice()];
      for (const x of [c, d, e]) await sandbox.pay(x.ref);
      expect(global.hits).toBe(2);
      expect(merchant.requests.map((r) => (r.body as any).Data.ClientReference)).toEqual([b.ref, e.ref]);
    });

    it('stop() aborts a callback still waiting for the merchant, recording why', async () => {
      const other = await HubtelSandbox.start();
      const req = checkoutRequest(merchant);
      await call(other, 'POST', '/items/initiate', { body: req, auth: 'api' });
      let arrived!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      merchant.respond = () => {
        arrived();
        return new Promise(() => undefined); // never answers
      };
      const paying = other.pay(req.clientReference as string);
      await arrival;
      await other.stop();
      const { deliveries } = await paying;
      expect(deliveries[0]).toMatchObject({
        state: 'failed',
        error: 'the sandbox stopped before an answer came',
      });
    });

    it('a delayed callback still pending when the sandbox stops is recorded as not sent', async () => {
      const other = await HubtelSandbox.start();
      const req = checkoutRequest(merchant);
      await call(other, 'POST', '/items/initiate', { body: req, auth: 'api' });
      const { deliveries } = await other.pay(req.clientReference as string, { fault: { delayMs: 60_000 } });
      expect(deliveries[0]!.state).toBe('scheduled');
      await other.stop();
      expect(deliveries[0]).toMatchObject({ state: 'failed', error: 'sandbox stopped before sending' });
      expect(merchant.requests).toEqual([]);
    });
  });
});
