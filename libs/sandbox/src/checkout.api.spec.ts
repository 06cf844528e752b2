import { HubtelSandbox } from './sandbox.server.js';
import { SandboxNotFoundError, SandboxStateError } from './sandbox.errors.js';
import { call, checkoutRequest, startReceiver, type Receiver } from './__tests__/sandbox.test-helpers.js';

describe('HubtelSandbox checkout, payment page and status check (over HTTP)', () => {
  let sandbox: HubtelSandbox;
  let merchant: Receiver;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start({ checkout: { merchantName: 'Data Shop' } });
    merchant = await startReceiver();
  });
  afterEach(() => {
    sandbox.reset();
    merchant.requests.length = 0;
    merchant.respond = () => ({ status: 200, body: { ok: true } });
  });
  afterAll(async () => {
    await sandbox.stop();
    await merchant.close();
  });

  const initiate = (body: unknown, auth: 'api' | 'sms' | 'none' = 'api') =>
    call(sandbox, 'POST', '/items/initiate', { body, auth, headers: { 'Cache-Control': 'no-cache' } });
  const status = (query: string, auth: 'api' | 'sms' | 'none' = 'api', pos = sandbox.posSalesId) =>
    call(sandbox, 'GET', `/transactions/${pos}/status?${query}`, { auth });
  const form = (path: string, fields: Record<string, string> = {}) =>
    fetch(`${sandbox.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });

  describe('POST /items/initiate', () => {
    it('answers the contract envelope exactly, with URLs to the sandbox payment page', async () => {
      const req = checkoutRequest(merchant, {
        PayeeName: 'Ama',
        PayeeMobileNumber: '233241234567',
        PayeeEmail: 'ama@example.com',
      });
      const res = await initiate(req);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        responseCode: '0000',
        status: 'Success',
        data: {
          checkoutUrl: expect.stringMatching(new RegExp(`^${sandbox.url}/pay/[0-9a-f]{32}$`)),
          checkoutId: expect.stringMatching(/^[0-9a-f]{32}$/),
          clientReference: req.clientReference,
          checkoutDirectUrl: expect.stringMatching(new RegExp(`^${sandbox.url}/pay/[0-9a-f]{32}/direct$`)),
          message: '',
        },
      });
      expect(res.json.data.checkoutUrl).toBe(`${sandbox.url}/pay/${res.json.data.checkoutId}`);
      const invoice = sandbox.invoice(req.clientReference as string)!;
      expect(invoice).toMatchObject({
        state: 'pending',
        totalAmount: 12.5,
        payeeName: 'Ama',
        payeeEmail: 'ama@example.com',
        merchantAccountNumber: '2000000',
      });
      expect(sandbox.invoice(res.json.data.checkoutId)).toBe(invoice);
    });

    it('accepts a request without the optional fields', async () => {
      const { merchantAccountNumber: _m, ...req } = checkoutRequest(merchant);
      expect((await initiate(req)).status).toBe(200);
    });

    it('answers 401 / 4101 to wrong keys, including the SMS pair', async () => {
      for (const auth of ['none', 'sms'] as const) {
        const res = await initiate(checkoutRequest(merchant), auth);
        expect(res.status).toBe(401);
        expect(res.json).toEqual({
          responseCode: '4101',
          status: 'Error',
          message: expect.any(String),
          data: null,
        });
      }
      expect(sandbox.invoices()).toEqual([]);
    });

    it('answers 403 / 4101 when merchantAccountNumber is not the sandbox POS Sales ID', async () => {
      const res = await initiate(checkoutRequest(merchant, { merchantAccountNumber: '999' }));
      expect(res.status).toBe(403);
      expect(res.json.responseCode).toBe('4101');
    });

    it.each([
      ['totalAmount 0', { totalAmount: 0 }, 'totalAmount'],
      ['a negative totalAmount', { totalAmount: -5 }, 'totalAmount'],
      ['totalAmount as a string', { totalAmount: '12.50' }, 'totalAmount'],
      ['no description', { description: '' }, 'description'],
      ['a relative callbackUrl', { callbackUrl: '/callback' }, 'callbackUrl'],
      ['no returnUrl', { returnUrl: undefined }, 'returnUrl'],
      ['an ftp cancellationUrl', { cancellationUrl: 'ftp://x/y' }, 'cancellationUrl'],
      ['an empty clientReference', { clientReference: '' }, 'clientReference'],
      ['a 33-character clientReference', { clientReference: 'x'.repeat(33) }, 'clientReference'],
      ['a bad PayeeMobileNumber', { PayeeMobileNumber: 'abc' }, 'PayeeMobileNumber'],
      ['field names in the wrong case', { totalAmount: undefined, TotalAmount: 10 }, 'totalAmount'],
    ])('answers 400 / 4000 to %s', async (_name, overrides, field) => {
      const res = await initiate(checkoutRequest(merchant, overrides));
      expect(res.status).toBe(400);
      expect(res.json).toEqual({
        responseCode: '4000',
        status: 'Error',
        message: 'Validation error',
        data: expect.arrayContaining([{ field, message: expect.any(String) }]),
      });
      expect(sandbox.invoices()).toEqual([]);
    });

    it('accepts exactly 32 characters and refuses a reused clientReference', async () => {
      const req = checkoutRequest(merchant, { clientReference: 'r'.repeat(32) });
      expect((await initiate(req)).status).toBe(200);
      const again = await initiate(req);
      expect(again.status).toBe(400);
      expect(again.json.data).toEqual([
        { field: 'clientReference', message: 'clientReference has already been used' },
      ]);
    });

    it('answers 400 / 4000 to invalid JSON and to a body that is not an object', async () => {
      const res = await call(sandbox, 'POST', '/items/initiate', { raw: '{nope', auth: 'api' });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ responseCode: '4000', status: 'Error' });
      for (const body of [[checkoutRequest(merchant)], 'text', null]) {
        const notObject = await initiate(body);
        expect(notObject.status).toBe(400);
        expect(notObject.json).toEqual({
          responseCode: '4000',
          status: 'Error',
          message: 'Request body must be a JSON object',
          data: [{ field: 'body', message: 'must be a JSON object' }],
        });
      }
      expect(sandbox.invoices()).toEqual([]);
    });

    it('answers 4070 below the configured minimum amount', async () => {
      const strict = await HubtelSandbox.start({ checkout: { minAmount: 1 } });
      try {
        const res = await call(strict, 'POST', '/items/initiate', {
          body: checkoutRequest(merchant, { totalAmount: 0.5 }),
          auth: 'api',
        });
        expect(res.status).toBe(400);
        expect(res.json.responseCode).toBe('4070');
      } finally {
        await strict.stop();
      }
    });
  });

  describe('the hosted payment page', () => {
    it('shows amount, description and merchant, with the stable buttons, under a strict CSP', async () => {
      const { json } = await initiate(checkoutRequest(merchant, { description: 'Bundle <b>5GB</b>' }));
      const res = await fetch(json.data.checkoutUrl);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await res.text();
      for (const id of ['pay-momo', 'pay-fail', 'cancel', 'momo-number', 'momo-channel']) {
        expect(html).toContain(`id="${id}" data-testid="${id}"`);
      }
      expect(html).toContain('GHS 12.50');
      expect(html).toContain('Data Shop');
      expect(html).toContain('Bundle &lt;b&gt;5GB&lt;/b&gt;'); // escaped, never markup
      expect(html).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)/);
      const direct = await fetch(json.data.checkoutDirectUrl);
      expect(direct.status).toBe(200);
      expect(await direct.text()).toContain('data-testid="pay-momo"');
    });

    it('answers 404 (HTML) for an unknown checkout', async () => {
      const res = await fetch(`${sandbox.url}/pay/ffffffffffffffffffffffffffffffff`);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('data-testid="error"');
    });

    it('pay by mobile money: POSTs the contract web callback to callbackUrl, then 303 to returnUrl', async () => {
      const req = checkoutRequest(merchant);
      const { json } = await initiate(req);
      const res = await form(`/pay/${json.data.checkoutId}/momo`, { phone: '0241234567', channel: 'mtn-gh' });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(req.returnUrl);
      // The callback was answered before the redirect.
      expect(merchant.requests).toHaveLength(1);
      const cb = merchant.requests[0]!;
      expect(cb.method).toBe('POST');
      expect(cb.url).toBe('/hubtel/checkout/callback');
      expect(cb.headers['content-type']).toBe('application/json');
      expect(cb.headers['cache-control']).toBe('no-cache');
      const invoice = sandbox.invoice(json.data.checkoutId)!;
      expect(cb.body).toEqual({
        ResponseCode: '0000',
        Status: 'Success',
        Data: {
          CheckoutId: json.data.checkoutId,
          SalesInvoiceId: invoice.salesInvoiceId,
          ClientReference: req.clientReference,
          Status: 'Success',
          Amount: 12.5,
          CustomerPhoneNumber: '233241234567',
          PaymentDetails: {
            MobileMoneyNumber: '233241234567',
            PaymentType: 'mobilemoney',
            Channel: 'mtn-gh',
          },
          Description: expect.any(String),
        },
      });
      expect(invoice.state).toBe('paid');
      const [delivery] = sandbox.deliveries({ clientReference: req.clientReference as string });
      expect(delivery).toMatchObject({
        kind: 'checkout-callback',
        state: 'delivered',
        statusCode: 200,
        url: req.callbackUrl,
        error: null,
      });
      expect(delivery!.durationMs).toEqual(expect.any(Number));

      // A paid invoice's page says so and offers no buttons; paying again is refused.
      const page = await (await fetch(json.data.checkoutUrl)).text();
      expect(page).toContain('data-state="paid"');
      expect(page).not.toContain('data-testid="pay-momo"');
      expect((await form(`/pay/${json.data.checkoutId}/momo`, { phone: '0241234567' })).status).toBe(409);
      expect(merchant.requests).toHaveLength(1);
    });

    it('fail: POSTs a 2001 / Failed callback and redirects to returnUrl; the payer may then pay', async () => {
      const req = checkoutRequest(merchant);
      const { json } = await initiate(req);
      const res = await form(`/pay/${json.data.checkoutId}/fail`, { phone: '0201234567' });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(req.returnUrl);
      expect(merchant.requests[0]!.body).toMatchObject({
        ResponseCode: '2001',
        Status: 'Failed',
        Data: {
          Status: 'Failed',
          ClientReference: req.clientReference,
          PaymentDetails: { Channel: 'vodafone-gh' },
        },
      });
      expect(sandbox.invoice(json.data.checkoutId)!.state).toBe('failed');
      expect((await form(`/pay/${json.data.checkoutId}/momo`, { phone: '0241234567' })).status).toBe(303);
      expect(sandbox.invoice(json.data.checkoutId)!.state).toBe('paid');
    });

    it('cancel: no callback, 303 to cancellationUrl', async () => {
      const req = checkoutRequest(merchant);
      const { json } = await initiate(req);
      const res = await form(`/pay/${json.data.checkoutId}/cancel`);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(req.cancellationUrl);
      await sandbox.settled();
      expect(merchant.requests).toEqual([]);
      expect(sandbox.invoice(json.data.checkoutId)!.state).toBe('cancelled');
    });

    it('re-renders the page with an error (400) for a bad mobile money number, sending nothing', async () => {
      const { json } = await initiate(checkoutRequest(merchant));
      const res = await form(`/pay/${json.data.checkoutId}/momo`, { phone: 'abc' });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('data-testid="error"');
      expect(merchant.requests).toEqual([]);
      expect(sandbox.invoice(json.data.checkoutId)!.state).toBe('pending');
    });

    it('fails (2001) payments whose description holds & * ! % @, as the processor does', async () => {
      const { json } = await initiate(checkoutRequest(merchant, { description: 'Fish & chips' }));
      expect(await (await fetch(json.data.checkoutUrl)).text()).toContain('warn-special-characters');
      await form(`/pay/${json.data.checkoutId}/momo`, { phone: '0241234567' });
      expect(merchant.requests[0]!.body).toMatchObject({ ResponseCode: '2001', Status: 'Failed' });
    });

    it('records a callback the merchant refused (500) or could not take (connection refused) as failed', async () => {
      merchant.respond = () => ({ status: 500, body: { error: 'boom' } });
      const { json } = await initiate(checkoutRequest(merchant));
      await form(`/pay/${json.data.checkoutId}/momo`, { phone: '0241234567' });
      expect(sandbox.deliveries()[0]).toMatchObject({
        state: 'failed',
        statusCode: 500,
        error: 'HTTP 500',
        responseBody: '{"error":"boom"}',
      });

      const { json: second } = await initiate(checkoutRequest({ url: 'http://127.0.0.1:1' }));
      const res = await form(`/pay/${second.data.checkoutId}/momo`, { phone: '0241234567' });
      expect(res.status).toBe(303);
      expect(sandbox.deliveries({ checkoutId: second.data.checkoutId })[0]).toMatchObject({
        state: 'failed',
        statusCode: null,
        error: expect.stringContaining('ECONNREFUSED'),
      });
    });
  });

  describe('programmatic payment', () => {
    it('pay() by checkout id or reference sends the callback; cancel() sends none', async () => {
      const a = checkoutRequest(merchant);
      const b = checkoutRequest(merchant);
      const { json: created } = await initiate(a);
      await initiate(b);
      const result = await sandbox.pay(created.data.checkoutId, { phone: '233271234567' });
      expect(result.outcome).toBe('paid');
      expect(result.deliveries[0]).toMatchObject({ state: 'delivered', statusCode: 200 });
      expect(merchant.requests[0]!.body).toMatchObject({
        Data: { CustomerPhoneNumber: '233271234567', PaymentDetails: { Channel: 'tigo-gh' } },
      });
      expect(sandbox.cancel(b.clientReference as string).state).toBe('cancelled');
      expect(merchant.requests).toHaveLength(1);
    });

    it('pay({outcome: "failed"}) sends the 2001 callback', async () => {
      const req = checkoutRequest(merchant);
      await initiate(req);
      const result = await sandbox.pay(req.clientReference as string, { outcome: 'failed' });
      expect(result.outcome).toBe('failed');
      expect(merchant.requests[0]!.body).toMatchObject({ ResponseCode: '2001', Status: 'Failed' });
    });

    it('throws typed errors for unknown invoices and wrong states', async () => {
      await expect(sandbox.pay('nope')).rejects.toBeInstanceOf(SandboxNotFoundError);
      await expect(sandbox.pay('nope')).rejects.toMatchObject({ code: 'HUBTEL_NOT_FOUND' });
      const req = checkoutRequest(merchant);
      await initiate(req);
      sandbox.cancel(req.clientReference as string);
      await expect(sandbox.pay(req.clientReference as string)).rejects.toBeInstanceOf(SandboxStateError);
      expect(() => sandbox.cancel(req.clientReference as string)).toThrow(SandboxStateError);
      await expect(
        sandbox.pay(req.clientReference as string, { outcome: 'maybe' as never }),
      ).rejects.toMatchObject({ code: 'HUBTEL_VALIDATION_FAILED' });
    });

    it('redeliver() re-sends a delivery unchanged and records the new attempt', async () => {
      const req = checkoutRequest(merchant);
      await initiate(req);
      const { deliveries } = await sandbox.pay(req.clientReference as string);
      const again = await sandbox.redeliver(deliveries[0]!.id);
      expect(again).toMatchObject({ redeliveryOf: deliveries[0]!.id, state: 'delivered', statusCode: 200 });
      expect(again.id).not.toBe(deliveries[0]!.id);
      expect(merchant.requests.map((r) => r.rawBody)).toEqual([
        merchant.requests[0]!.rawBody,
        merchant.requests[0]!.rawBody,
      ]);
      await expect(sandbox.redeliver('dlv_unknown')).rejects.toBeInstanceOf(SandboxNotFoundError);
    });

    it('emits invoice and delivery events; waitForDelivery resolves on completion', async () => {
      const events: string[] = [];
      const onInvoice = (i: { state: string }) => events.push(`invoice:${i.state}`);
      const onDelivery = (d: { state: string }) => events.push(`delivery:${d.state}`);
      sandbox.on('invoice', onInvoice);
      sandbox.on('delivery', onDelivery);
      const req = checkoutRequest(merchant);
      await initiate(req);
      const waiting = sandbox.waitForDelivery((d) => d.clientReference === req.clientReference);
      void sandbox.pay(req.clientReference as string);
      expect((await waiting).state).toBe('delivered');
      expect(events).toEqual([
        'invoice:pending',
        'invoice:paid',
        'delivery:sending',
        'delivery:sending',
        'delivery:delivered',
      ]);
      sandbox.off('invoice', onInvoice);
      sandbox.off('delivery', onDelivery);
    });
  });

  describe('GET /transactions/{posSalesId}/status', () => {
    it('answers Unpaid for a pending invoice and Paid after payment, by each reference kind', async () => {
      const req = checkoutRequest(merchant, { totalAmount: 100 });
      await initiate(req);
      const pending = await status(`clientReference=${req.clientReference}`);
      expect(pending.status).toBe(200);
      expect(pending.json).toEqual({
        message: 'Successful',
        responseCode: '0000',
        data: {
          date: expect.any(String),
          status: 'Unpaid',
          transactionId: null,
          externalTransactionId: null,
          paymentMethod: null,
          clientReference: req.clientReference,
          currencyCode: 'GHS',
          amount: 100,
          charges: 0,
          amountAfterCharges: 0,
          isFulfilled: false,
        },
      });

      const { invoice } = await sandbox.pay(req.clientReference as string);
      const paid = await status(`clientReference=${req.clientReference}`);
      expect(paid.json.data).toEqual({
        date: invoice.paidAt,
        status: 'Paid',
        transactionId: invoice.transactionId,
        externalTransactionId: invoice.externalTransactionId,
        paymentMethod: 'mobilemoney',
        clientReference: req.clientReference,
        currencyCode: 'GHS',
        amount: 100,
        charges: 1,
        amountAfterCharges: 99,
        isFulfilled: false,
      });
      expect((await status(`hubtelTransactionId=${invoice.transactionId}`)).json.data.clientReference).toBe(
        req.clientReference,
      );
      expect(
        (await status(`networkTransactionId=${invoice.externalTransactionId}`)).json.data.clientReference,
      ).toBe(req.clientReference);

      sandbox.refund(req.clientReference as string);
      expect((await status(`clientReference=${req.clientReference}`)).json.data.status).toBe('Refunded');
    });

    it('reports the charge where its bearer puts it: deducted (merchant) or added (payer), per account, per payment, in the currency paid', async () => {
      const data = async (ref: string) => (await status(`clientReference=${ref}`)).json.data;
      const merchantBorne = checkoutRequest(merchant, { totalAmount: 100 });
      await initiate(merchantBorne);
      await sandbox.pay(merchantBorne.clientReference as string);
      expect(await data(merchantBorne.clientReference as string)).toMatchObject({
        amount: 100,
        charges: 1,
        amountAfterCharges: 99,
      });

      sandbox.setChargeBearer('payer');
      expect(sandbox.account().chargeBearer).toBe('payer');
      const payerBorne = checkoutRequest(merchant, { totalAmount: 100 });
      await initiate(payerBorne);
      const { invoice } = await sandbox.pay(payerBorne.clientReference as string);
      expect(await data(payerBorne.clientReference as string)).toMatchObject({
        amount: 101,
        charges: 1,
        amountAfterCharges: 100,
      });
      expect(invoice).toMatchObject({ amountPaid: 101, amountAfterCharges: 100, chargeBearer: 'payer' });
      // The callback says what the payer paid.
      expect((merchant.requests.at(-1)!.body as { Data: { Amount: number } }).Data.Amount).toBe(101);

      // One payment may say otherwise: an underpayment in another currency, the merchant bearing it.
      const wrong = checkoutRequest(merchant, { totalAmount: 100 });
      await initiate(wrong);
      await sandbox.pay(wrong.clientReference as string, {
        amount: 50,
        currency: 'USD',
        chargeBearer: 'merchant',
      });
      expect(await data(wrong.clientReference as string)).toMatchObject({
        amount: 50,
        charges: 0.5,
        amountAfterCharges: 49.5,
        currencyCode: 'USD',
      });
      sandbox.setChargeBearer('merchant');
      expect(() => sandbox.setChargeBearer('nobody' as never)).toThrow(/merchant/);
      await expect(sandbox.pay(wrong.clientReference as string, { currency: 'cedi' })).rejects.toThrow(
        /currency/,
      );
    });

    it('answers Unpaid after a failed payment and after a cancel', async () => {
      const failed = checkoutRequest(merchant);
      const cancelled = checkoutRequest(merchant);
      await initiate(failed);
      await initiate(cancelled);
      await sandbox.pay(failed.clientReference as string, { outcome: 'failed' });
      sandbox.cancel(cancelled.clientReference as string);
      expect((await status(`clientReference=${failed.clientReference}`)).json.data.status).toBe('Unpaid');
      expect((await status(`clientReference=${cancelled.clientReference}`)).json.data.status).toBe('Unpaid');
    });

    it('answers 404 to an unknown reference, 400 to none, 401 to wrong keys, 403 to another POS Sales ID', async () => {
      expect(await status('clientReference=unknown')).toMatchObject({
        status: 404,
        json: { message: 'Transaction not found', responseCode: '404', data: null },
      });
      expect(await status('')).toMatchObject({ status: 400, json: { responseCode: '4000' } });
      expect(await status('clientReference=x', 'sms')).toMatchObject({
        status: 401,
        json: { responseCode: '4101', data: null },
      });
      expect(await status('clientReference=x', 'api', '123')).toMatchObject({
        status: 403,
        json: { responseCode: '4101' },
      });
    });
  });
});
