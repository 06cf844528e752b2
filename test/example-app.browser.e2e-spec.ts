/**
 * The example shop in real Chromium (Debian's, through playwright-core): open the shop, buy, pay
 * on the sandbox's payment page, land on the return page and watch the order turn paid as the
 * callback arrives (no reload); cancel and land on the cancellation page with the order unpaid;
 * fail a payment, retry it from the order page and pay.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { chromiumBinary, launchChromium, SCREENSHOT_DIR, type ChromiumSession } from './support/browser.js';
import { getOrder, startExampleInProcess, type InProcessExample } from './support/example-app.harness.js';

const chromium = chromiumBinary('example shop browser tests');

chromium.describe('example shop in a real browser', () => {
  let sandbox: HubtelSandbox;
  let shop: InProcessExample;
  let browser: ChromiumSession;
  let page: Page;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    shop = await startExampleInProcess({ sandbox });
    browser = await launchChromium(chromium.path!);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await shop?.close();
    await sandbox?.stop();
  });

  beforeEach(async () => {
    sandbox.reset();
    page = await browser.newPage();
    page.setDefaultTimeout(20_000);
  });

  afterEach(async () => {
    await page?.close();
  });

  /** The shop: type a number, press a product's buy button, arrive on the sandbox's payment page. */
  async function buy(product: string, phone: string, screenshot?: string): Promise<string> {
    await page.goto(shop.url);
    await page.getByTestId('phone').fill(phone);
    if (screenshot) await shoot(screenshot);
    await page.getByTestId('name').fill('Ama Mensah');
    await page.getByTestId(`buy-${product}`).click();
    await page.waitForURL((url) => url.href.startsWith(`${sandbox.url}/pay/`));
    return (await page.getByTestId('client-reference').textContent())!.trim();
  }

  async function shoot(name: string): Promise<void> {
    await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: true });
  }

  it('buy, pay with mobile money, return and see the order turn paid as the callback arrives', async () => {
    // Hold the callback back: the return page must show the order waiting, then update by itself.
    sandbox.faults.addCallback({ match: { kind: 'checkout-callback' }, drop: true, times: 1 });

    const orderId = await buy('kente-mug', '024 412 3456', 'example-shop.png');
    await expect(page.getByTestId('invoice-amount').textContent()).resolves.toContain('GHS 25.00');
    await page.getByTestId('pay-momo').click();

    await page.waitForURL(`${shop.url}/orders/${orderId}`);
    const status = page.getByTestId('order-status');
    await status.filter({ hasText: 'Waiting for payment confirmation' }).waitFor();
    await shoot('example-shop-waiting.png');
    expect(await status.getAttribute('data-status')).toBe('awaiting-payment');
    // A marker that a reload would wipe out.
    await page.evaluate(() => ((globalThis as unknown as { stillHere: boolean }).stillHere = true));

    // Now the platform's callback arrives.
    const dropped = sandbox.deliveries({ kind: 'checkout-callback', clientReference: orderId });
    expect(dropped.map((d) => d.state)).toEqual(['dropped']);
    await sandbox.redeliver(dropped[0]!.id);

    await page.locator('[data-testid="order-status"][data-status="paid"]').waitFor();
    expect((await status.textContent())!.trim()).toBe('Paid');
    await page.getByTestId('receipt').filter({ hasText: 'SMS receipt sent to 233******456' }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { stillHere?: boolean }).stillHere)).toBe(
      true,
    );
    expect(page.url()).toBe(`${shop.url}/orders/${orderId}`);
    await expect(page.getByTestId('heading').textContent()).resolves.toBe('Thank you for your order');

    await shoot('example-shop-paid.png');

    const order = await getOrder(shop.url, orderId);
    expect(order).toMatchObject({ status: 'paid', amount: 25, receipt: { status: 'sent' } });
    const texts = sandbox.messagesTo('233244123456');
    expect(texts).toHaveLength(1);
    expect(texts[0]!.content).toContain(orderId);
  });

  it('cancel on the payment page: the cancellation page shows the order unpaid', async () => {
    const orderId = await buy('adinkra-tote', '0201234567');
    await page.getByTestId('cancel').click();

    await page.waitForURL(`${shop.url}/orders/${orderId}/cancelled`);
    await expect(page.getByTestId('heading').textContent()).resolves.toBe('Payment cancelled');
    const status = page.getByTestId('order-status');
    expect(await status.getAttribute('data-status')).toBe('cancelled');
    expect((await status.textContent())!).toContain('Not paid');
    await shoot('example-shop-cancelled.png');

    expect(await getOrder(shop.url, orderId)).toMatchObject({
      status: 'cancelled',
      paidAt: null,
      receipt: { status: 'not-sent' },
    });
    expect(sandbox.invoice(orderId)?.state).toBe('cancelled');
    expect(sandbox.deliveries({ clientReference: orderId })).toEqual([]);
    expect(sandbox.messages()).toEqual([]);
  });

  it('a failed payment shows on the order page, which offers to try again; paying then works', async () => {
    const orderId = await buy('shea-soap', '0241234567');
    await page.getByTestId('pay-fail').click();

    await page.waitForURL(`${shop.url}/orders/${orderId}`);
    // A failed attempt leaves the order awaiting payment, with a note and the retry link.
    await page.getByText('The payment did not go through. You can try again.').waitFor();
    expect(await page.getByTestId('order-status').getAttribute('data-status')).toBe('awaiting-payment');
    await page.getByTestId('retry').waitFor({ state: 'visible' });
    await page.locator('#retry-link').click();

    await page.waitForURL((url) => url.href.startsWith(`${sandbox.url}/pay/`));
    await page.getByTestId('pay-momo').click();
    await page.waitForURL(`${shop.url}/orders/${orderId}`);
    await page.locator('[data-testid="order-status"][data-status="paid"]').waitFor();
    expect(await getOrder(shop.url, orderId)).toMatchObject({ status: 'paid', amount: 12.5 });
  });
});
