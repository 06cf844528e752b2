/**
 * Two shops on one example app, each on its own Hubtel account (issue 24): the second shop's
 * invoices are created, confirmed by the status check and answered by callback on its own keys,
 * POS Sales ID and callback route, and its receipts go out from its own SMS sender. The sandbox
 * serves both accounts and refuses one account's keys on the other's POS Sales ID, so an invoice
 * confirmed there was confirmed with its own account's keys.
 */
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { EXAMPLE_DEFAULTS } from '../src/app.config.js';
import { sandboxAccounts } from '../src/platform/platform.module.js';
import {
  placeOrder,
  pressPayPageButton,
  startExampleInProcess,
  waitForOrder,
  type InProcessExample,
} from './support/example-app.harness.js';

const SECOND = EXAMPLE_DEFAULTS.secondShop;
const SHOPS = [{ account: SECOND.account, name: SECOND.name }];

describe('example app: two shops, two Hubtel accounts', () => {
  let sandbox: HubtelSandbox;
  let app: InProcessExample;

  beforeAll(async () => {
    // The sandbox the embedded one would be (each account sends only from its own sender, so a
    // receipt from the wrong account fails); the app makes a shop of each further account.
    sandbox = await HubtelSandbox.start({
      sms: { senderIds: [EXAMPLE_DEFAULTS.sandboxSenderId] },
      accounts: sandboxAccounts(SHOPS),
    });
    app = await startExampleInProcess({ sandbox, shopName: 'Adinkra Goods' });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await sandbox?.stop();
  });

  it('shows each shop on its own page, linked from the other', async () => {
    const main = await (await fetch(app.url)).text();
    const second = await fetch(new URL(`/shops/${SECOND.account}`, app.url));
    const html = await second.text();
    expect(second.status).toBe(200);
    expect(html).toContain(`<a class="brand" href="/shops/${SECOND.account}">${SECOND.name}</a>`);
    expect(html).toContain(`name="shop" value="${SECOND.account}"`);
    for (const page of [main, html]) {
      expect(page).toContain(`href="/shops/${SECOND.account}" data-testid="shop-link">${SECOND.name}<`);
      expect(page).toContain('href="/" data-testid="shop-link">Adinkra Goods<');
    }
    expect((await fetch(new URL('/shops/nowhere', app.url))).status).toBe(404);
  });

  it('sells in both shops, each on its own account: its keys, POS Sales ID, callback route and sender', async () => {
    const orders = {
      default: await placeOrder(app.url, { product: 'kente-mug', phone: '0241234567' }),
      second: await placeOrder(app.url, { product: 'shea-soap', phone: '0201234567', shop: SECOND.account }),
    };
    for (const { checkoutUrl } of Object.values(orders)) await pressPayPageButton(checkoutUrl, 'pay-momo');
    const paid = (id: string) =>
      waitForOrder(app.url, id, (o) => o.status === 'paid' && o.receipt.status === 'sent');
    const [mainOrder, secondOrder] = [await paid(orders.default.orderId), await paid(orders.second.orderId)];
    expect(mainOrder).toMatchObject({ shop: 'default', payment: { confirmedByStatusCheck: true } });
    expect(secondOrder).toMatchObject({ shop: SECOND.account, payment: { confirmedByStatusCheck: true } });

    // The sandbox's records: each invoice is its account's, called back on its account's route.
    const invoice = (id: string) => sandbox.invoice(id)!;
    expect(invoice(orders.default.orderId).account).toBe('default');
    expect(invoice(orders.second.orderId).account).toBe(SECOND.account);
    expect(invoice(orders.second.orderId).callbackUrl).toBe(
      `${app.url}/hubtel/checkout/callback/${SECOND.account}`,
    );
    expect(invoice(orders.default.orderId).callbackUrl).toBe(`${app.url}/hubtel/checkout/callback`);
    // Each receipt from its own shop's account and sender.
    const [mainSms] = sandbox.messagesTo('233241234567');
    const [secondSms] = sandbox.messagesTo('233201234567');
    expect(mainSms).toMatchObject({ account: 'default', from: EXAMPLE_DEFAULTS.sandboxSenderId });
    expect(mainSms!.content).toMatch(/^Adinkra Goods: we received GHS 25\.00/);
    expect(secondSms).toMatchObject({ account: SECOND.account, from: SECOND.sandboxSenderId });
    expect(secondSms!.content).toMatch(/^Kumasi Crafts: we received GHS 12\.50/);
  });

  it('refuses an order for a shop the app does not have (400, nothing created)', async () => {
    const before = sandbox.invoices().length;
    const res = await fetch(new URL('/orders', app.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ product: 'kente-mug', phone: '0241234567', shop: 'nowhere' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'INVALID_ORDER',
      issues: [{ field: 'shop', message: 'must be one of the app’s shops' }],
    });
    expect(sandbox.invoices()).toHaveLength(before);
  });
});
