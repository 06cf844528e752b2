import { HubtelAuthenticationError } from 'nestjs-hubtel';
import type { CheckoutModuleOptions } from 'nestjs-hubtel/checkout';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { ADAPTERS, settle, startCheckoutApp, type CheckoutTestApp } from './support/checkout-harness.js';

/**
 * The CheckoutModule against the sandbox (the platform stand-in): the hosted payment page, the web
 * callbacks it sends, its status check and its fault injection. Everything goes over real HTTP in
 * both directions, on both adapters.
 */
describe.each(ADAPTERS)('CheckoutModule against the sandbox (%s)', (adapter) => {
  let sandbox: HubtelSandbox;
  let t: CheckoutTestApp;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
  });
  afterAll(() => sandbox.stop());
  afterEach(async () => {
    await t?.close();
    sandbox.reset();
  });

  function options(overrides: Partial<CheckoutModuleOptions> = {}): CheckoutModuleOptions {
    const urls = sandbox.baseUrls();
    return {
      ...sandbox.credentials.api,
      baseUrls: { checkout: urls.checkout, status: urls.status },
      posSalesId: sandbox.posSalesId,
      merchantAccountNumber: sandbox.posSalesId,
      returnUrl: 'https://shop.example.test/return',
      cancellationUrl: 'https://shop.example.test/cancel',
      retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
      handlers: { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 } },
      // Reconciliation is on (posSalesId); tests that need it shorten the delay themselves.
      reconciliation: { delayMs: 60_000, intervalMs: 20 },
      ...overrides,
    };
  }

  async function start(overrides: Partial<CheckoutModuleOptions> = {}) {
    t = await startCheckoutApp(adapter, options(overrides));
    return t;
  }

  async function invoice(ref: string, amount = 12.5) {
    return t.service.createInvoice({
      totalAmount: amount,
      description: 'Data bundle 5GB',
      clientReference: ref,
      callbackUrl: t.callbackUrl,
      payeeMobileNumber: '0241234567',
    });
  }

  it('creates an invoice the sandbox accepts as the contract request, with the fields it recorded', async () => {
    await start();
    const created = await invoice('sb-create');
    const recorded = sandbox.invoice(created.checkoutId)!;
    expect(recorded).toMatchObject({
      clientReference: 'sb-create',
      totalAmount: 12.5,
      description: 'Data bundle 5GB',
      callbackUrl: t.callbackUrl,
      returnUrl: 'https://shop.example.test/return',
      cancellationUrl: 'https://shop.example.test/cancel',
      payeeMobileNumber: '233241234567',
      merchantAccountNumber: sandbox.posSalesId,
      state: 'pending',
    });
    expect(created.checkoutUrl).toBe(recorded.checkoutUrl);
    expect(Object.keys(recorded.request).sort()).toEqual(
      [
        'PayeeMobileNumber',
        'callbackUrl',
        'cancellationUrl',
        'clientReference',
        'description',
        'merchantAccountNumber',
        'returnUrl',
        'totalAmount',
      ].sort(),
    );
  });

  it('pays through the hosted payment page: callback verified, confirmed by the status check, paid once, browser sent to returnUrl', async () => {
    await start();
    const created = await invoice('sb-page');
    const page = await fetch(created.checkoutUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('12.50');
    const paid = await fetch(`${created.checkoutUrl}/momo`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'phone=0241234567&channel=mtn-gh',
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe('https://shop.example.test/return');
    await t.handlers.waitFor('paid');
    await t.service.drain();
    expect(t.handlers.events.paid).toHaveLength(1);
    expect(t.handlers.events.paid[0]).toMatchObject({
      clientReference: 'sb-page',
      checkoutId: created.checkoutId,
      amount: 12.5,
      amountPaid: 12.5,
      source: 'callback',
      confirmedByStatusCheck: true,
      payment: { paymentType: 'mobilemoney' },
    });
    // Confirmed by the status check: its details only, never a number a callback claimed.
    expect(t.handlers.events.paid[0]!.payment).not.toHaveProperty('customerPhoneNumber');
    expect(t.handlers.events.paid[0]!.payment).not.toHaveProperty('mobileMoneyNumber');
    const delivery = sandbox.deliveries({ kind: 'checkout-callback', clientReference: 'sb-page' })[0]!;
    expect(delivery).toMatchObject({ state: 'delivered', statusCode: 200 });
    expect(await t.service.getInvoice('sb-page')).toMatchObject({ status: 'paid' });
  });

  it('reports a failed payment (2001) as failed, and the retry that pays as paid', async () => {
    await start();
    await invoice('sb-fail');
    await sandbox.pay('sb-fail', { outcome: 'failed' });
    await t.handlers.waitFor('failed');
    expect(t.handlers.events.failed[0]).toMatchObject({ clientReference: 'sb-fail', responseCode: '2001' });
    await sandbox.pay('sb-fail');
    await t.handlers.waitFor('paid');
    await t.service.drain();
    expect(t.handlers.events.failed).toHaveLength(1);
    expect(t.handlers.events.paid).toHaveLength(1);
  });

  it('runs the handler once when the platform sends the callback 10 times at once', async () => {
    await start();
    await invoice('sb-dup');
    await sandbox.pay('sb-dup', { fault: { duplicate: 10, concurrent: true } });
    await t.handlers.waitFor('paid');
    await sandbox.settled();
    await t.service.drain();
    await settle();
    expect(
      sandbox.deliveries({ clientReference: 'sb-dup' }).filter((d) => d.state === 'delivered'),
    ).toHaveLength(10);
    expect(t.handlers.paidCalls).toBe(1);
  });

  it('pays through the reconciler when the callback is dropped', async () => {
    await start({ reconciliation: { delayMs: 50, intervalMs: 20 } });
    await invoice('sb-drop');
    await sandbox.pay('sb-drop', { fault: { drop: true } });
    expect(sandbox.deliveries({ clientReference: 'sb-drop' })[0]).toMatchObject({ state: 'dropped' });
    await t.handlers.waitFor('paid');
    expect(t.handlers.events.paid[0]).toMatchObject({
      clientReference: 'sb-drop',
      source: 'status-check',
      confirmedByStatusCheck: true,
    });
  });

  it('rejects a callback with a wrong amount, and still learns of the real payment from the status check', async () => {
    await start({ reconciliation: { delayMs: 50, intervalMs: 20 } });
    await invoice('sb-amount', 40);
    await sandbox.pay('sb-amount', { fault: { amount: 0.4 } });
    await t.handlers.waitFor('rejected');
    expect(t.handlers.events.rejected[0]).toMatchObject({
      reason: 'AMOUNT_MISMATCH',
      amountClaimed: 0.4,
      amountExpected: 40,
    });
    await t.handlers.waitFor('paid');
    expect(t.handlers.events.paid).toHaveLength(1);
    expect(t.handlers.events.paid[0]).toMatchObject({ source: 'status-check', amountPaid: 40 });
  });

  it('rejects a callback with a wrong checkout id', async () => {
    await start();
    await invoice('sb-cid');
    await sandbox.pay('sb-cid', { fault: { checkoutId: true } });
    await t.handlers.waitFor('rejected');
    expect(t.handlers.events.rejected[0]).toMatchObject({
      reason: 'CHECKOUT_ID_MISMATCH',
      clientReference: 'sb-cid',
    });
    expect(t.handlers.paidCalls).toBe(0);
  });

  it('rejects a forged callback for a reference never created, answering it like any other', async () => {
    await start();
    await invoice('sb-forge');
    await sandbox.pay('sb-forge', { fault: { forge: true } });
    await t.handlers.waitFor('rejected');
    expect(t.handlers.events.rejected[0]).toMatchObject({ reason: 'UNKNOWN_REFERENCE' });
    expect(sandbox.deliveries({ kind: 'checkout-callback' }).at(-1)).toMatchObject({
      state: 'delivered',
      statusCode: 200,
    });
    await t.service.drain();
    expect(t.handlers.paidCalls).toBe(0);
  });

  it('emits paid once when a delayed callback and the reconciler race', async () => {
    await start({ reconciliation: { delayMs: 0, intervalMs: 20 } });
    await invoice('sb-race');
    await sandbox.pay('sb-race', { fault: { delayMs: 60, duplicate: 3, concurrent: true } });
    await t.handlers.waitFor('paid');
    await sandbox.settled();
    await t.service.drain();
    await settle(80);
    expect(t.handlers.paidCalls).toBe(1);
  });

  it('keeps checking through a status check that answers 503, then pays', async () => {
    await start({ reconciliation: { delayMs: 50, intervalMs: 20 }, retry: { maxAttempts: 1 } });
    await invoice('sb-503');
    sandbox.faults.add({ match: { api: 'status' }, status: 503, times: 3 });
    await sandbox.pay('sb-503', { fault: { drop: true } });
    await t.handlers.waitFor('paid');
    expect(t.handlers.events.paid[0]).toMatchObject({ clientReference: 'sb-503', source: 'status-check' });
  });

  it('reads the sandbox status check as typed, and a refund as Refunded', async () => {
    await start();
    await invoice('sb-status');
    await expect(t.service.getStatus('sb-status')).resolves.toMatchObject({
      clientReference: 'sb-status',
      paid: false,
    });
    await sandbox.pay('sb-status');
    await t.handlers.waitFor('paid');
    await expect(t.service.getStatus('sb-status')).resolves.toMatchObject({
      status: 'Paid',
      paid: true,
      amount: 12.5,
    });
    sandbox.refund('sb-status');
    await expect(t.service.getStatus('sb-status')).resolves.toMatchObject({
      status: 'Refunded',
      paid: false,
    });
  });

  it('surfaces wrong credentials as a typed authentication error', async () => {
    await start({ clientId: 'wrong', clientSecret: 'wrong-secret' });
    await expect(invoice('sb-auth')).rejects.toBeInstanceOf(HubtelAuthenticationError);
    expect(await t.service.getInvoice('sb-auth')).toBeUndefined();
  });
});
