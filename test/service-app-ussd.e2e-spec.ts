import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ussdScreen } from '#internal';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import {
  OnServiceQuery,
  ServiceFlowBuilder,
  type ServiceAppModuleOptions,
  type ServiceQueryAnswer,
  type ServiceQueryEvent,
} from 'nestjs-hubtel/service-app';
import { SERVICE_APP_DEFAULT_MESSAGES } from '../libs/service-app/src/service-app.constants.js';
import { BUNDLES } from './support/service-app.fixtures.js';
import {
  APP_OPERATOR,
  postJson as post,
  startMerchant,
  type Adapter,
  type Merchant,
} from './support/service-app.harness.js';

/*
 * Issue 22 over real HTTP, on Express and Fastify: the USSD channel (a telco Operator, or Platform
 * USSD) gets its menus in `Message`, paged to the screen with keys that never collide, the cart as
 * a Release whose fulfillment is verified and delivered once; every request type is answered 200;
 * the app channel is answered as before. Resumable sessions: test/service-app-resume.e2e-spec.ts.
 */

const M = SERVICE_APP_DEFAULT_MESSAGES;

/** 30 bundles; the 23rd is `v23`. */
const THIRTY = Array.from({ length: 30 }, (_, i) => ({
  Display: `Bundle ${i + 1}: ${(i + 1) * 100}MB for GHS ${((i + 1) * 1.5).toFixed(2)}`,
  Value: `v${i + 1}`,
  Amount: Number(((i + 1) * 1.5).toFixed(2)),
}));
const LONG_LABEL = `Unlimited night ${'and weekend browsing with free calls '.repeat(6)}`.slice(0, 200);

/** A menu flow on `code`: a select of `options`, then the chosen option in the cart. */
function menuFlow(name: string, code: string, message: string, options: typeof THIRTY) {
  return new ServiceFlowBuilder(name)
    .forServiceCode(code)
    .step('pick', (ctx) => ctx.select({ message, name: 'bundle', options }))
    .step('cart', (ctx) => {
      const option = ctx.selected()!;
      return ctx.addToCart({
        message: `You are buying ${option.Display} on the ${ctx.channel} channel`,
        item: {
          ItemName: option.Display,
          Qty: 1,
          Price: option.Amount,
          ServiceData: { bundle: ctx.answer, channel: ctx.channel },
        },
      });
    })
    .build();
}

/** Airtime by amount: the options' Values are numbers ("0" to "19"), as many USSD back ends write them. */
const AIRTIME = Array.from({ length: 20 }, (_, i) => ({
  Display: `Airtime GHS ${i + 1}`,
  Value: String(i),
  Amount: i + 1,
}));

/** The number to top up, then the airtime menu (a prompt before it: "back" has somewhere to go). */
const airtimeFlow = new ServiceFlowBuilder('airtime')
  .forServiceCode('airtime')
  .step('number', (ctx) => ctx.input({ message: 'Number to top up', fieldType: 'phone', name: 'to' }))
  .step('pick', (ctx) =>
    ctx.select({ message: 'Choose the airtime amount for the number', name: 'pack', options: AIRTIME }),
  )
  .step('cart', (ctx) => {
    const option = ctx.selected()!;
    return ctx.addToCart({
      message: `Buy ${option.Display}`,
      item: { ItemName: option.Display, Qty: 1, Price: option.Amount, ServiceData: { pack: option.Value } },
    });
  })
  .build();

/** A menu whose next step turns every choice down with a reason outside GSM-7. */
const REFUSAL = 'Épuisé ✗ choisis un autre';
const refusingFlow = new ServiceFlowBuilder('refusing')
  .forServiceCode('menu-refusing')
  .step('pick', (ctx) =>
    ctx.select({ message: 'Choose a bundle for 233241234567:', name: 'bundle', options: THIRTY }),
  )
  .step('cart', (ctx) => ctx.reject(REFUSAL))
  .build();

/** A flow a `favorite` request can skip into: the saved choice comes in the request's Message. */
const favoriteFlow = new ServiceFlowBuilder('favorite')
  .forServiceCode('fav')
  .step('phone', (ctx) => {
    const saved = ctx.favorite ? (JSON.parse(ctx.favorite.message) as { bundle?: string }) : {};
    const option = BUNDLES.find((b) => b.Value === saved.bundle);
    if (option)
      return ctx.addToCart({
        message: `Buying your favourite ${option.Display} again`,
        item: {
          ItemName: option.Display,
          Qty: 1,
          Price: option.Amount,
          ServiceData: { bundle: option.Value },
        },
      });
    return ctx.input({ message: 'Enter the number', fieldType: 'phone' });
  })
  .step('done', (ctx) => ctx.end('Thanks'))
  .build();

@Injectable()
class QueryAnswerer {
  readonly seen: ServiceQueryEvent[] = [];

  @OnServiceQuery()
  answer(query: ServiceQueryEvent): ServiceQueryAnswer {
    this.seen.push(query);
    return { message: `Bundles for ${query.message}`, data: BUNDLES };
  }
}

describe.each<Adapter>(['express', 'fastify'])('the USSD channel over %s', (adapter) => {
  let sandbox: HubtelSandbox;
  let merchant: Merchant;
  let bare: Merchant;

  const options = (): ServiceAppModuleOptions => ({
    callbackUrl: sandbox.baseUrls().fulfillmentCallback,
    callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 5_000 },
    statusCheck: {
      ...sandbox.credentials.api,
      posSalesId: sandbox.posSalesId,
      url: sandbox.baseUrls().status,
    },
    flows: [
      menuFlow('thirty', 'menu', 'Choose a bundle for 233241234567:', THIRTY),
      menuFlow('unicode', 'menu-unicode', 'Ŋkɔmɔ: choose a bundle', THIRTY),
      menuFlow('long', 'menu-long', 'Choose:', [
        THIRTY[0]!,
        { Display: LONG_LABEL, Value: 'long', Amount: 9 },
        THIRTY[2]!,
      ]),
      favoriteFlow,
      airtimeFlow,
      refusingFlow,
    ],
  });

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    merchant = await startMerchant(adapter, options(), {}, { providers: [QueryAnswerer] });
    // No @OnServiceQuery() handler here.
    bare = await startMerchant(adapter, options(), {}, { logger: merchant.logger });
  });

  afterEach(() => sandbox.reset());

  afterAll(async () => {
    await bare?.close();
    await merchant?.close();
    await sandbox?.stop();
  });

  /** One phone (or app) session: `send` posts a request of this session. */
  function phone(
    m: Merchant,
    channel: Record<string, string>,
    serviceCode = 'menu',
    mobile = '233241234567',
  ) {
    const sessionId = randomUUID();
    const send = async (Type: string, Message = '') => {
      const res = await post(`${m.url}/api/service-flow`, {
        Type,
        Message,
        ServiceCode: serviceCode,
        ClientState: '',
        Mobile: mobile,
        SessionId: sessionId,
        ...channel,
      });
      expect(res.status).toBe(200);
      return res.body;
    };
    return {
      sessionId,
      send,
      start: () => send('initiation'),
      answer: (text: string) => send('Response', text),
    };
  }

  /** Every page of the menu on screen, walking "more" to the end: [text, body]. */
  async function walk(session: ReturnType<typeof phone>, first: any) {
    const pages = [first];
    while (pages.at(-1).Message.includes('\n9. More')) pages.push(await session.answer('9'));
    return pages;
  }

  const keysOf = (message: string) =>
    message
      .split('\n')
      .slice(1)
      .map((line) => line.split('. ')[0]!);

  describe.each([
    ['Operator mtn', { Operator: 'mtn' }],
    ['Platform USSD', { Operator: APP_OPERATOR, Platform: 'USSD' }],
  ])('on %s', (_name, channel) => {
    it('pages a 30-option menu so every screen fits 182; "more" and "back" give the same pages; no key collides; option 23 hands the step its Value', async () => {
      const session = phone(merchant, channel);
      const first = await session.start();
      expect(first).toMatchObject({ Type: 'Response', DataType: 'select', FieldName: '' });
      // Data still carries the options, for app channels.
      expect(first.Data).toEqual(THIRTY);
      const pages = await walk(session, first);
      expect(pages.length).toBeGreaterThanOrEqual(3);
      const shown = pages.map((p) => p.Message as string);
      const numbers = new Map<string, string>();
      shown.forEach((message, index) => {
        expect(ussdScreen(message)).toMatchObject({ gsm7: true, fits: true });
        expect(message.split('\n')[0]).toBe('Choose a bundle for 233241234567:');
        const keys = keysOf(message);
        expect(new Set(keys).size).toBe(keys.length);
        expect(keys.includes('9')).toBe(index < shown.length - 1);
        expect(keys.includes('8')).toBe(index > 0);
        for (const line of message.split('\n').slice(1)) {
          const [key, label] = [line.slice(0, line.indexOf('. ')), line.slice(line.indexOf('. ') + 2)];
          if (label === 'More' || label === 'Back') continue;
          // A number never means navigation, and never two options.
          expect(['8', '9', '0']).not.toContain(key);
          expect(numbers.has(key)).toBe(false);
          numbers.set(key, label);
        }
      });
      // Every option shown once, whole, in order.
      expect([...numbers.values()]).toEqual(THIRTY.map((o) => o.Display));
      // Back walks the same pages in reverse.
      for (let index = shown.length - 2; index >= 0; index--)
        expect((await session.answer('8')).Message).toBe(shown[index]);
      // "Back" on the first page is no navigation: the menu is asked again, still fitting.
      const again = await session.answer('8');
      expect(again.Message.startsWith(M.select)).toBe(true);
      expect(ussdScreen(again.Message).fits).toBe(true);

      const key23 = [...numbers.entries()].find(([, label]) => label === THIRTY[22]!.Display)![0];
      expect(key23).not.toBe('23');
      const cart = await session.answer(key23);
      expect(cart).toMatchObject({
        Type: 'Release',
        DataType: 'display',
        Item: {
          ItemName: THIRTY[22]!.Display,
          Price: THIRTY[22]!.Amount,
          ServiceData: { bundle: 'v23', channel: 'ussd' },
        },
      });
      expect(ussdScreen(cart.Message).fits).toBe(true);
    });

    it('counts a menu with a character outside GSM-7 against 70 on every page', async () => {
      const session = phone(merchant, channel, 'menu-unicode');
      const pages = await walk(session, await session.start());
      const labels: string[] = [];
      for (const page of pages) {
        expect(ussdScreen(page.Message)).toMatchObject({ gsm7: false, fits: true });
        expect(page.Message.length).toBeLessThanOrEqual(70);
        for (const line of page.Message.split('\n').slice(1))
          if (!/^[89]\. (More|Back)$/.test(line)) labels.push(line.replace(/^\d+\. /, ''));
      }
      expect(labels).toEqual(THIRTY.map((o) => o.Display));
    });

    it('handles a 200-character label: cut with an ellipsis on its own page, chosen by its number; one warning line', async () => {
      const session = phone(merchant, channel, 'menu-long');
      const pages = await walk(session, await session.start());
      for (const page of pages) expect(ussdScreen(page.Message).fits).toBe(true);
      const page = pages.find((p) => p.Message.includes('Unlimited night'))!;
      const line = page.Message.split('\n').find((l: string) => l.includes('Unlimited night'))!;
      expect(line.endsWith('...')).toBe(true);
      expect(page.Message).not.toContain(THIRTY[0]!.Display);
      expect(page.Message).not.toContain(THIRTY[2]!.Display);
      const cart = await session.answer(line.split('. ')[0]);
      expect(cart).toMatchObject({ Type: 'Release', Item: { ServiceData: { bundle: 'long' } } });
      const warnings = merchant.logger.lines.filter((l) => l.includes('Flow long, step "pick"'));
      expect(warnings).toHaveLength(1);
    });
  });

  describe('navigation keys in a menu whose values are numbers', () => {
    const start = async () => {
      const session = phone(merchant, { Operator: 'mtn' }, 'airtime');
      await session.start();
      const first = await session.answer('0241234567');
      expect(first).toMatchObject({ DataType: 'select' });
      return { session, first };
    };

    it('"8" (back) on the first page and "9" (more) on the last are asked again, never the option of that Value', async () => {
      const { session, first } = await start();
      expect(first.Message).not.toContain('\n8. ');
      const again = await session.answer('8');
      expect(again).toMatchObject({ Type: 'Response', DataType: 'select' });
      // The explanation above the same page (in the prompt's place when the page is full).
      const body = (message: string) => message.split('\n').slice(1).join('\n');
      expect(again.Message).toBe(`${M.select}\n${body(first.Message)}`);
      expect(await merchant.fulfillment.getCart(session.sessionId)).toBeUndefined();

      const pages = await walk(session, first);
      const last = pages.at(-1);
      expect(last.Message).not.toContain('\n9. ');
      const still = await session.answer('9');
      expect(still).toMatchObject({ Type: 'Response', DataType: 'select' });
      expect(still.Message).toBe(`${M.select}\n${body(last.Message)}`);
      expect(await merchant.fulfillment.getCart(session.sessionId)).toBeUndefined();
      // The keys still navigate where offered, and the numbers shown still choose.
      expect((await session.answer('8')).Message).toBe(pages.at(-2).Message);
      // Airtime GHS 8 (Value "7") is shown as 10: the numbers skip the keys.
      const line = pages
        .at(-2)
        .Message.split('\n')
        .find((l: string) => l.endsWith('Airtime GHS 8'))!;
      expect(line).toBe('10. Airtime GHS 8');
      expect(await session.answer('10')).toMatchObject({
        Type: 'Release',
        Item: { Price: 8, ServiceData: { pack: '7' } },
      });
    });

    it('"0" (a back input) goes back on USSD even where an option\'s Value is "0"', async () => {
      const { session } = await start();
      expect(await session.answer('0')).toMatchObject({ DataType: 'input', Message: 'Number to top up' });
      expect(await merchant.fulfillment.getCart(session.sessionId)).toBeUndefined();
    });
  });

  it('keeps a ctx.reject reason outside GSM-7 on a full page: the page gives up options so the reason fits 70', async () => {
    const session = phone(merchant, { Operator: 'mtn' }, 'menu-refusing');
    const first = await session.start();
    expect(ussdScreen(first.Message)).toMatchObject({ gsm7: true, fits: true });
    expect(first.Message.length).toBeGreaterThan(70);
    const refused = await session.answer('1');
    const lines = (refused.Message as string).split('\n');
    expect(lines[0]).toBe(REFUSAL);
    expect(ussdScreen(refused.Message)).toMatchObject({ gsm7: false, fits: true });
    expect(refused.Message.length).toBeLessThanOrEqual(70);
    // What is left is page 1's: its first options, then its "more" line.
    expect(lines.at(-1)).toBe('9. More');
    const shown = lines.slice(1, -1);
    expect(shown.length).toBeGreaterThan(0);
    expect(first.Message.split('\n').slice(1, 1 + shown.length)).toEqual(shown);
  });

  it('answers the app channel (Operator Hubtel-Android) exactly as before: the whole list in Data, Message the prompt', async () => {
    const session = phone(merchant, { Operator: APP_OPERATOR }, 'menu');
    const first = await session.start();
    expect(first).toStrictEqual({
      SessionId: session.sessionId,
      Type: 'Response',
      Message: 'Choose a bundle for 233241234567:',
      Mask: null,
      MaskNextRoute: null,
      Item: null,
      ServiceCode: null,
      Label: 'Choose a bundle for 233241234567:',
      DataType: 'select',
      FieldType: 'text',
      FieldName: '',
      ClientState: null,
      Data: THIRTY,
    });
    // "9" is not navigation here: not an option's Value, so the select is asked again.
    expect((await session.answer('9')).Message).toBe(`${M.select}\nChoose a bundle for 233241234567:`);
    expect(await session.answer('v23')).toMatchObject({
      Type: 'AddToCart',
      Data: [],
      Item: { ServiceData: { bundle: 'v23', channel: 'app' } },
    });
  });

  describe('the cart', () => {
    /** Pays the session's cart on the sandbox and posts the fulfillment request, as the platform does. */
    async function payAndFulfil(sessionId: string, amount: number) {
      const orderId = randomUUID().replace(/-/g, '');
      sandbox.recordServicePayment(sessionId, { amount, orderId });
      const body = { OrderId: orderId, SessionId: sessionId, ExtraData: {}, OrderInfo: null };
      const first = await post(`${merchant.url}/api/fulfillment`, body);
      expect(first.status).toBe(200);
      await merchant.fulfiller.until(() => sandbox.fulfillmentCallbacks().some((c) => c.orderId === orderId));
      // A re-sent request is acknowledged and changes nothing.
      expect((await post(`${merchant.url}/api/fulfillment`, body)).status).toBe(200);
      await merchant.fulfillment.drainRejections?.();
      return orderId;
    }

    it.each([
      ['USSD (mtn)', { Operator: 'mtn' }, 'Release'],
      ['app', { Operator: APP_OPERATOR }, 'AddToCart'],
    ])(
      'on %s: the cart answer, then a fulfillment verified by the status check and delivered once',
      async (_name, channel, type) => {
        const session = phone(merchant, channel, 'sandbox-service', '233241110000');
        await session.start();
        const select = await session.answer('0241110000');
        expect(select.Data).toEqual(BUNDLES);
        if (type === 'Release')
          expect(select.Message).toBe(
            'Choose a bundle for 233241110000\n1. 1GB for GHS 5.00\n2. 5GB for GHS 20.00',
          );
        else expect(select.Message).toBe('Choose a bundle for 233241110000');
        const cart = await session.answer(type === 'Release' ? '2' : '5gb');
        expect(cart).toStrictEqual({
          SessionId: session.sessionId,
          Type: type,
          Message: 'You are buying 5GB for GHS 20.00 for 233241110000',
          Mask: null,
          MaskNextRoute: null,
          Item: {
            ItemName: '5GB for GHS 20.00',
            Qty: 1,
            Price: 20,
            ServiceData: { destination: '233241110000', amount: '20.00', bundle: '5gb' },
          },
          ServiceCode: null,
          Label: 'Confirm purchase',
          DataType: 'display',
          FieldType: 'text',
          FieldName: null,
          ClientState: null,
          Data: [],
        });
        const statusChecks = () => sandbox.requests().filter((r) => r.api === 'status').length;
        const orderId = await payAndFulfil(session.sessionId, 20);
        expect(statusChecks()).toBeGreaterThanOrEqual(1);
        expect(merchant.fulfiller.calls.get(orderId)).toBe(1);
        const seen = merchant.fulfiller.seen.find((e) => e.orderId === orderId)!;
        expect(seen).toMatchObject({ sessionId: session.sessionId, serviceData: { bundle: '5gb' } });
        expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(1);
      },
    );
  });

  describe('every request type', () => {
    it('acknowledges timeout: 200, the session marked timed out, no step runs after it', async () => {
      const session = phone(merchant, { Operator: 'mtn' }, 'sandbox-service');
      await session.start();
      const timedOut = await session.send('Timeout');
      expect(timedOut).toMatchObject({
        SessionId: session.sessionId,
        Type: 'release',
        Item: null,
        Data: null,
      });
      expect(await merchant.flows.getSession(session.sessionId)).toBeUndefined();
      // A late answer runs nothing: the session is over.
      expect(await session.answer('0241234567')).toMatchObject({
        Type: 'release',
        Message: M.sessionExpired,
      });
    });

    it('answers query with the @OnServiceQuery() handler, and without one with a polite Release', async () => {
      const session = phone(merchant, { Operator: APP_OPERATOR }, 'sandbox-service');
      const answered = await session.send('query', '233241234567');
      expect(answered).toStrictEqual({
        SessionId: session.sessionId,
        Type: 'Response',
        Message: 'Bundles for 233241234567',
        Mask: null,
        MaskNextRoute: null,
        Item: null,
        ServiceCode: null,
        Label: null,
        DataType: 'display',
        FieldType: 'text',
        FieldName: null,
        ClientState: null,
        Data: BUNDLES,
      });
      const queries = merchant.app.get(QueryAnswerer).seen;
      expect(queries.at(-1)).toMatchObject({
        sessionId: session.sessionId,
        channel: 'app',
        serviceCode: 'sandbox-service',
      });

      const other = phone(bare, { Operator: 'mtn' }, 'sandbox-service');
      expect(await other.send('Query', 'x')).toMatchObject({
        SessionId: other.sessionId,
        Type: 'Release',
        Message: M.queryUnavailable,
        Item: null,
      });
    });

    it('starts a flow on favorite with the data the request carries, so the flow skips its steps', async () => {
      const session = phone(merchant, { Operator: 'mtn' }, 'fav');
      const cart = await session.send('favorite', JSON.stringify({ bundle: '5gb' }));
      expect(cart).toMatchObject({ Type: 'Release', Item: { ItemName: '5GB for GHS 20.00', Price: 20 } });
      // A plain initiation of the same flow starts at its first prompt.
      const plain = phone(merchant, { Operator: 'mtn' }, 'fav');
      expect(await plain.start()).toMatchObject({
        Type: 'Response',
        DataType: 'input',
        Message: 'Enter the number',
      });
    });

    it('answers an unknown Type with a polite Release (200) and one warning line, never a 400', async () => {
      const session = phone(merchant, { Operator: 'mtn' }, 'sandbox-service');
      const before = merchant.logger.lines.length;
      expect(await session.send('Bogus-Type')).toStrictEqual({
        SessionId: session.sessionId,
        Type: 'Release',
        Message: M.unsupported,
        Mask: null,
        MaskNextRoute: null,
        Item: null,
        ServiceCode: null,
        Label: null,
        DataType: 'display',
        FieldType: 'text',
        FieldName: null,
        ClientState: null,
        Data: null,
      });
      const lines = merchant.logger.lines.slice(before).filter((l) => l.includes('Bogus-Type'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).not.toContain('233241234567');
    });
  });
});
