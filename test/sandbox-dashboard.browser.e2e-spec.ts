/**
 * The sandbox's dashboard in real Chromium (Debian's, through playwright-core): it lists what the
 * sandbox saw as it happens (no reload), shows each callback delivery with its status code, and
 * re-sends one from its button: the receiver gets it twice and the new delivery appears live.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { createTestSandbox, type TestSandbox } from 'nestjs-hubtel/testing';
import { chromiumBinary, launchChromium, SCREENSHOT_DIR, type ChromiumSession } from './support/browser.js';
import { startUssdStandIn } from './support/ussd-service.fixtures.js';

const chromium = chromiumBinary('sandbox dashboard browser tests');

/** The merchant's callback endpoint: records every body, answers with `status`. */
async function receiver(status = 200) {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      bodies.push(body);
      res
        .writeHead(status, { 'Content-Type': 'application/json' })
        .end(status < 300 ? '{"received":true}' : '{"error":"down"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    bodies,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/hubtel`,
    close: () => new Promise((r) => server.close(r)),
  };
}

chromium.describe('sandbox dashboard in a real browser', () => {
  let sandbox: TestSandbox;
  let browser: ChromiumSession;
  let page: Page;
  let shop: Awaited<ReturnType<typeof receiver>>;
  let broken: Awaited<ReturnType<typeof receiver>>;
  let seq = 0;

  beforeAll(async () => {
    sandbox = await createTestSandbox();
    shop = await receiver(200);
    broken = await receiver(500);
    browser = await launchChromium(chromium.path!);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
    await shop?.close();
    await broken?.close();
  });

  beforeEach(async () => {
    sandbox.reset();
    page = await browser.newPage();
    page.setDefaultTimeout(20_000);
  });
  afterEach(() => page?.close());

  async function invoice(callbackUrl: string, amount = 25) {
    const clientReference = `dash-${++seq}`;
    const res = await fetch(`${sandbox.url}/items/initiate`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Basic ${Buffer.from('sandbox-api:sandbox-api-secret').toString('base64')}`,
      },
      body: JSON.stringify({
        totalAmount: amount,
        description: 'Kente mug',
        callbackUrl,
        returnUrl: 'http://127.0.0.1/r',
        cancellationUrl: 'http://127.0.0.1/c',
        clientReference,
      }),
    });
    if (res.status !== 200) throw new Error(`initiate answered ${res.status}`);
    return clientReference;
  }

  async function openDashboard() {
    await page.goto(`${sandbox.url}/_dashboard`);
    await page.locator('[data-testid="connection-status"][data-state="live"]').waitFor();
    // Survives only as long as the page is not reloaded.
    await page.evaluate(() => ((globalThis as unknown as { loadedOnce: number }).loadedOnce = 1));
  }

  const notReloaded = () =>
    page.evaluate(() => (globalThis as unknown as { loadedOnce?: number }).loadedOnce === 1);
  const deliveryRow = (id: string) => page.locator(`[data-testid="delivery-row"][data-id="${id}"]`);

  it('lists a callback delivery as it happens and re-sends it: the receiver gets it twice', async () => {
    const ref = await invoice(shop.url);
    await openDashboard();
    await expect(page.locator('[data-testid="invoice-row"]').getAttribute('data-reference')).resolves.toBe(
      ref,
    );
    await page.getByTestId('deliveries-empty').waitFor();

    // The payer pays after the page was opened: the delivery appears without a reload.
    const { deliveries } = await sandbox.pay(ref);
    const original = deliveries[0]!;
    const row = deliveryRow(original.id);
    await row.and(page.locator('[data-state="delivered"]')).waitFor();
    await expect(row.getByTestId('delivery-status-code').textContent()).resolves.toBe('200');
    await expect(row.getByTestId('delivery-kind').textContent()).resolves.toBe('checkout callback');
    await expect(row.getByTestId('delivery-url').textContent()).resolves.toBe(shop.url);
    await expect(row.getByTestId('delivery-reference').textContent()).resolves.toBe(ref);
    await expect(
      page.locator(`[data-testid="invoice-row"][data-reference="${ref}"]`).getAttribute('data-state'),
    ).resolves.toBe('paid');
    expect(shop.bodies).toHaveLength(1);

    // The body is one click away.
    await row.click();
    const details = page.locator(`[data-testid="delivery-details"][data-id="${original.id}"]`);
    await expect(details.getByTestId('delivery-body').textContent()).resolves.toContain(
      `"ClientReference": "${ref}"`,
    );
    await expect(details.getByTestId('delivery-response').textContent()).resolves.toContain(
      '"received": true',
    );

    // Re-send from the page.
    await row.getByTestId('redeliver-button').click();
    const resent = page.locator(`[data-testid="delivery-row"][data-redelivery-of="${original.id}"]`);
    await resent.and(page.locator('[data-state="delivered"]')).waitFor();
    await expect(resent.getByTestId('delivery-status-code').textContent()).resolves.toBe('200');
    await expect(page.getByTestId('notice').textContent()).resolves.toMatch(
      new RegExp(`Re-sent ${original.id} as dlv_[0-9a-f]+: HTTP 200`),
    );
    expect(shop.bodies).toHaveLength(2);
    expect(shop.bodies[1]).toBe(shop.bodies[0]);
    expect(sandbox.deliveries().filter((d) => d.redeliveryOf === original.id)).toHaveLength(1);
    await expect(page.locator('[data-testid="delivery-row"]').count()).resolves.toBe(2);
    await expect(
      page
        .locator(`[data-testid="invoice-row"][data-reference="${ref}"]`)
        .getByTestId('invoice-deliveries')
        .textContent(),
    ).resolves.toBe('2');
    // The counters follow on the event stream.
    await page.locator('[data-testid="stat-deliveries"] b').filter({ hasText: /^2$/ }).waitFor();
    expect(await notReloaded()).toBe(true);

    await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'sandbox-dashboard.png'), fullPage: true });
  });

  it('shows a failing endpoint’s status code, and a re-send that fails again', async () => {
    const ref = await invoice(broken.url, 9.5);
    await openDashboard();
    const { deliveries } = await sandbox.pay(ref);
    const row = deliveryRow(deliveries[0]!.id);
    await row.and(page.locator('[data-state="failed"]')).waitFor();
    await expect(row.getByTestId('delivery-status-code').textContent()).resolves.toBe('500');
    await row.getByTestId('redeliver-button').click();
    await page
      .locator(
        `[data-testid="delivery-row"][data-redelivery-of="${deliveries[0]!.id}"][data-status-code="500"]`,
      )
      .waitFor();
    await expect(page.getByTestId('notice').getAttribute('data-kind')).resolves.toBe('error');
    expect(broken.bodies).toHaveLength(2);
    expect(await notReloaded()).toBe(true);
  });

  it('shows which channel each session used, and flags a USSD screen over the size', async () => {
    await openDashboard();
    const service = await startUssdStandIn();
    try {
      const ussd = sandbox.serviceApp(service.url, { operator: 'vodafone-gh' });
      await ussd.start();
      const app = sandbox.serviceApp(service.url, { operator: 'Hubtel-Android' });
      await app.start();
      const long = sandbox.serviceApp(service.url, { serviceCode: 'long', strict: false });
      await long.start();
      const row = (id: string) => page.locator(`[data-testid="session-row"][data-id="${id}"]`);
      await row(long.sessionId).waitFor();
      await expect(row(ussd.sessionId).getAttribute('data-channel')).resolves.toBe('ussd');
      await expect(row(ussd.sessionId).getByTestId('session-channel').textContent()).resolves.toBe(
        'USSD · vodafone-gh',
      );
      await expect(row(app.sessionId).getByTestId('session-channel').textContent()).resolves.toBe(
        'app · Hubtel-Android',
      );
      await expect(row(long.sessionId).getByTestId('session-screen').textContent()).resolves.toMatch(
        /End\? ⚠ 202\/182 characters$/,
      );
      expect(await notReloaded()).toBe(true);
    } finally {
      await service.close();
    }
  });

  it('lists SMS (as text, never as HTML), sessions and fulfillment callbacks live, and empties on reset', async () => {
    await openDashboard();
    const hostile = '<img src=x onerror="document.title=\'pwned\'"> your code is 1234';
    const sms = await fetch(`${sandbox.url}/v1/messages/send`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Basic ${Buffer.from('sandbox-sms:sandbox-sms-secret').toString('base64')}`,
      },
      body: JSON.stringify({ From: 'Shop', To: '0241234567', Content: hostile }),
    });
    expect(sms.status).toBe(200);
    const message = page.locator('[data-testid="message-row"][data-to="233241234567"]');
    await message.waitFor();
    await expect(message.getByTestId('message-content').textContent()).resolves.toBe(hostile);
    await expect(page.locator('[data-testid="section-messages"] img').count()).resolves.toBe(0);
    expect(await page.title()).not.toBe('pwned');

    const callback = await fetch(`${sandbox.url}/callback`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ SessionId: 's-9', OrderId: 'o-9', ServiceStatus: 'success', MetaData: null }),
    });
    expect(callback.status).toBe(200);
    const fcb = page.locator('[data-testid="fulfillment-callback-row"]');
    await fcb.waitFor();
    await expect(fcb.getByTestId('fulfillment-callback-order').textContent()).resolves.toBe('o-9');
    await expect(fcb.getByTestId('fulfillment-callback-matched').textContent()).resolves.toBe(
      'no (unknown order)',
    );

    // A session the driver plays against a service that answers one prompt.
    const service = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw) as { SessionId: string };
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(
          JSON.stringify({
            SessionId: body.SessionId,
            Type: 'Response',
            Message: 'Enter the number to top up',
            Mask: null,
            MaskNextRoute: null,
            Item: null,
            ServiceCode: null,
            Label: null,
            DataType: 'input',
            FieldType: 'phone',
            FieldName: 'n',
            ClientState: null,
            Data: null,
          }),
        );
      });
    });
    await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
    try {
      const session = sandbox.serviceApp(`http://127.0.0.1:${(service.address() as AddressInfo).port}`);
      await session.start();
      const srow = page.locator(`[data-testid="session-row"][data-id="${session.sessionId}"]`);
      await srow.and(page.locator('[data-state="active"]')).waitFor();
      await expect(srow.getByTestId('session-screen').textContent()).resolves.toBe(
        'Enter the number to top up',
      );
    } finally {
      await new Promise((r) => service.close(r));
    }

    sandbox.reset();
    await page.getByTestId('messages-empty').waitFor();
    await page.getByTestId('sessions-empty').waitFor();
    await page.getByTestId('fulfillment-callbacks-empty').waitFor();
    expect(await notReloaded()).toBe(true);
  });
});

chromium.describe('sandbox dashboard of a sandbox serving two accounts', () => {
  let sandbox: TestSandbox;
  let browser: ChromiumSession;

  beforeAll(async () => {
    sandbox = await createTestSandbox({ accounts: [{ name: 'north' }] });
    browser = await launchChromium(chromium.path!);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
  });

  async function invoice(account: string, clientReference: string) {
    const { clientId, clientSecret } = sandbox.account(account).credentials.api;
    const res = await fetch(`${sandbox.url}/items/initiate`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      },
      body: JSON.stringify({
        totalAmount: 5,
        description: 'Kente mug',
        callbackUrl: 'http://127.0.0.1:9/hooks',
        returnUrl: 'http://127.0.0.1/r',
        cancellationUrl: 'http://127.0.0.1/c',
        clientReference,
      }),
    });
    expect(res.status).toBe(200);
  }

  it("the account filter shows one account's rows, and all again", async () => {
    const page = await browser.newPage();
    try {
      page.setDefaultTimeout(20_000);
      await invoice('default', 'main-1');
      await invoice('north', 'north-1');
      await page.goto(`${sandbox.url}/_dashboard`);
      await page.locator('[data-testid="connection-status"][data-state="live"]').waitFor();
      const rows = page.locator('[data-testid="invoice-row"]');
      const references = () =>
        rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-reference')).sort());
      await expect(references()).resolves.toEqual(['main-1', 'north-1']);
      await page.getByTestId('account-filter').selectOption('north');
      await expect(references()).resolves.toEqual(['north-1']);
      await expect(rows.first().getAttribute('data-account')).resolves.toBe('north');
      // A record that arrives while filtered is shown only when it is the account's.
      await invoice('default', 'main-2');
      await invoice('north', 'north-2');
      await page.locator('[data-testid="invoice-row"][data-reference="north-2"]').waitFor();
      await expect(references()).resolves.toEqual(['north-1', 'north-2']);
      await page.getByTestId('account-filter').selectOption('');
      await expect(references()).resolves.toEqual(['main-1', 'main-2', 'north-1', 'north-2']);
    } finally {
      await page.close();
    }
  });
});
