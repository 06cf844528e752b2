/**
 * The contract's programmable-services use case, end to end, against the example app: the
 * sandbox's driver plays the platform's client app (session: phone input, bundle select,
 * AddToCart), pays, sends the fulfillment request; the app delivers the bundle once and posts the
 * fulfillment callback, which the sandbox receives with ServiceStatus `success`.
 */
import { EventEmitter2 } from '@nestjs/event-emitter';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { BundleDeliveries } from '../src/bundles/bundle-deliveries.service.js';
import { DATA_BUNDLES } from '../src/bundles/bundle.flow.js';
import { eventually, startExampleInProcess, type InProcessExample } from './support/example-app.harness.js';

describe('example app — data bundles as a programmable service', () => {
  let sandbox: HubtelSandbox;
  let shop: InProcessExample;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    shop = await startExampleInProcess({ sandbox });
  });

  afterAll(async () => {
    await shop?.close();
    await sandbox?.stop();
  });

  beforeEach(() => sandbox.reset());

  it('session (phone input, bundle select, AddToCart), payment, fulfillment, callback received by the platform', async () => {
    const session = sandbox.serviceApp(shop.url, {
      mobile: '233241234567',
      serviceCode: 'data-bundles',
      operator: 'Hubtel-Android',
    });

    // 1. initiation → an input prompt for a phone number
    const phonePrompt = await session.start();
    expect(phonePrompt).toEqual({
      SessionId: session.sessionId,
      Type: 'Response',
      Message: expect.stringContaining('phone number'),
      Mask: null,
      MaskNextRoute: null,
      Item: null,
      ServiceCode: null,
      Label: 'Phone number',
      DataType: 'input',
      FieldType: 'phone',
      FieldName: 'destination',
      ClientState: null,
      Data: null,
    });

    // 2. the number → the bundles, Display / Value / Amount
    const bundlePrompt = await session.reply('050 123 4567');
    expect(bundlePrompt).toMatchObject({
      SessionId: session.sessionId,
      Type: 'Response',
      DataType: 'select',
      FieldName: '',
      Item: null,
    });
    expect(bundlePrompt.Message).toContain('233501234567');
    expect(bundlePrompt.Data).toEqual(
      DATA_BUNDLES.map((b) => ({ Display: b.Display, Value: b.Value, Amount: b.Amount })),
    );

    // 3. a bundle → AddToCart with ServiceData {destination, amount, bundle}
    const cart = await session.choose('DATA_3GB');
    expect(cart).toMatchObject({
      SessionId: session.sessionId,
      Type: 'AddToCart',
      DataType: 'display',
      Data: [],
      FieldName: null,
    });
    expect(cart.Item).toEqual({
      ItemName: '3GB data bundle for 233501234567',
      Qty: 1,
      Price: 12,
      ServiceData: { destination: '233501234567', amount: '12.00', bundle: 'DATA_3GB' },
    });

    // The calls the platform made: Sequence only on the initiation, the same SessionId throughout.
    const requests = session.record.exchanges.map((e) => e.request);
    expect(requests.map((r) => [r.Type, r.Message, 'Sequence' in r])).toEqual([
      ['initiation', '', true],
      ['Response', '050 123 4567', false],
      ['Response', 'DATA_3GB', false],
    ]);
    expect(new Set(requests.map((r) => r.SessionId))).toEqual(new Set([session.sessionId]));
    expect(session.record.exchanges.every((e) => e.statusCode === 200 && e.issues.length === 0)).toBe(true);

    // 4. payment in the client app → fulfillment request, answered 2xx
    const { order, deliveries } = await session.pay();
    expect(order.amount).toBe(12);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      kind: 'fulfillment-request',
      state: 'delivered',
      orderId: order.orderId,
    });
    expect(deliveries[0]!.statusCode).toBeGreaterThanOrEqual(200);
    expect(deliveries[0]!.statusCode).toBeLessThan(300);

    // 5. the app's fulfillment callback reaches the platform's /callback
    const callback = await session.waitForCallback();
    expect(callback).toMatchObject({
      sessionId: session.sessionId,
      orderId: order.orderId,
      serviceStatus: 'success',
      matched: true,
    });
    expect(Object.keys(callback.body).sort()).toEqual(['MetaData', 'OrderId', 'ServiceStatus', 'SessionId']);
    const bundleDeliveries = shop.example.app.get(BundleDeliveries);
    const delivered = await bundleDeliveries.get(order.orderId);
    expect(delivered).toMatchObject({
      destination: '233501234567',
      bundle: 'DATA_3GB',
      amount: 12,
      sessionId: session.sessionId,
    });
    expect(callback.body.MetaData).toEqual({ deliveryId: delivered!.id });
    expect(sandbox.session(session.sessionId)).toMatchObject({
      state: 'fulfilled',
      order: { isFulfilled: true, serviceStatus: 'success' },
    });
    // The app learns the platform accepted it.
    await eventually(async () =>
      (await bundleDeliveries.get(order.orderId))?.reported === 'success' ? true : undefined,
    );

    // Exactly one delivery and one callback for the order.
    await sandbox.settled();
    expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === order.orderId)).toHaveLength(1);
  });

  it('re-asks for a number it cannot use, and goes back with 0', async () => {
    const session = sandbox.serviceApp(shop.url, { mobile: '233241234567' });
    await session.start();
    const again = await session.reply('not a number');
    expect(again).toMatchObject({ DataType: 'input', FieldType: 'phone', FieldName: 'destination' });
    expect(again.Message).toMatch(/valid phone number/i);
    await session.reply('0241234567');
    const back = await session.reply('0');
    expect(back).toMatchObject({ DataType: 'input', FieldName: 'destination' });
  });

  it('a payment that fails sends no fulfillment request and delivers nothing', async () => {
    const session = sandbox.serviceApp(shop.url, { mobile: '233241234567' });
    await session.start();
    await session.reply('0241234567');
    await session.choose('DATA_1GB');
    const { order, deliveries } = await session.pay({ outcome: 'failed' });
    expect(deliveries).toEqual([]);
    expect(await shop.example.app.get(BundleDeliveries).get(order.orderId)).toBeUndefined();
  });

  it('an unpaid fulfillment request (three service-flow calls, then any OrderId) delivers no bundle and posts no callback', async () => {
    const rejected = new Promise<Record<string, unknown>>((resolve) =>
      shop.example.app.get(EventEmitter2).once('hubtel.service-app.rejected', resolve),
    );
    const session = sandbox.serviceApp(shop.url, { mobile: '233241234567' });
    await session.start();
    await session.reply('0241234567');
    await session.choose('DATA_10GB');
    const orderId = `forged-${Date.now().toString(36)}`;
    const res = await fetch(new URL('/api/fulfillment', shop.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        OrderId: orderId,
        SessionId: session.sessionId,
        ExtraData: {},
        OrderInfo: null,
      }),
    });
    expect(res.status).toBe(200);
    expect(await rejected).toMatchObject({ reason: 'NOT_PAID', orderId, sessionId: session.sessionId });
    // The sandbox's status check knows no such transaction; nothing was delivered nor reported.
    expect(await shop.example.app.get(BundleDeliveries).get(orderId)).toBeUndefined();
    await sandbox.settled();
    expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toEqual([]);
  });

  it('the simulator pages play the same session through the sandbox driver', async () => {
    const post = (path: string, fields: Record<string, string>) =>
      fetch(new URL(path, shop.url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        redirect: 'manual',
      });
    const home = await fetch(new URL('/simulator', shop.url));
    expect(home.status).toBe(200);
    expect(await home.text()).toContain('/api/service-flow');

    const dialled = await post('/simulator/sessions', { mobile: '0241234567' });
    expect(dialled.status).toBe(303);
    const sessionPath = dialled.headers.get('location')!;
    expect(sessionPath).toMatch(/^\/simulator\/sessions\/[0-9a-f]+$/);
    expect(await (await fetch(new URL(sessionPath, shop.url))).text()).toContain('phone number');

    expect((await post(`${sessionPath}/reply`, { input: '0201234567' })).status).toBe(303);
    const select = await (await fetch(new URL(sessionPath, shop.url))).text();
    expect(select).toContain('data-testid="option-DATA_10GB"');
    // The Hubtel app lists every bundle on one screen (twelve: more than one USSD screen holds).
    expect(DATA_BUNDLES.length).toBeGreaterThanOrEqual(12);
    for (const b of DATA_BUNDLES) expect(select).toContain(`data-testid="option-${b.Value}"`);
    expect(select).toContain('data-channel="app"');

    expect((await post(`${sessionPath}/reply`, { input: 'DATA_10GB' })).status).toBe(303);
    expect(await (await fetch(new URL(sessionPath, shop.url))).text()).toContain('data-testid="pay"');

    expect((await post(`${sessionPath}/pay`, {})).status).toBe(303);
    const sessionId = sessionPath.split('/').pop()!;
    await sandbox.waitForFulfillmentCallback(
      (c) => c.sessionId === sessionId && c.serviceStatus === 'success',
    );
    const done = await (await fetch(new URL(sessionPath, shop.url))).text();
    expect(done).toContain('data-state="fulfilled"');
    expect(done).toContain('10GB - GHS 35.00 sent to 233201234567');

    // Bad input to the simulator is a 4xx page, never a 500.
    expect((await post(`${sessionPath}/pay`, {})).status).toBe(409);
    expect((await post('/simulator/sessions', { mobile: 'x' })).status).toBe(400);
    expect((await fetch(new URL('/simulator/sessions/..%2F..', shop.url))).status).toBe(404);
    expect((await post('/simulator/sessions/unknown/reply', { input: '1' })).status).toBe(404);
  });

  it('the simulator page plays a USSD phone: Message only, answers typed, the cart paid and fulfilled', async () => {
    const post = (path: string, fields: Record<string, string>) =>
      fetch(new URL(path, shop.url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        redirect: 'manual',
      });
    const page = async (path: string) => (await fetch(new URL(path, shop.url))).text();
    expect(await page('/simulator')).toContain('data-testid="channel-ussd"');

    const dialled = await post('/simulator/sessions', { mobile: '0241234567', channel: 'ussd' });
    expect(dialled.status).toBe(303);
    const sessionPath = dialled.headers.get('location')!;
    const sessionId = sessionPath.split('/').pop()!;
    const first = await page(sessionPath);
    expect(first).toContain('data-channel="ussd"');
    expect(first).toContain('USSD (Operator mtn)');
    expect(first).toMatch(/data-testid="screen-size" data-fits="true">\d+\/182 characters/);
    // What the platform was told: a telco operator, the USSD channel.
    expect(sandbox.session(sessionId)).toMatchObject({ operator: 'mtn', channel: 'ussd' });

    expect((await post(`${sessionPath}/reply`, { input: '0201234567' })).status).toBe(303);
    const menu = await page(sessionPath);
    // The phone shows Message as it came, never buttons built from Data.
    const message = sandbox.session(sessionId)!.exchanges.at(-1)!.response as { Message: string };
    expect(menu).toContain(`<pre class="message ussd" data-testid="message">${message.Message}</pre>`);
    expect(menu).not.toContain('data-testid="option-');
    expect(menu).toContain('data-testid="input"');

    // The twelve bundles are numbered lines of Message, paged to the screen: the customer pages
    // with the More key until the 5GB bundle shows, then types its number.
    let screen = message.Message;
    let number: string | undefined;
    for (let pages = 0; pages < 12 && !number; pages++) {
      expect(screen.length).toBeLessThanOrEqual(182);
      number = /^(\d+)\. [^\n]*5GB/m.exec(screen)?.[1];
      if (number) break;
      const more = /^(\d+)\. More$/m.exec(screen)?.[1];
      expect(more).toBeDefined();
      expect((await post(`${sessionPath}/reply`, { input: more! })).status).toBe(303);
      screen = (sandbox.session(sessionId)!.exchanges.at(-1)!.response as { Message: string }).Message;
    }
    expect(number).toBeDefined();
    expect((await post(`${sessionPath}/reply`, { input: number! })).status).toBe(303);
    expect(await page(sessionPath)).toContain('data-testid="pay"');
    expect((await post(`${sessionPath}/pay`, {})).status).toBe(303);
    await sandbox.waitForFulfillmentCallback(
      (c) => c.sessionId === sessionId && c.serviceStatus === 'success',
    );
    expect(await page(sessionPath)).toContain('5GB - GHS 19.00 sent to 233201234567');
  });
});
