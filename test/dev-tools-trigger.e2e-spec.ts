import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { createTestSandbox, runTriggerCli, type TestSandbox } from 'nestjs-hubtel/testing';
import { tsNodeArgs } from '../bench/loader/entry.mjs';
import { TRIGGER_CLI_USAGE } from '../libs/testing/src/cli/cli.usage.js';
import { parseTriggerCliArgs } from '../libs/testing/src/cli/trigger.args.js';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { CheckoutService } from 'nestjs-hubtel/checkout';
import { startBundleMerchant, stripAnsi, type BundleMerchant } from './support/dev-tools.fixtures.js';
import { standInMenu, startUssdStandIn, type UssdStandIn } from './support/ussd-service.fixtures.js';
import {
  getOrder,
  placeOrder,
  startExampleInProcess,
  waitForOrder,
  type InProcessExample,
} from './support/example-app.harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Runs `hubtel-trigger` as its own process, from the sources (no build step): what the bin adds to
 * runTriggerCli (the arguments, the exit code, the streams) is checked this way, once, with exit
 * code 1 (0 is any process's default: a bin that dropped the code would pass with it). The other
 * runs call runTriggerCli in this process (`trigger`): the same code, without starting a node.
 */
function triggerBin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...tsNodeArgs(path.join(root, 'libs/testing/src/cli/hubtel-trigger.ts')), ...args],
      { cwd: root, env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? ((error as { code?: number }).code ?? 1) : 0,
          stdout: stripAnsi(stdout),
          stderr: stripAnsi(stderr),
        }),
    );
  });
}

/** `hubtel-trigger` in this process, with the environment the bin would see. */
async function trigger(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const s = streams();
  s.io.stdin.end();
  const code = await runTriggerCli(args, { ...s.io, env: { ...process.env, NO_COLOR: '1' } });
  return { code, stdout: stripAnsi(s.out()), stderr: stripAnsi(s.err()) };
}

describe('hubtel-trigger against the running example app', () => {
  let sandbox: TestSandbox;
  let shop: InProcessExample;

  beforeAll(async () => {
    sandbox = await createTestSandbox();
    shop = await startExampleInProcess({ sandbox });
  }, 60_000);
  afterAll(async () => {
    await shop?.close();
    await sandbox?.stop();
  });

  const receiptsFor = (orderId: string) =>
    sandbox.messages().filter((m) => m.content.includes(`order ${orderId} `));

  it('a valid callback is handled: the order turns paid and its SMS receipt goes out', async () => {
    const { orderId } = await placeOrder(shop.url, { product: 'kente-mug', phone: '0241234567' });
    // The platform's side of a real payment (the shop confirms callbacks with the status check).
    await sandbox.markPaid(orderId);
    const run = await trigger(['checkout', shop.url, '--reference', orderId, '--sandbox', sandbox.url]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`POST ${shop.url}/hubtel/checkout/callback`);
    expect(run.stdout).toContain('HTTP 200 {"received":true}');
    const order = await waitForOrder(
      shop.url,
      orderId,
      (o) => o.status === 'paid' && o.receipt.status === 'sent',
    );
    expect(order.payment).toMatchObject({ amountPaid: order.amount, confirmedByStatusCheck: true });
    expect(receiptsFor(orderId)).toHaveLength(1);
  });

  it('--mark-paid: the sandbox marks the invoice paid without its own callback, and the triggered callback pays the order, confirmed by the status check', async () => {
    const statusChecks = () =>
      sandbox.requests().filter((r) => r.path === `/transactions/${sandbox.posSalesId}/status`).length;

    // Without it, the sandbox has not seen the invoice paid: the status check refuses the callback.
    // (Another order: the module treats a second paid callback for the same reference as a
    // duplicate of the refused one; its reconciler re-checks the invoice later.)
    const unpaid = await placeOrder(shop.url, { product: 'kente-mug', phone: '0241234567' });
    const unconfirmed = await trigger([
      'checkout',
      shop.url,
      '--reference',
      unpaid.orderId,
      '--sandbox',
      sandbox.url,
    ]);
    expect(unconfirmed.code).toBe(0);
    await shop.example.app.get(CheckoutService).drain();
    expect((await getOrder(shop.url, unpaid.orderId)).status).toBe('awaiting-payment');
    expect(sandbox.invoice(unpaid.orderId)!.state).toBe('pending');

    const { orderId } = await placeOrder(shop.url, { product: 'kente-mug', phone: '0241234567' });
    // A dry run sends nothing, to the sandbox either.
    const dry = streams();
    const markPaid = ['checkout', shop.url, '--reference', orderId, '--sandbox', sandbox.url, '--mark-paid'];
    expect(await runTriggerCli([...markPaid, '--dry-run'], dry.io)).toBe(0);
    expect(dry.out()).toContain('(dry run: the invoice was not marked paid)');
    expect(sandbox.invoice(orderId)!.state).toBe('pending');

    const checksBefore = statusChecks();
    const run = await trigger(markPaid);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`marked ${orderId} paid in the sandbox (its callback held back)`);
    expect(run.stdout).toContain('HTTP 200 {"received":true}');
    const order = await waitForOrder(
      shop.url,
      orderId,
      (o) => o.status === 'paid' && o.receipt.status === 'sent',
    );
    expect(order.payment).toMatchObject({ amountPaid: order.amount, confirmedByStatusCheck: true });
    expect(statusChecks()).toBeGreaterThan(checksBefore);
    // The sandbox sent no callback of its own: the order was paid by the triggered one.
    expect(sandbox.invoice(orderId)!.state).toBe('paid');
    expect(sandbox.deliveries({ clientReference: orderId }).map((d) => d.state)).toEqual(['dropped']);
    expect(receiptsFor(orderId)).toHaveLength(1);

    // Again: already paid is fine, and the duplicate changes nothing.
    const again = await trigger([...markPaid, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      markedPaid: 'already-paid',
      answers: [{ status: 200, body: { received: true } }],
    });
    await shop.example.app.get(CheckoutService).drain();
    expect(receiptsFor(orderId)).toHaveLength(1);
  }, 90_000); // three CLI runs and two payments

  it('--mark-paid --charge-bearer payer: the callback says what the payer paid, the order is paid once with gross, charges and net; --currency USD: it needs attention', async () => {
    const { orderId } = await placeOrder(shop.url, { product: 'kente-mug', phone: '0241234567' });
    const run = await trigger([
      'checkout',
      shop.url,
      '--reference',
      orderId,
      '--sandbox',
      sandbox.url,
      '--mark-paid',
      '--charge-bearer',
      'payer',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const paid = await waitForOrder(shop.url, orderId, (o) => o.status === 'paid');
    const invoice = sandbox.invoice(orderId)!;
    expect(invoice).toMatchObject({ chargeBearer: 'payer', amountAfterCharges: paid.amount });
    expect(invoice.amountPaid).toBeGreaterThan(paid.amount);
    expect(paid.payment).toMatchObject({
      amountPaid: invoice.amountPaid,
      charges: invoice.charges,
      net: paid.amount,
      chargesBorneBy: 'payer',
    });

    const other = await placeOrder(shop.url, { product: 'kente-mug', phone: '0241234567' });
    const usd = await trigger([
      'checkout',
      shop.url,
      '--reference',
      other.orderId,
      '--sandbox',
      sandbox.url,
      '--mark-paid',
      '--currency',
      'USD',
    ]);
    expect(usd.code).toBe(0);
    await waitForOrder(shop.url, other.orderId, (o) => o.status === 'needs-attention');
    expect(await shop.example.app.get(CheckoutService).getInvoice(other.orderId)).toMatchObject({
      status: 'attention',
      attention: { reason: 'CURRENCY_MISMATCH' },
    });
    expect(() =>
      parseTriggerCliArgs(['checkout', shop.url, '--reference', 'x', '--charge-bearer', 'payer']),
    ).toThrow('add --mark-paid');
  }, 90_000);

  it('--mark-paid for an invoice the payer cancelled: exit code 1, nothing sent', async () => {
    const { orderId } = await placeOrder(shop.url, { product: 'shea-soap', phone: '0241234567' });
    sandbox.cancel(orderId);
    const run = await trigger([
      'checkout',
      shop.url,
      '--reference',
      orderId,
      '--sandbox',
      sandbox.url,
      '--mark-paid',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot mark invoice "${orderId}" paid: it is cancelled`);
    expect(run.stdout).not.toContain('POST');
  });

  it('a duplicate is not handled twice: 6 copies at once, one paid order, one receipt', async () => {
    const { orderId } = await placeOrder(shop.url, { product: 'shea-soap', phone: '0201234567' });
    await sandbox.markPaid(orderId);
    const run = await trigger([
      'checkout-duplicate',
      shop.url,
      '--reference',
      orderId,
      '--sandbox',
      sandbox.url,
      '--copies',
      '6',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('6 answers: 6 × 200');
    await waitForOrder(shop.url, orderId, (o) => o.status === 'paid' && o.receipt.status === 'sent');
    await shop.example.app.get(CheckoutService).drain();
    expect(receiptsFor(orderId)).toHaveLength(1);
  });

  it.each(['unknown-reference', 'wrong-amount', 'wrong-checkout-id'])(
    'a forged callback (%s) is rejected: the order stays unpaid, nothing is sent',
    async (forge) => {
      const { orderId } = await placeOrder(shop.url, { product: 'adinkra-tote', phone: '0241234567' });
      const args = ['checkout-forged', shop.url, '--forge', forge];
      if (forge !== 'unknown-reference') args.push('--reference', orderId, '--sandbox', sandbox.url);
      const run = await trigger(args);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('HTTP 200 {"received":true}');
      await shop.example.app.get(CheckoutService).drain();
      const order = await getOrder(shop.url, orderId);
      expect(order.status).toBe('awaiting-payment');
      expect(order.payment).toBeNull();
      expect(receiptsFor(orderId)).toHaveLength(0);
    },
  );

  it('a malformed callback gets the app’s 400 and exit code 1', async () => {
    const run = await triggerBin([
      'checkout',
      `${shop.url}/hubtel/checkout/callback`,
      '--reference',
      'x'.repeat(40),
      '--checkout-id',
      'c',
      '--amount',
      '1',
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/HTTP 400 \{.*"HUBTEL_INVALID_BODY"/);
  });

  it('sends a fulfillment request for a data bundle, its payment recorded in the sandbox first (--mark-paid); copies are recorded once, fulfilled once', async () => {
    // A session that ended in AddToCart, played by the sandbox's driver (not paid through it).
    const session = sandbox.serviceApp(shop.url);
    await session.start();
    await session.reply('0241234567');
    await session.choose('DATA_3GB');
    expect(session.cart).toMatchObject({ Price: 12 });
    const orderId = `ord-${Date.now().toString(36)}`;
    const run = await trigger([
      'fulfillment',
      shop.url,
      '--session-id',
      session.sessionId,
      '--order-id',
      orderId,
      '--copies',
      '3',
      '--sandbox',
      sandbox.url,
      '--mark-paid',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`recorded the payment of session ${session.sessionId} in the sandbox`);
    expect(run.stdout).toContain(`fulfillment request for order ${orderId} of session ${session.sessionId}`);
    // The example app confirmed the payment with the sandbox's status check: the cart's GHS 12.
    expect(sandbox.session(session.sessionId)!.order).toMatchObject({ orderId, amount: 12, recorded: true });
    expect(run.stdout.match(/"Status":"received"/g)).toHaveLength(1);
    expect(run.stdout.match(/"Status":"duplicate"/g)).toHaveLength(2);
    const callback = await sandbox.waitForFulfillmentCallback((cb) => cb.orderId === orderId);
    expect(callback.serviceStatus).toBe('success');
    await sandbox.settled();
    expect(sandbox.fulfillmentCallbacks().filter((cb) => cb.orderId === orderId)).toHaveLength(1);
  });

  it('fulfillment-forged: an unpaid request is acknowledged, then refused: no bundle, no callback', async () => {
    const session = sandbox.serviceApp(shop.url);
    await session.start();
    await session.reply('0241234567');
    await session.choose('DATA_1GB');
    const orderId = `forged-${Date.now().toString(36)}`;
    const rejected = new Promise((resolve) =>
      shop.example.app.get(EventEmitter2).once('hubtel.service-app.rejected', resolve),
    );
    const run = await trigger([
      'fulfillment-forged',
      shop.url,
      '--session-id',
      session.sessionId,
      '--order-id',
      orderId,
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`forged (unpaid) fulfillment request for order ${orderId}`);
    expect(run.stdout).toMatch(/HTTP 200 .*"Status":"received"/);
    expect(await rejected).toMatchObject({ reason: 'NOT_PAID', orderId, sessionId: session.sessionId });
    await sandbox.settled();
    expect(sandbox.fulfillmentCallbacks().filter((cb) => cb.orderId === orderId)).toEqual([]);
  });

  it('a fulfillment request for a session with no cart is refused by the app (exit code 1)', async () => {
    const run = await trigger(['fulfillment', shop.url, '--session-id', 'no-such-session']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/HTTP 404 \{.*UNKNOWN_SESSION/);
  });

  it('sends a fulfillment callback to a platform receiver (the sandbox)', async () => {
    const run = await trigger([
      'fulfillment-callback',
      sandbox.url,
      '--session-id',
      's-1',
      '--order-id',
      'o-1',
      '--service-status',
      'failed',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      'HTTP 200 {"message":"Callback received","responseCode":"0000","data":null}',
    );
    expect(sandbox.fulfillmentCallbacks().at(-1)).toMatchObject({
      sessionId: 's-1',
      orderId: 'o-1',
      serviceStatus: 'failed',
      matched: false,
    });
  });

  it("--mark-paid for a session the sandbox has no cart for: exit code 1 with the sandbox's reason, nothing sent", async () => {
    const sessionId = `no-cart-${Date.now().toString(36)}`;
    const run = await trigger([
      'fulfillment',
      shop.url,
      '--session-id',
      sessionId,
      '--sandbox',
      sandbox.url,
      '--mark-paid',
    ]);
    // 1: the sandbox answered and refused (its usage text); 3 would say it could not be reached.
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `did not record the payment of session ${sessionId} (HTTP 400): Invalid service payment: amount is required: the sandbox knows no cart for this session`,
    );
    expect(run.stdout).not.toContain('POST ');
    expect(TRIGGER_CLI_USAGE).toMatch(/1 an answer was not 2xx, or the sandbox refused/);
  });

  it('--mark-paid with a sandbox that cannot be reached: exit code 3, naming the address and the cause', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    const run = await trigger([
      'fulfillment',
      shop.url,
      '--session-id',
      's1',
      '--sandbox',
      gone,
      '--mark-paid',
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(new RegExp(`Could not reach the sandbox at ${gone}: .*ECONNREFUSED`));
    expect(TRIGGER_CLI_USAGE).toMatch(
      /3 the URL \(no copy got\s+an answer\) or the sandbox could\s+not\s+be\s+reached/,
    );
  });

  it('says when the sandbox has no such invoice', async () => {
    const run = await trigger(['checkout', shop.url, '--reference', 'nobody', '--sandbox', sandbox.url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('has no invoice "nobody"');
  });
});

describe('hubtel-trigger against a small merchant app: what its handlers saw', () => {
  let sandbox: TestSandbox;
  let merchant: BundleMerchant;
  let seq = 0;

  beforeAll(async () => {
    sandbox = await createTestSandbox();
    merchant = await startBundleMerchant(sandbox);
  });
  afterAll(async () => {
    await merchant?.close();
    await sandbox?.stop();
  });

  /** An order of the shop: an invoice created through the app (the sandbox gave it a checkout id). */
  async function order(amount: number) {
    const clientReference = `trg-${Date.now().toString(36)}-${++seq}`;
    const created = await merchant.checkout.createInvoice({
      totalAmount: amount,
      description: 'Data bundle',
      clientReference,
    });
    return { ...created, amount };
  }
  const paidFor = (ref: string) => merchant.ledger.paid.filter((e) => e.clientReference === ref);

  it('a valid callback (given by --checkout-id and --amount) is handled once, confirmed by the status check', async () => {
    const o = await order(7.5);
    await sandbox.markPaid(o.clientReference, { phone: '0201234567' });
    const run = await trigger([
      'checkout-callback',
      merchant.url,
      '--reference',
      o.clientReference,
      '--checkout-id',
      o.checkoutId,
      '--amount',
      '7.50',
      '--phone',
      '0201234567',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `checkout callback (paid) for ${o.clientReference}: GHS 7.50, checkout ${o.checkoutId}`,
    );
    expect(run.stdout).toContain('HTTP 200 {"received":true}');
    await merchant.ledger.until(() => paidFor(o.clientReference).length === 1);
    expect(paidFor(o.clientReference)[0]).toMatchObject({
      amount: 7.5,
      amountPaid: 7.5,
      checkoutId: o.checkoutId,
      confirmedByStatusCheck: true,
    });
    // The receipt goes to the invoice's payee (the fixture's), never to a number a callback names.
    expect((await sandbox.waitForMessage((m) => m.content.includes(o.clientReference))).msisdn).toBe(
      '233241234567',
    );
  });

  it('a duplicate is not handled twice: 6 copies at once, one payment, one receipt', async () => {
    const o = await order(12);
    await sandbox.markPaid(o.clientReference);
    const run = await trigger([
      'checkout-duplicate',
      merchant.url,
      '--reference',
      o.clientReference,
      '--sandbox',
      sandbox.url,
      '--copies',
      '6',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`POST ${merchant.url}/hubtel/checkout/callback — 6 copies at once`);
    for (let i = 1; i <= 6; i++) expect(run.stdout).toContain(`#${i} HTTP 200 {"received":true}`);
    expect(run.stdout).toContain('6 answers: 6 × 200');
    await merchant.ledger.until(() => paidFor(o.clientReference).length === 1);
    await merchant.checkout.drain();
    expect(paidFor(o.clientReference)).toHaveLength(1);
    expect(sandbox.messages().filter((m) => m.content.includes(o.clientReference))).toHaveLength(1);
  });

  it.each([
    ['unknown-reference', 'UNKNOWN_REFERENCE'],
    ['wrong-amount', 'AMOUNT_MISMATCH'],
    ['wrong-checkout-id', 'CHECKOUT_ID_MISMATCH'],
  ])('a forged callback (%s) is rejected: answered 200 like any other, never paid', async (forge, reason) => {
    const o = await order(40);
    const rejectedBefore = merchant.ledger.rejected.length;
    const args = ['checkout-forged', merchant.url, '--forge', forge];
    if (forge !== 'unknown-reference') args.push('--reference', o.clientReference, '--sandbox', sandbox.url);
    const run = await trigger(args);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('forged callback');
    expect(run.stdout).toContain('HTTP 200 {"received":true}');
    await merchant.ledger.until(() => merchant.ledger.rejected.length > rejectedBefore);
    const rejection = merchant.ledger.rejected.at(-1)!;
    expect(rejection.reason).toBe(reason);
    // The trigger claimed half of the 40 invoiced.
    if (forge === 'wrong-amount') expect(rejection.amountClaimed).toBe(20);
    await merchant.checkout.drain();
    expect(paidFor(o.clientReference)).toHaveLength(0);
    expect((await merchant.checkout.getInvoice(o.clientReference))!.status).toBe('pending');
  });

  it('--mark-paid: a paid invoice still refuses a forged amount (the status check says Paid, the callback is rejected)', async () => {
    const o = await order(30);
    const rejectedBefore = merchant.ledger.rejected.length;
    const run = await trigger([
      'checkout-forged',
      merchant.url,
      '--forge',
      'wrong-amount',
      '--reference',
      o.clientReference,
      '--sandbox',
      sandbox.url,
      '--mark-paid',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`marked ${o.clientReference} paid in the sandbox`);
    expect(sandbox.invoice(o.clientReference)!.state).toBe('paid');
    await merchant.ledger.until(() => merchant.ledger.rejected.length > rejectedBefore);
    expect(merchant.ledger.rejected.at(-1)).toMatchObject({ reason: 'AMOUNT_MISMATCH', amountClaimed: 15 });
    await merchant.checkout.drain();
    expect(paidFor(o.clientReference)).toHaveLength(0);
  });
});

/** In-memory streams for the in-process runs. */
function streams() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  return { io: { stdin: new PassThrough(), stdout, stderr, env: {} }, out: () => out, err: () => err };
}

describe('hubtel-trigger service-flow: one request as a USSD phone or the app sends it', () => {
  let sandbox: TestSandbox;
  let service: UssdStandIn;

  beforeAll(async () => {
    sandbox = await createTestSandbox();
    service = await startUssdStandIn();
    service.callbackUrl = `${sandbox.url}/callback`;
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.stop();
  });

  it('shows Message only on USSD (the telco default), sends the number typed, and follows a Release cart to payment and fulfillment', async () => {
    const sessionId = 'ussd-trigger-1';
    const start = await trigger([
      'service-flow',
      service.url,
      '--session-id',
      sessionId,
      '--operator',
      'MTN',
    ]);
    expect(start.stderr).toBe('');
    expect(start.code).toBe(0);
    expect(start.stdout).toContain(
      `service-flow initiation of session ${sessionId} from 233******567 (MTN, USSD)`,
    );
    expect(start.stdout).toContain(`POST ${service.url}/api/service-flow`);
    expect(start.stdout).toContain(
      'HTTP 200 Type Response\n── USSD 36/182 ──\nEnter the number that gets the data:\n',
    );
    expect(start.stdout).not.toContain('"DataType"'); // the phone never sees the JSON

    const next = (message: string) =>
      trigger([
        'service-flow',
        service.url,
        '--session-id',
        sessionId,
        '--type',
        'Response',
        '--message',
        message,
      ]);
    const menu = await next('0241234567');
    expect(menu.code).toBe(0);
    expect(menu.stdout).toContain(`${standInMenu('0241234567', 0)}\n`);
    expect(menu.stdout).not.toContain('Display');
    const cart = await next('2');
    expect(service.flowRequests.filter((r) => r.SessionId === sessionId).map((r) => r.Message)).toEqual([
      '',
      '0241234567',
      '2',
    ]);
    expect(cart.code).toBe(0);
    expect(cart.stdout).toContain('HTTP 200 Type Release');
    expect(cart.stdout).toContain(
      'You are buying 2GB - GHS 10.00 for 0241234567. Approve the payment prompt.',
    );
    expect(cart.stdout).toContain('Cart: 2GB data bundle × 1 @ GHS 10.00 = GHS 10.00');
    expect(cart.stdout).toContain(
      `pay it: hubtel-trigger fulfillment ${service.url} --session-id ${sessionId} --sandbox <sandbox-url> --mark-paid --amount 10.00`,
    );

    // The command it printed: the payment recorded in the sandbox, the fulfillment request sent.
    const paid = await trigger([
      'fulfillment',
      service.url,
      '--session-id',
      sessionId,
      '--sandbox',
      sandbox.url,
      '--mark-paid',
      '--amount',
      '10.00',
    ]);
    expect(paid.code).toBe(0);
    expect(service.fulfillments.at(-1)).toMatchObject({ SessionId: sessionId });
    const callback = await sandbox.waitForFulfillmentCallback((c) => c.sessionId === sessionId);
    expect(callback.serviceStatus).toBe('success');
  }, 90_000);

  it('flags a screen over the size with exit code 1 (182 GSM-7, 70 with a non-GSM character, --screen-size)', async () => {
    const long = await trigger(['service-flow', service.url, '--service-code', 'long']);
    expect(long.code).toBe(1);
    expect(long.stdout).toContain('── USSD 202/182 TOO LONG ──');
    expect(long.stdout).toContain('⚠ screen too long: 202 characters, a USSD screen holds 182');
    const unicode = await trigger(['service-flow', service.url, '--service-code', 'unicode', '--json']);
    expect(unicode.code).toBe(1);
    expect(JSON.parse(unicode.stdout).screens).toEqual([
      { copy: 1, length: 79, limit: 70, gsm7: false, fits: false },
    ]);
    const roomy = await trigger([
      'service-flow',
      service.url,
      '--service-code',
      'long',
      '--screen-size',
      '300',
    ]);
    expect(roomy.code).toBe(0);
    expect(roomy.stdout).toContain('── USSD 202/300 ──');
  }, 90_000);

  it('plays the app for a non-telco operator (the answer as is), and tells the service USSD when --channel ussd says so', async () => {
    const app = await trigger(['service-flow', service.url, '--operator', 'Hubtel-Android']);
    expect(app.code).toBe(0);
    expect(app.stdout).toContain('(Hubtel-Android, app)');
    expect(app.stdout).toMatch(/HTTP 200 \{"SessionId":/);
    expect(app.stdout).not.toContain('── USSD');
    expect(service.flowRequests.at(-1)).not.toHaveProperty('Platform');

    const ussd = await trigger([
      'service-flow',
      service.url,
      '--operator',
      'Hubtel-Android',
      '--channel',
      'ussd',
    ]);
    expect(ussd.code).toBe(0);
    expect(ussd.stdout).toContain('── USSD 36/182 ──');
    expect(service.flowRequests.at(-1)).toMatchObject({ Operator: 'Hubtel-Android', Platform: 'USSD' });

    const bad = await trigger(['service-flow', service.url, '--channel', 'sms']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--channel must be ussd or app for service-flow, got "sms"');
    const misplaced = await trigger(['fulfillment', service.url, '--session-id', 's', '--operator', 'mtn']);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--operator goes with the service-flow kind');
  }, 90_000);
});

describe('hubtel-trigger: arguments, dry runs and unreachable URLs', () => {
  it.each([
    [[], 'expected <kind> <url>'],
    [['refund', 'http://a.test'], 'unknown kind "refund"'],
    [['checkout', 'not-a-url', '--reference', 'r'], 'must be an absolute http(s) URL'],
    [['checkout', 'http://a.test'], 'needs --reference'],
    [['checkout', 'http://a.test', '--reference', 'r', '--amount', '1'], 'needs --checkout-id'],
    [['checkout', 'http://a.test', '--reference', 'r', '--checkout-id', 'c'], 'needs --amount'],
    [
      ['checkout', 'http://a.test', '--reference', 'r', '--checkout-id', 'c', '--amount', '1.234'],
      'at most 2 decimals',
    ],
    [
      [
        'checkout',
        'http://a.test',
        '--reference',
        'r',
        '--checkout-id',
        'c',
        '--amount',
        '1',
        '--outcome',
        'maybe',
      ],
      '--outcome must be paid or failed',
    ],
    [
      [
        'checkout-duplicate',
        'http://a.test',
        '--reference',
        'r',
        '--checkout-id',
        'c',
        '--amount',
        '1',
        '--copies',
        '1',
      ],
      'at least 2',
    ],
    [['checkout-forged', 'http://a.test', '--forge', 'wrong-amount', '--reference', 'r'], 'needs --amount'],
    [['checkout-forged', 'http://a.test', '--forge', 'teleport'], '--forge must be one of'],
    [['checkout', 'http://a.test', '--forge', 'wrong-amount'], '--forge goes with the checkout-forged kind'],
    [['checkout', 'http://a.test', '--reference', 'r', '--mark-paid'], '--mark-paid needs --sandbox'],
    [
      [
        'checkout',
        'http://a.test',
        '--reference',
        'r',
        '--sandbox',
        'http://s.test',
        '--mark-paid',
        '--outcome',
        'failed',
      ],
      '--mark-paid goes with --outcome paid',
    ],
    [
      ['checkout-forged', 'http://a.test', '--sandbox', 'http://s.test', '--mark-paid'],
      '--forge unknown-reference names none',
    ],
    [
      ['fulfillment', 'http://a.test', '--session-id', 's', '--mark-paid'],
      '--mark-paid needs --sandbox (the sandbox the app asks for the payment status)',
    ],
    [['fulfillment', 'http://a.test'], 'needs --session-id'],
    [
      ['fulfillment', 'http://a.test', '--session-id', 's', '--amount', '3'],
      '--sandbox and --amount go with --mark-paid',
    ],
    [
      [
        'fulfillment-forged',
        'http://a.test',
        '--session-id',
        's',
        '--sandbox',
        'http://s.test',
        '--mark-paid',
      ],
      'fulfillment-forged sends a request nobody paid for',
    ],
    [
      ['fulfillment', 'http://a.test', '--session-id', 's', '--phone', '0241234567'],
      '--phone is a checkout option',
    ],
    [['fulfillment-callback', 'http://a.test', '--session-id', 's'], 'needs --order-id'],
    [
      ['fulfillment', 'http://a.test', '--session-id', 's', '--header', 'nocolon'],
      '--header must be "Name: value"',
    ],
    [['service-flow', 'http://a.test', '--amount', '3'], '--amount does not go with service-flow'],
    [['service-flow', 'http://a.test', '--mobile', 'abc'], '--mobile must be a phone number'],
    [['service-flow', 'http://a.test', '--screen-size', '5'], '--screen-size must be a whole number from 10'],
    [
      ['checkout', 'http://a.test', '--reference', 'r', '--message', '1'],
      '--message goes with the service-flow kind',
    ],
    [['checkout-forged', 'http://a.test', '--account', 'North'], '--account must be an account name'],
    [
      ['checkout-forged', 'http://a.test/hooks/pay', '--account', 'north'],
      "--account goes with <url> as your app's origin",
    ],
    [
      ['fulfillment-callback', 'http://a.test', '--order-id', 'o', '--account', 'north'],
      'fulfillment-callback goes to the platform',
    ],
  ] as [string[], string][])('refuses %j with exit code 2', async (argv, message) => {
    const s = streams();
    expect(await runTriggerCli(argv, s.io)).toBe(2);
    expect(s.err()).toContain(message);
    expect(s.err()).toContain('Usage: hubtel-trigger');
  });

  it("service-flow: the platform's request with its defaults; the channel by the operator, or Platform USSD when told", async () => {
    const dry = async (argv: string[]) => {
      const s = streams();
      expect(
        await runTriggerCli(['service-flow', 'http://a.test', '--dry-run', '--json', ...argv], s.io),
      ).toBe(0);
      return JSON.parse(s.out()) as { url: string; body: Record<string, unknown> };
    };
    const start = await dry([]);
    expect(start.url).toBe('http://a.test/api/service-flow');
    expect(start.body).toMatchObject({
      Sequence: '1',
      Type: 'initiation',
      Message: '',
      ServiceCode: 'sandbox-service',
      Operator: 'mtn',
      ClientState: '',
      Mobile: '233241234567',
    });
    expect(start.body).not.toHaveProperty('Platform');
    const typed = await dry([
      '--type',
      'Response',
      '--message',
      '2',
      '--session-id',
      's1',
      '--mobile',
      '0201234567',
    ]);
    expect(typed.body).toMatchObject({
      Type: 'Response',
      Message: '2',
      SessionId: 's1',
      Mobile: '233201234567',
    });
    expect(typed.body).not.toHaveProperty('Sequence');
    expect((await dry(['--operator', 'Hubtel-Android', '--channel', 'USSD'])).body).toMatchObject({
      Operator: 'Hubtel-Android',
      Platform: 'USSD',
    });
    expect(
      parseTriggerCliArgs(['service-flow', 'http://a.test', '--operator', 'Safaricom-KE']),
    ).toMatchObject({
      options: { serviceFlow: { channel: 'ussd' } },
    });
    expect(parseTriggerCliArgs(['service-flow', 'http://a.test', '--operator', 'Hubtel-iOS'])).toMatchObject({
      options: { serviceFlow: { channel: 'app' } },
    });
  });

  it('prints the contract body on a dry run, sending nothing', async () => {
    const s = streams();
    expect(
      await runTriggerCli(
        [
          'checkout',
          'http://a.test',
          '--reference',
          'r-1',
          '--checkout-id',
          'c-1',
          '--amount',
          '10',
          '--outcome',
          'failed',
          '--json',
          '--dry-run',
        ],
        s.io,
      ),
    ).toBe(0);
    const printed = JSON.parse(s.out());
    expect(printed).toMatchObject({
      kind: 'checkout',
      url: 'http://a.test/hubtel/checkout/callback',
      copies: 1,
    });
    expect(printed.body).toMatchObject({
      ResponseCode: '2001',
      Status: 'Failed',
      Data: { CheckoutId: 'c-1', ClientReference: 'r-1', Amount: 10, Status: 'Failed' },
    });
    const f = streams();
    expect(
      await runTriggerCli(
        ['fulfillment', 'http://a.test/hook/fulfil', '--session-id', 's', '--order-id', 'o', '--dry-run'],
        f.io,
      ),
    ).toBe(0);
    expect(f.out()).toContain('POST http://a.test/hook/fulfil\n');
    expect(f.out()).toContain('"ExtraData": {}');
    expect(f.out()).toContain('"OrderInfo": null');
    // A named account's route: the module's path (or --path) with the account after it.
    const named = async (argv: string[]) => {
      const n = streams();
      expect(await runTriggerCli([...argv, '--dry-run', '--json'], n.io)).toBe(0);
      return (JSON.parse(n.out()) as { url: string }).url;
    };
    await expect(named(['checkout-forged', 'http://a.test', '--account', 'north'])).resolves.toBe(
      'http://a.test/hubtel/checkout/callback/north',
    );
    await expect(
      named(['service-flow', 'http://a.test', '--path', '/ussd/', '--account', 'south-1']),
    ).resolves.toBe('http://a.test/ussd/south-1');
    await expect(named(['checkout-forged', 'http://a.test', '--account', 'default'])).resolves.toBe(
      'http://a.test/hubtel/checkout/callback',
    );
  });

  it('sends headers and a custom path, reports JSON answers, and exits 3 when nothing listens', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const urls: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers);
      urls.push(req.url!);
      req.resume();
      req.on('end', () => res.writeHead(503, { 'Content-Type': 'application/json' }).end('{"error":"busy"}'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const s = streams();
      expect(
        await runTriggerCli(
          ['checkout-forged', url, '--path', '/shop/hooks/hubtel', '-H', 'X-Trace: t-1', '--json'],
          s.io,
        ),
      ).toBe(1);
      const report = JSON.parse(s.out());
      expect(report.answers).toEqual([
        { copy: 1, status: 503, body: { error: 'busy' }, durationMs: expect.any(Number) },
      ]);
      expect(urls).toEqual(['/shop/hooks/hubtel']);
      expect(seen[0]).toMatchObject({
        'x-trace': 't-1',
        'cache-control': 'no-cache',
        'content-type': 'application/json',
      });
    } finally {
      await new Promise((r) => server.close(r));
    }
    const s = streams();
    expect(await runTriggerCli(['checkout-forged', url], s.io)).toBe(3);
    expect(s.out()).toMatch(/✗ POST .*ECONNREFUSED/);
    expect(
      parseTriggerCliArgs(['checkout-duplicate', url, '--reference', 'r', '--sandbox', url]),
    ).toMatchObject({ options: { copies: 2 } });
  });
});
