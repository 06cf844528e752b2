import type { CheckoutModuleOptions } from 'nestjs-hubtel/checkout';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { CaptureLogger } from './support/capture-logger.js';
import {
  ADAPTERS,
  callbackBody,
  settle,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';
import { eventually } from './support/job-settle.js';
import { storeFixture } from './support/test-stores.js';

/**
 * Forged callbacks that used to hold back a genuine payment (issue 11), against the sandbox over
 * real HTTP, with reconciliation OFF: only the callback path can deliver the payment here.
 */
describe.each(ADAPTERS)('checkout forgeries against the sandbox (%s)', (adapter) => {
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

  type Recheck = { attempts?: number; delayMs?: number; maxDelayMs?: number; minIntervalMs?: number };

  /**
   * Checks of one invoice are not spaced here unless a test says so (`minIntervalMs`): what
   * spacing costs a genuine payment is checkout-forged-early's subject.
   */
  function options(recheck: Recheck): CheckoutModuleOptions {
    const urls = sandbox.baseUrls();
    return {
      ...sandbox.credentials.api,
      baseUrls: { checkout: urls.checkout, status: urls.status },
      posSalesId: sandbox.posSalesId,
      returnUrl: 'https://shop.example.test/return',
      cancellationUrl: 'https://shop.example.test/cancel',
      retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
      handlers: { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 } },
      reconciliation: { enabled: false },
      verification: { recheck: { minIntervalMs: 0, ...recheck } },
    };
  }

  async function start(recheck: Recheck, logger?: CaptureLogger) {
    t = await startCheckoutApp(adapter, options(recheck), {}, undefined, logger ?? false);
    return t;
  }

  async function invoice(ref: string) {
    return t.service.createInvoice({
      totalAmount: 12.5,
      description: 'Data bundle 5GB',
      clientReference: ref,
      callbackUrl: t.callbackUrl,
    });
  }

  /** When each status check the sandbox has answered so far came. */
  function statusCheckTimes(): number[] {
    return sandbox
      .requests()
      .filter((r) => r.api === 'status' && r.statusCode !== null)
      .map((r) => Date.parse(r.at));
  }

  /** Status checks the sandbox has answered so far. */
  function statusChecks(): number {
    return statusCheckTimes().length;
  }

  async function untilStatusChecks(count: number): Promise<void> {
    while (statusChecks() < count) await settle(5);
  }

  /** A status-check answer for the sandbox to give instead of its own. */
  function statusAnswer(ref: string, data: Record<string, unknown>) {
    return {
      message: 'Successful',
      responseCode: '0000',
      data: {
        date: new Date().toISOString(),
        status: 'Unpaid',
        transactionId: null,
        externalTransactionId: null,
        paymentMethod: null,
        clientReference: ref,
        currencyCode: 'GHS',
        amount: 12.5,
        charges: 0,
        amountAfterCharges: 0,
        isFulfilled: false,
        ...data,
      },
    };
  }

  it('a forged early "Success" does not hold back the genuine payment: paid once, at once, without the reconciler', async () => {
    // Re-checks a minute apart: the genuine callback must not wait for them.
    await start({ attempts: 3, delayMs: 60_000, maxDelayMs: 60_000 });
    const created = await invoice('fg-early');
    // Right reference, checkout id and amount, before the payer paid; the payer's number differs.
    const forged = await t.post(
      callbackBody({ ref: 'fg-early', checkoutId: created.checkoutId, amount: 12.5 }),
    );
    expect(forged.status).toBe(200);
    await untilStatusChecks(1); // the forged claim was checked: Unpaid
    expect(t.handlers.events.paid).toHaveLength(0);

    await sandbox.pay('fg-early', { phone: '0201234567' });
    await t.service.drain();
    expect(t.handlers.paidCalls).toBe(1);
    expect(t.handlers.events.paid[0]).toMatchObject({
      clientReference: 'fg-early',
      source: 'callback',
      confirmedByStatusCheck: true,
      amountPaid: 12.5,
    });
    // No callback's number at all (the forger's or the genuine one's): nothing verifies them.
    expect(t.handlers.events.paid[0]!.payment).not.toHaveProperty('customerPhoneNumber');
    expect(t.handlers.events.paid[0]!.payment).not.toHaveProperty('mobileMoneyNumber');
    expect(await t.service.getInvoice('fg-early')).toMatchObject({ status: 'paid' });
    // One check for the forged claim, one for the genuine callback: no backoff was waited out.
    expect(statusChecks()).toBe(2);
    await settle();
    expect(t.handlers.paidCalls).toBe(1);
  });

  it('a forged "Success" that was rejected leaves nothing behind: the genuine callback is confirmed afresh', async () => {
    await start({ attempts: 1, delayMs: 5, maxDelayMs: 5 });
    const created = await invoice('fg-after');
    await t.post(callbackBody({ ref: 'fg-after', checkoutId: created.checkoutId, amount: 12.5 }));
    await t.service.drain();
    expect(t.handlers.events.rejected).toHaveLength(1);
    expect(t.handlers.events.rejected[0]).toMatchObject({
      reason: 'NOT_CONFIRMED',
      clientReference: 'fg-after',
    });
    expect(statusChecks()).toBe(2); // the check and its one re-check

    await sandbox.pay('fg-after');
    await t.service.drain();
    expect(t.handlers.paidCalls).toBe(1);
    expect(t.handlers.events.paid[0]).toMatchObject({
      clientReference: 'fg-after',
      confirmedByStatusCheck: true,
    });
  });

  it('a forged "Success" whose confirmation gave up (status check down) does not hold back the genuine payment', async () => {
    await start({ attempts: 0 });
    const created = await invoice('fg-dead');
    const down = sandbox.faults.add({ match: { api: 'status' }, status: 503 });
    await t.post(callbackBody({ ref: 'fg-dead', checkoutId: created.checkoutId, amount: 12.5 }));
    await t.handlers.waitFor('dead');
    await t.service.drain();
    expect(t.handlers.events.dead[0]).toMatchObject({ key: 'fg-dead:paid' });
    down.remove();

    await sandbox.pay('fg-dead');
    await t.service.drain();
    expect(t.handlers.paidCalls).toBe(1);
    expect(t.handlers.events.paid[0]).toMatchObject({
      clientReference: 'fg-dead',
      confirmedByStatusCheck: true,
    });
  });

  const SPACING_MS = 1_000;
  it('copies of a callback cost one check per minIntervalMs and do not end the round early; the genuine callback after them still counts', async () => {
    const logger = new CaptureLogger();
    // One re-check 1 s after the latest callback; checks of the invoice at least 1 s apart (ten
    // copies sent at once take a small part of it; the test waits out two spacings).
    await start(
      { attempts: 1, delayMs: SPACING_MS, maxDelayMs: SPACING_MS, minIntervalMs: SPACING_MS },
      logger,
    );
    const created = await invoice('fg-copies');
    const forged = callbackBody({ ref: 'fg-copies', checkoutId: created.checkoutId, amount: 12.5 });
    await t.post(forged);
    await untilStatusChecks(1);
    const answers = await Promise.all(Array.from({ length: 10 }, () => t.post(forged)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await untilStatusChecks(2);
    // The copies wait for the spacing, all ten behind one check: none within it, however late the
    // copies were sent on a loaded machine.
    const [first] = statusCheckTimes();
    expect(statusCheckTimes().filter((at) => at < first! + SPACING_MS)).toEqual([first]);
    await settle(200);
    expect(statusChecks()).toBe(2);
    // The round is still the first one: copies never end it early to start others.
    expect((await t.service.getInvoice('fg-copies'))!.confirmRound).toBeUndefined();
    expect(t.handlers.events.rejected).toHaveLength(0);

    // The genuine callback while the round waits for its next check: confirmed by it.
    await sandbox.pay('fg-copies');
    await t.service.drain();
    expect(t.handlers.paidCalls).toBe(1);
    const at = statusCheckTimes();
    expect(
      at
        .slice(1)
        .map((time, i) => time - at[i]!)
        .filter((gap) => gap < SPACING_MS),
    ).toEqual([]);
    const before = statusChecks();
    await t.post(forged); // after the payment: a duplicate, ignored without a status check, and said so
    await t.service.drain();
    expect(statusChecks()).toBe(before);
    expect(t.handlers.paidCalls).toBe(1);
    expect(
      logger.lines.some(
        (l) => l.level === 'debug' && /Duplicate paid callback for fg-copies ignored/.test(l.message),
      ),
    ).toBe(true);
  });

  it('120 copies while the confirmation waits: one "checking its status again now" line per status check made, not per copy', async () => {
    const logger = new CaptureLogger();
    // The re-check a minute after the latest callback; copies checked at most every 200 ms.
    await start({ attempts: 1, delayMs: 60_000, maxDelayMs: 60_000, minIntervalMs: 200 }, logger);
    const created = await invoice('fg-many');
    const forged = callbackBody({ ref: 'fg-many', checkoutId: created.checkoutId, amount: 12.5 });
    await t.post(forged);
    await untilStatusChecks(1); // the first check: Unpaid, the next one a minute away
    const answers = await Promise.all(Array.from({ length: 120 }, () => t.post(forged)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await untilStatusChecks(2);
    // Until the woken checks are over: no new one for a while.
    for (let seen = -1; seen !== statusChecks();) {
      seen = statusChecks();
      await settle(300);
    }
    const again = () =>
      logger.lines.filter(
        (l) => /fg-many/.test(l.message) && /checking its status again now/.test(l.message),
      );
    // Every check after the first was made for copies (the scheduled one is a minute away). A line
    // is written as its check is sent: a check still on its way (a loaded machine) is awaited.
    await eventually(() => again().length === statusChecks() - 1, 'one line per check', 5_000).catch(
      () => undefined,
    );
    expect(again()).toHaveLength(statusChecks() - 1);
    expect(again().length).toBeLessThan(120);
  });

  // Two instances share a store only on Redis (the memory store is one process's); their jobs
  // run on BullMQ, where the waiting check is a delayed job that a wake promotes for any worker.
  const redis = storeFixture('redis');
  redis.describe('on Redis, jobs on BullMQ', () => {
    afterAll(() => redis.dispose());

    it('two instances sharing a store: the genuine callback reaching the other instance is checked at once', async () => {
      const store = await redis.create();
      const waitLong = { attempts: 1, delayMs: 60_000, maxDelayMs: 60_000 };
      const start = () =>
        startCheckoutApp(
          adapter,
          { ...options(waitLong), store },
          {},
          undefined,
          false,
          redis.jobRunnerImports(),
        );
      t = await start();
      const other = await start();
      const paidCalls = () => t.handlers.paidCalls + other.handlers.paidCalls;
      try {
        // The platform calls the other instance; the forger calls this one.
        const created = await t.service.createInvoice({
          totalAmount: 12.5,
          description: 'Data bundle 5GB',
          clientReference: 'fg-two',
          callbackUrl: other.callbackUrl,
        });
        await t.post(callbackBody({ ref: 'fg-two', checkoutId: created.checkoutId, amount: 12.5 }));
        await untilStatusChecks(1);
        expect(paidCalls()).toBe(0); // the forged callback's check found nothing paid: it waits 60 s
        await sandbox.pay('fg-two');
        // Checked again at once (not after the 60 s wait), by whichever instance's worker takes it.
        await eventually(() => paidCalls() === 1, 'the paid handler ran', 20_000);
        const paid = [...t.handlers.events.paid, ...other.handlers.events.paid];
        expect(paid).toHaveLength(1);
        expect(paid[0]).toMatchObject({ clientReference: 'fg-two', confirmedByStatusCheck: true });
        expect(await t.service.getInvoice('fg-two')).toMatchObject({ status: 'paid' });
        expect(await other.service.getInvoice('fg-two')).toMatchObject({ status: 'paid' });
      } finally {
        await other.close();
      }
      await t.close();
      expect(paidCalls()).toBe(1);
    });
  });

  it('a status check lagging behind its own callback is re-checked, and the payment counted', async () => {
    await start({ attempts: 3, delayMs: 10, maxDelayMs: 40 });
    await invoice('fg-lag');
    // The platform's status check does not show the payment yet when its callback arrives.
    sandbox.faults.add({
      match: { api: 'status' },
      status: 200,
      body: statusAnswer('fg-lag', { status: 'Unpaid' }),
      times: 2,
    });
    await sandbox.pay('fg-lag');
    await t.service.drain();
    expect(t.handlers.events.rejected).toHaveLength(0);
    expect(t.handlers.paidCalls).toBe(1);
    expect(t.handlers.events.paid[0]).toMatchObject({
      clientReference: 'fg-lag',
      source: 'callback',
      confirmedByStatusCheck: true,
    });
    expect(statusChecks()).toBe(3);
  });

  it('a forged "failed" callback does not end the invoice: the payer still pays it', async () => {
    await start({ attempts: 1, delayMs: 5, maxDelayMs: 5 });
    const created = await invoice('fg-failed');
    const forged = callbackBody({ ref: 'fg-failed', checkoutId: created.checkoutId, status: 'Failed' });
    forged.Data.Description = 'Call 0244000000 to finish paying';
    await t.post(forged);
    await t.handlers.waitFor('failed');
    expect(await t.service.getInvoice('fg-failed')).toMatchObject({ status: 'failed' });
    await sandbox.pay('fg-failed');
    await t.service.drain();
    expect(t.handlers.paidCalls).toBe(1);
    expect(await t.service.getInvoice('fg-failed')).toMatchObject({ status: 'paid' });
  });

  it('rejects a payment the status check reports in another currency (CURRENCY_MISMATCH)', async () => {
    await start({ attempts: 0 });
    await invoice('fg-usd');
    sandbox.faults.add({
      match: { api: 'status' },
      status: 200,
      body: statusAnswer('fg-usd', {
        status: 'Paid',
        paymentMethod: 'mobilemoney',
        transactionId: 'a1b2c3',
        currencyCode: 'USD',
        charges: 0.12,
        amountAfterCharges: 12.38,
      }),
    });
    await sandbox.pay('fg-usd');
    await t.service.drain();
    expect(t.handlers.paidCalls).toBe(0);
    expect(t.handlers.events.rejected).toHaveLength(1);
    expect(t.handlers.events.rejected[0]).toMatchObject({
      reason: 'CURRENCY_MISMATCH',
      clientReference: 'fg-usd',
      source: 'status-check',
    });
    // Already kept for a person (the confirmation found it): reconcile() says so, checks nothing.
    const result = await t.service.reconcile('fg-usd');
    expect(result.outcome).toBe('rejected');
    expect(result.invoice).toMatchObject({ status: 'attention', attention: { reason: 'CURRENCY_MISMATCH' } });
    await t.service.drain();
    expect(t.handlers.paidCalls).toBe(0);
  });
});
