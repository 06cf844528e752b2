import { HubtelValidationError } from 'nestjs-hubtel';
import {
  startUssdStandIn,
  standInMenu,
  type UssdStandIn,
} from '../../../test/support/ussd-service.fixtures.js';
import { HubtelSandbox } from './sandbox.server.js';
import { parseUssdMenu } from './service-app.ussd.js';

describe('the sandbox driver on the USSD channel', () => {
  let sandbox: HubtelSandbox;
  let service: UssdStandIn;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    service = await startUssdStandIn();
    service.callbackUrl = `${sandbox.url}/callback`;
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.stop();
  });

  it.each([
    [{ operator: 'mtn' }, 'ussd'],
    [{ operator: 'Vodafone-GH' }, 'ussd'],
    [{ operator: 'safaricom-ke' }, 'ussd'],
    [{}, 'ussd'], // the default operator is mtn
    [{ operator: 'Hubtel-Android' }, 'app'],
    [{ operator: 'Hubtel-Android', extraFields: { Platform: 'ussd' } }, 'ussd'],
    [{ operator: 'mtn', channel: 'app' as const }, 'app'],
  ])('picks the channel from the operator: %j → %s', (options, channel) => {
    const session = sandbox.serviceApp(service.url, options);
    expect(session.channel).toBe(channel);
    expect(session.record.channel).toBe(channel);
  });

  it('types the number of the menu line, pages with 9, and pays a Release cart: fulfillment and callback follow', async () => {
    const session = sandbox.serviceApp(service.url, { operator: 'mtn', serviceCode: '*713#' });
    await session.start();
    expect(session.record.exchanges.at(-1)!.screen).toMatchObject({ fits: true, limit: 182, menu: [] });
    const menu = await session.reply('0241234567');
    expect(menu.Message).toBe(standInMenu('0241234567', 0));
    expect(session.record.exchanges.at(-1)!.screen!.menu.map((l) => l.key)).toEqual([
      '1',
      '2',
      '3',
      '4',
      '9',
    ]);

    // An option on another page cannot be typed here; the user pages first.
    await expect(session.choose('DATA_6GB')).rejects.toThrow(/No option "DATA_6GB" on this USSD screen/);
    await session.choose(9); // "9. More": typed as is
    expect(session.last!.Message).toBe(standInMenu('0241234567', 1));
    await session.choose('8. Back'.slice(3)); // by the label shown: "Back" → 8
    expect(session.last!.Message).toBe(standInMenu('0241234567', 0));
    await session.choose('9');
    const cart = await session.choose('DATA_6GB'); // its Display is line 2 of page 2
    expect(service.flowRequests.map((r) => r.Message).slice(-4)).toEqual(['9', '8', '9', '2']);

    expect(cart.Type).toBe('Release');
    expect(session.record.state).toBe('cart');
    expect(session.cart).toMatchObject({ ItemName: '6GB data bundle', Price: 30 });
    const callback = session.waitForCallback();
    const { order, deliveries } = await session.pay();
    expect(deliveries[0]).toMatchObject({ state: 'delivered', statusCode: 200 });
    expect(service.fulfillments.at(-1)).toMatchObject({
      SessionId: session.sessionId,
      OrderId: order.orderId,
    });
    await expect(callback).resolves.toMatchObject({ serviceStatus: 'success', orderId: order.orderId });
    expect(sandbox.session(session.sessionId)).toMatchObject({ channel: 'ussd', state: 'fulfilled' });
  });

  it('tells the service the channel it plays: Platform USSD for an operator the rule calls app', async () => {
    const session = sandbox.serviceApp(service.url, { operator: 'Hubtel-Android', channel: 'ussd' });
    await session.start();
    expect(service.flowRequests.at(-1)).toMatchObject({ Operator: 'Hubtel-Android', Platform: 'USSD' });
    const plain = sandbox.serviceApp(service.url, { operator: 'mtn' });
    await plain.start();
    expect(service.flowRequests.at(-1)).not.toHaveProperty('Platform');
  });

  it('on the app channel a Release with an Item ends the session (the app cart is AddToCart)', async () => {
    const session = sandbox.serviceApp(service.url, { operator: 'Hubtel-Android' });
    await session.start();
    await session.reply('0241234567');
    expect(session.record.exchanges.at(-1)!.screen).toBeUndefined();
    await session.choose('DATA_1GB'); // the app replies with the Value
    expect(service.flowRequests.at(-1)!.Message).toBe('DATA_1GB');
    expect(session.record.state).toBe('ended');
    expect(session.cart).toBeNull();
  });

  it('flags a screen over the size: 182 GSM-7 characters, 70 with a non-GSM one, or the size configured', async () => {
    const long = sandbox.serviceApp(service.url, { serviceCode: 'long' });
    await expect(long.start()).rejects.toThrow(/screen too long: 202 characters, a USSD screen holds 182/);
    const lenient = sandbox.serviceApp(service.url, { serviceCode: 'unicode', strict: false });
    await lenient.start();
    expect(lenient.record.exchanges.at(-1)!.screen).toMatchObject({
      gsm7: false,
      length: 79,
      limit: 70,
      fits: false,
    });
    expect(lenient.record.exchanges.at(-1)!.issues).toEqual([
      'screen too long: 79 characters, a USSD screen holds 70 once any character is outside the GSM 7-bit alphabet',
    ]);
    // The same screen on the app channel is not measured.
    const app = sandbox.serviceApp(service.url, { serviceCode: 'unicode', operator: 'Hubtel-iOS' });
    await expect(app.start()).resolves.toMatchObject({ Type: 'Response' });
    const small = sandbox.serviceApp(service.url, { ussd: { screenSize: 20 }, strict: false });
    await small.start();
    expect(small.record.exchanges.at(-1)!.screen).toMatchObject({ limit: 20, fits: false });
    expect(() => sandbox.serviceApp(service.url, { ussd: { screenSize: 0 } })).toThrow(HubtelValidationError);
  });

  it('sends the rarer request types: favorite starts with Sequence and its data, timeout ends the session', async () => {
    const favorite = sandbox.serviceApp(service.url);
    await favorite.send('favorite', { fields: { Destination: '0241234567' } });
    expect(service.flowRequests.at(-1)).toMatchObject({
      Sequence: '1',
      Type: 'favorite',
      Message: '',
      Destination: '0241234567',
      SessionId: favorite.sessionId,
    });
    await expect(favorite.send('favorite')).rejects.toThrow(/already started/);

    const timedOut = sandbox.serviceApp(service.url);
    await timedOut.start();
    await timedOut.send('timeout');
    expect(service.flowRequests.at(-1)).toMatchObject({ Type: 'timeout' });
    expect(service.flowRequests.at(-1)).not.toHaveProperty('Sequence');
    expect(timedOut.record.state).toBe('ended');

    const query = sandbox.serviceApp(service.url);
    await query.send('query', { message: 'balance' });
    expect(service.flowRequests.at(-1)).toMatchObject({ Type: 'query', Message: 'balance' });
    await expect(query.send(' ')).rejects.toThrow(HubtelValidationError);
  });

  it('reads menu lines as the SDK writes them', () => {
    expect(parseUssdMenu('Pick one:\n1. 1GB\n2) 3GB\n 10.  Ten \nno number\n9. More')).toEqual([
      { key: '1', label: '1GB' },
      { key: '2', label: '3GB' },
      { key: '10', label: 'Ten' },
      { key: '9', label: 'More' },
    ]);
  });
});
