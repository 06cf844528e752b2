import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HubtelApiError, HubtelNetworkError, HubtelTimeoutError, HubtelValidationError } from 'nestjs-hubtel';
import { HubtelSandbox } from './sandbox.server.js';
import { SandboxStateError } from './sandbox.errors.js';
import { call } from './__tests__/sandbox.test-helpers.js';

/**
 * A hand-written service application for the contract's use case (buy a data bundle for a
 * phone number), on node:http. It calls back the platform on fulfillment.
 */
interface TinyServiceApp {
  url: string;
  flowRequests: any[];
  fulfillmentRequests: { headers: http.IncomingHttpHeaders; body: any }[];
  /** Tweak an answer before it is sent (contract-breaking tests). */
  mutate?: (answer: Record<string, unknown>) => Record<string, unknown>;
  status?: number;
  delayMs?: number;
  callbackTo?: string;
  close(): Promise<void>;
}

async function startServiceApp(prefix = ''): Promise<TinyServiceApp> {
  const sessions = new Map<string, { step: number; destination?: string }>();
  const app: TinyServiceApp = {
    url: '',
    flowRequests: [],
    fulfillmentRequests: [],
    close: async () => undefined,
  };
  const prompt = (sessionId: string, fields: Record<string, unknown>) => ({
    SessionId: sessionId,
    Type: 'Response',
    Message: '',
    Mask: null,
    MaskNextRoute: null,
    Item: null,
    ServiceCode: null,
    Label: null,
    DataType: 'input',
    FieldType: 'text',
    FieldName: null,
    ClientState: null,
    Data: null,
    ...fields,
  });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      const reply = (status: number, json: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (app.delayMs) {
        // Stop waiting when the caller hangs up, so no timer outlives the test.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, app.delayMs);
          res.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        if (res.destroyed) return;
      }
      if (app.status) return reply(app.status, { error: 'down' });
      if (req.url === `${prefix}/api/service-flow`) {
        app.flowRequests.push(body);
        const id = body.SessionId as string;
        let answer: Record<string, unknown>;
        if (String(body.Type).toLowerCase() === 'initiation') {
          sessions.set(id, { step: 1 });
          answer = prompt(id, {
            Message: 'Enter the number to top up',
            Label: 'Phone number',
            DataType: 'input',
            FieldType: 'phone',
            FieldName: 'destination',
          });
        } else if (String(body.Type).toLowerCase() === 'release') {
          sessions.delete(id);
          answer = prompt(id, { Type: 'Release', Message: 'Goodbye' });
        } else {
          const s = sessions.get(id)!;
          if (s.step === 1) {
            s.destination = body.Message;
            s.step = 2;
            answer = prompt(id, {
              Message: 'Choose a bundle',
              Label: 'Bundle',
              DataType: 'select',
              FieldType: 'text',
              FieldName: '',
              Data: [
                { Display: '1GB - GHS 5', Value: '1gb', Amount: 5 },
                { Display: '5GB - GHS 20', Value: '5gb', Amount: 20 },
              ],
            });
          } else {
            const amount = body.Message === '5gb' ? 20 : 5;
            answer = prompt(id, {
              Type: 'AddToCart',
              Message: 'Pay to receive your bundle',
              Item: {
                ItemName: `${body.Message} data bundle`,
                Qty: 1,
                Price: amount,
                ServiceData: { destination: s.destination, amount: amount.toFixed(2), bundle: body.Message },
              },
              DataType: 'display',
              FieldType: 'text',
              FieldName: null,
              Data: [],
            });
          }
        }
        return reply(200, app.mutate ? app.mutate(answer) : answer);
      }
      if (req.url === `${prefix}/api/fulfillment`) {
        app.fulfillmentRequests.push({ headers: req.headers, body });
        reply(200, { received: true });
        if (app.callbackTo) {
          // Deliver the goods, then tell the platform (after answering, as a real app would).
          await fetch(`${app.callbackTo}/callback`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
            body: JSON.stringify({
              SessionId: body.SessionId,
              OrderId: body.OrderId,
              ServiceStatus: 'success',
              MetaData: null,
            }),
          });
        }
        return;
      }
      reply(404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  app.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  app.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return app;
}

describe('HubtelSandbox programmable-services driver and /callback', () => {
  let sandbox: HubtelSandbox;
  let app: TinyServiceApp;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    app = await startServiceApp();
    app.callbackTo = sandbox.baseUrls().fulfillmentCallback;
  });
  afterEach(async () => {
    await sandbox.settled();
    sandbox.reset();
    app.flowRequests.length = 0;
    app.fulfillmentRequests.length = 0;
    app.mutate = undefined;
    app.status = undefined;
    app.delayMs = undefined;
  });
  afterAll(async () => {
    await sandbox.stop();
    await app.close();
  });

  it('plays the whole use case: initiation → input → select → AddToCart → pay → fulfillment → callback', async () => {
    const session = sandbox.serviceApp(app.url, {
      serviceCode: '713',
      mobile: '233241234567',
      operator: 'mtn',
    });

    const first = await session.start();
    expect(first).toMatchObject({
      SessionId: session.sessionId,
      Type: 'Response',
      DataType: 'input',
      FieldType: 'phone',
      Data: null,
    });
    const second = await session.reply('0201234567');
    expect(second).toMatchObject({ DataType: 'select' });
    const third = await session.choose('5gb');
    expect(third).toMatchObject({ Type: 'AddToCart', DataType: 'display', Data: [] });
    expect(session.cart).toEqual({
      ItemName: '5gb data bundle',
      Qty: 1,
      Price: 20,
      ServiceData: { destination: '0201234567', amount: '20.00', bundle: '5gb' },
    });

    // What the service app received, to the letter of the contract.
    expect(app.flowRequests[0]).toEqual({
      Sequence: '1',
      Type: 'initiation',
      Message: '',
      ServiceCode: '713',
      Operator: 'mtn',
      ClientState: '',
      Mobile: '233241234567',
      SessionId: session.sessionId,
    });
    expect(app.flowRequests[1]).toEqual({
      Type: 'Response',
      Message: '0201234567',
      ServiceCode: '713',
      Operator: 'mtn',
      ClientState: '',
      Mobile: '233241234567',
      SessionId: session.sessionId,
    });
    expect(app.flowRequests[2]).toMatchObject({ Type: 'Response', Message: '5gb' });
    expect('Sequence' in app.flowRequests[2]).toBe(false);

    const callbackArrives = session.waitForCallback();
    const { order, deliveries } = await session.pay();
    expect(order).toMatchObject({ amount: 20, outcome: 'paid' });
    expect(deliveries[0]).toMatchObject({
      kind: 'fulfillment-request',
      state: 'delivered',
      statusCode: 200,
      url: `${app.url}/api/fulfillment`,
    });
    expect(app.fulfillmentRequests).toHaveLength(1);
    expect(app.fulfillmentRequests[0]!.headers['content-type']).toBe('application/json');
    expect(app.fulfillmentRequests[0]!.body).toEqual({
      OrderId: order.orderId,
      SessionId: session.sessionId,
      ExtraData: {},
      OrderInfo: null,
    });

    const callback = await callbackArrives;
    expect(callback).toMatchObject({
      sessionId: session.sessionId,
      orderId: order.orderId,
      serviceStatus: 'success',
      metaData: null,
      matched: true,
    });
    expect(sandbox.fulfillmentCallbacks()).toHaveLength(1);
    expect(sandbox.session(session.sessionId)).toMatchObject({
      state: 'fulfilled',
      order: { isFulfilled: true, serviceStatus: 'success' },
    });
    expect(sandbox.session(session.sessionId)!.exchanges).toHaveLength(3);

    // The status check answers for the order with SessionId as clientReference.
    const status = await call(
      sandbox,
      'GET',
      `/transactions/${sandbox.posSalesId}/status?clientReference=${session.sessionId}`,
      { auth: 'api' },
    );
    expect(status.json).toMatchObject({
      responseCode: '0000',
      data: {
        status: 'Paid',
        clientReference: session.sessionId,
        amount: 20,
        isFulfilled: true,
        transactionId: order.transactionId,
      },
    });
  });

  it('sends an OrderInfo in the platform 2026 shape when asked, with the charge where its bearer puts it', async () => {
    const toCart = async () => {
      const session = sandbox.serviceApp(app.url);
      await session.start();
      await session.reply('233241234567');
      await session.choose(1);
      return session;
    };
    const merchantBorne = await toCart();
    await merchantBorne.pay({ orderInfo: true });
    expect(app.fulfillmentRequests[0]!.body.OrderInfo).toEqual({
      CustomerMobileNumber: '233241234567',
      CustomerEmail: null,
      CustomerName: null,
      Status: 'Paid',
      OrderDate: expect.any(String),
      Currency: 'GHS',
      BranchName: expect.any(String),
      IsRecurring: false,
      RecurringInvoiceId: null,
      Subtotal: 5,
      Items: [{ ItemId: expect.any(String), Name: '1gb data bundle', Quantity: 1, UnitPrice: 5 }],
      Payment: {
        PaymentType: 'mobilemoney',
        AmountPaid: 5,
        AmountAfterCharges: 4.95,
        PaymentDate: expect.any(String),
        PaymentDescription: expect.any(String),
        IsSuccessful: true,
      },
    });
    // Payer-borne (Hubtel's sample: Subtotal and AmountPaid include the charge, AmountAfterCharges is the price).
    const payerBorne = await toCart();
    await payerBorne.pay({ orderInfo: true, chargeBearer: 'payer' });
    expect(app.fulfillmentRequests[1]!.body.OrderInfo).toMatchObject({
      Subtotal: 5.05,
      Payment: { AmountPaid: 5.05, AmountAfterCharges: 5 },
    });
    const status = await call(
      sandbox,
      'GET',
      `/transactions/${sandbox.posSalesId}/status?clientReference=${payerBorne.sessionId}`,
      { auth: 'api' },
    );
    expect(status.json.data).toMatchObject({
      amount: 5.05,
      charges: 0.05,
      amountAfterCharges: 5,
      currencyCode: 'GHS',
    });
  });

  it('records payments where the status check finds them: late (recordPayment), of another amount, forged (none), or by SessionId alone', async () => {
    const status = async (sessionId: string) =>
      call(sandbox, 'GET', `/transactions/${sandbox.posSalesId}/status?clientReference=${sessionId}`, {
        auth: 'api',
      });
    const toCart = async () => {
      const session = sandbox.serviceApp(app.url);
      await session.start();
      await session.reply('233241234567');
      await session.choose('1GB - GHS 5');
      return session;
    };

    // Forged: the request goes out, the status check knows no transaction, the session stays unpaid.
    const forged = await toCart();
    const [delivery] = await forged.forgeFulfillment({ orderId: 'forged-1' });
    expect(delivery).toMatchObject({ kind: 'fulfillment-request', state: 'delivered' });
    expect(app.fulfillmentRequests.at(-1)!.body).toEqual({
      OrderId: 'forged-1',
      SessionId: forged.sessionId,
      ExtraData: {},
      OrderInfo: null,
    });
    expect((await status(forged.sessionId)).status).toBe(404);
    expect(forged.record.state).toBe('cart');

    // Late: unknown to the status check until recordPayment().
    const late = await toCart();
    await late.pay({ recordPayment: false });
    expect((await status(late.sessionId)).status).toBe(404);
    late.recordPayment();
    expect((await status(late.sessionId)).json.data).toMatchObject({
      status: 'Paid',
      clientReference: late.sessionId,
      amount: 5,
      currencyCode: 'GHS',
    });

    // Another amount than the cart's.
    const cheap = await toCart();
    await cheap.pay({ amount: 0.5 });
    expect((await status(cheap.sessionId)).json.data).toMatchObject({ status: 'Paid', amount: 0.5 });

    // By SessionId alone (the admin API): the cart's total for a session the sandbox drove, or the amount given.
    const admin = await toCart();
    const recorded = await call(sandbox, 'POST', `/_sandbox/sessions/${admin.sessionId}/pay`, {
      body: { orderId: 'o-admin' },
    });
    expect(recorded.status).toBe(200);
    expect(recorded.json).toMatchObject({
      state: 'paid',
      order: { orderId: 'o-admin', amount: 5, recorded: true },
    });
    expect((await status(admin.sessionId)).json.data).toMatchObject({ status: 'Paid', amount: 5 });
    const elsewhere = await call(sandbox, 'POST', '/_sandbox/sessions/driven-elsewhere/pay', {
      body: { amount: 12 },
    });
    expect(elsewhere.status).toBe(200);
    expect((await status('driven-elsewhere')).json.data).toMatchObject({ status: 'Paid', amount: 12 });
    const unknownField = await call(sandbox, 'POST', '/_sandbox/sessions/x/pay', { body: { colour: 'red' } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.json.errors).toEqual([{ field: 'colour', message: expect.any(String) }]);
    const noAmount = await call(sandbox, 'POST', '/_sandbox/sessions/unknown-one/pay', { body: {} });
    expect(noAmount.status).toBe(400);
    expect(noAmount.json.errors).toEqual([{ field: 'amount', message: expect.stringContaining('no cart') }]);
  });

  it('a failed payment sends no fulfillment request and the status check says Unpaid', async () => {
    const session = sandbox.serviceApp(app.url);
    await session.start();
    await session.reply('233241234567');
    await session.choose('1GB - GHS 5');
    const { deliveries } = await session.pay({ outcome: 'failed' });
    expect(deliveries).toEqual([]);
    expect(app.fulfillmentRequests).toEqual([]);
    expect(session.record.state).toBe('payment-failed');
    const status = await call(
      sandbox,
      'GET',
      `/transactions/${sandbox.posSalesId}/status?clientReference=${session.sessionId}`,
      { auth: 'api' },
    );
    expect(status.json.data.status).toBe('Unpaid');
  });

  it('applies callback faults to fulfillment requests (duplicate)', async () => {
    const session = sandbox.serviceApp(app.url);
    await session.start();
    await session.reply('233241234567');
    await session.choose('5gb');
    sandbox.faults.addCallback({ match: { kind: 'fulfillment-request' }, duplicate: 2, times: 1 });
    await session.pay();
    expect(app.fulfillmentRequests).toHaveLength(2);
    expect(app.fulfillmentRequests[0]!.body).toEqual(app.fulfillmentRequests[1]!.body);
  });

  it('rejects an answer that breaks the contract (strict), or records the issues (lenient)', async () => {
    app.mutate = ({ Mask: _mask, ...rest }) => ({ ...rest, SessionId: 'other' });
    const strict = sandbox.serviceApp(app.url);
    const error = await strict.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubtelValidationError);
    expect((error as HubtelValidationError).message).toMatch(/Mask is missing/);
    expect((error as HubtelValidationError).message).toMatch(/does not echo/);

    const lenient = sandbox.serviceApp(app.url, { strict: false });
    await lenient.start();
    expect(lenient.record.exchanges[0]!.issues).toEqual(
      expect.arrayContaining([expect.stringMatching(/Mask is missing/)]),
    );
  });

  it('reports the service application failing, unreachable or too slow with typed errors', async () => {
    app.status = 500;
    const failing = sandbox.serviceApp(app.url);
    await expect(failing.start()).rejects.toMatchObject({ constructor: HubtelApiError, httpStatus: 500 });
    app.status = undefined;

    await expect(sandbox.serviceApp('http://127.0.0.1:1').start()).rejects.toBeInstanceOf(HubtelNetworkError);

    app.delayMs = 1_000;
    await expect(sandbox.serviceApp(app.url, { timeoutMs: 100 }).start()).rejects.toBeInstanceOf(
      HubtelTimeoutError,
    );
  });

  it('guards the session steps and the options with typed errors', async () => {
    const session = sandbox.serviceApp(app.url);
    await expect(session.reply('x')).rejects.toBeInstanceOf(SandboxStateError);
    await session.start();
    await expect(session.pay()).rejects.toBeInstanceOf(SandboxStateError);
    await expect(session.choose('x')).rejects.toBeInstanceOf(HubtelValidationError); // input prompt: no options
    await session.reply('233241234567');
    await expect(session.choose('10gb')).rejects.toThrow(/offered: 1GB - GHS 5 \(1gb\)/);
    expect(() => sandbox.serviceApp('not a url')).toThrow(HubtelValidationError);
    expect(() => sandbox.serviceApp(app.url, { mobile: 'abc' })).toThrow(HubtelValidationError);
  });

  it('releases a session with Type Release and sends extra fields when told', async () => {
    const session = sandbox.serviceApp(app.url, { extraFields: { Platform: 'USSD' } });
    await session.start();
    expect(app.flowRequests[0]).toMatchObject({ Platform: 'USSD', Type: 'initiation' });
    await session.release();
    expect(app.flowRequests[1]).toMatchObject({ Type: 'Release', Platform: 'USSD' });
    expect(session.record.state).toBe('released');
    await expect(session.reply('x')).rejects.toBeInstanceOf(SandboxStateError);
  });

  it('talks to a service application mounted under a path prefix', async () => {
    const prefixed = await startServiceApp('/hubtel');
    try {
      const session = sandbox.serviceApp(prefixed.url);
      await session.start();
      expect(prefixed.flowRequests).toHaveLength(1);
    } finally {
      await prefixed.close();
    }
  });

  it('emits session events as the session moves', async () => {
    const states: string[] = [];
    const listener = (s: { state: string }) => states.push(s.state);
    sandbox.on('session', listener);
    const session = sandbox.serviceApp(app.url);
    await session.start();
    await session.reply('233241234567');
    await session.choose('5gb');
    sandbox.off('session', listener);
    expect(states).toEqual(['active', 'active', 'cart']);
  });

  describe('POST /callback', () => {
    it('answers 400 (4000) to a callback without its ids, and records nothing', async () => {
      const res = await call(sandbox, 'POST', '/callback', {
        body: { SessionId: 's', ServiceStatus: 'success' },
      });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({
        message: 'Validation error',
        responseCode: '4000',
        data: [{ field: 'OrderId', message: 'OrderId is required' }],
      });
      expect((await call(sandbox, 'POST', '/callback', { raw: 'nope' })).status).toBe(400);
      expect(
        await call(sandbox, 'POST', '/callback', { body: [{ SessionId: 's', OrderId: 'o' }] }),
      ).toMatchObject({ status: 400, json: { responseCode: '4000', data: [{ field: 'body' }] } });
      expect(sandbox.fulfillmentCallbacks()).toEqual([]);
    });

    it('accepts a callback for an unknown order, recorded as not matched', async () => {
      const waiting = sandbox.waitForFulfillmentCallback((cb) => cb.orderId === 'o-1');
      const res = await call(sandbox, 'POST', '/callback', {
        body: { SessionId: 's-1', OrderId: 'o-1', ServiceStatus: 'failed', MetaData: { why: 'x' } },
      });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ message: 'Callback received', responseCode: '0000', data: null });
      expect(await waiting).toMatchObject({
        matched: false,
        serviceStatus: 'failed',
        metaData: { why: 'x' },
      });
    });
  });
});
