import { Global, Module } from '@nestjs/common';
import {
  HUBTEL_JOB_RUNNER,
  HubtelApiError,
  HubtelError,
  HubtelValidationError,
  InProcessJobRunner,
  type JobRunRequest,
} from 'nestjs-hubtel';
import {
  CheckoutEvents,
  CheckoutUnknownOutcomeError,
  type CheckoutModuleOptions,
  type CheckoutReconcileResult,
} from 'nestjs-hubtel/checkout';
import {
  ADAPTERS,
  BASIC_AUTH,
  FakeCheckoutApi,
  JitteryStore,
  POS_SALES_ID,
  baseOptions,
  callbackBody,
  settle,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';

/**
 * The transaction status check: `getStatus`, callback confirmation (on by default with a POS Sales
 * id) and the reconciler (on by default too), on both adapters.
 */
describe.each(ADAPTERS)('checkout status check and reconciliation (%s)', (adapter) => {
  let api: FakeCheckoutApi;
  let t: CheckoutTestApp;

  beforeAll(async () => {
    api = await FakeCheckoutApi.start();
  });
  afterAll(() => api.close());
  afterEach(async () => {
    await t?.close();
    api.server.reset();
    api.transactions.clear();
  });

  async function start(overrides: Partial<CheckoutModuleOptions> = {}) {
    t = await startCheckoutApp(
      adapter,
      baseOptions(api, {
        posSalesId: POS_SALES_ID,
        // Short delays: an invoice is due 50 ms after creation; the reconciler looks every 20 ms.
        reconciliation: { delayMs: 50, intervalMs: 20, maxIntervalMs: 40, giveUpAfterMs: 60_000 },
        ...overrides,
      }),
    );
    return t;
  }

  /**
   * A reconciler pass begun after this call (one in flight is awaited first): what it does not
   * check, no pass checks, whatever the timer managed meanwhile on a loaded machine.
   */
  async function freshPass() {
    await t.reconciler.runOnce();
    await t.reconciler.runOnce();
  }

  async function invoice(ref: string, amount = 30) {
    return t.service.createInvoice({ totalAmount: amount, description: 'Bundle', clientReference: ref });
  }

  describe('getStatus', () => {
    it('calls the status check with the contract request and returns a typed status', async () => {
      await start({ reconciliation: { enabled: false } });
      api.transactions.set('st-1', { status: 'Paid', amount: 30 });
      const status = await t.service.getStatus('st-1');
      const sent = api.statusRequests[0]!;
      expect(sent.method).toBe('GET');
      expect(sent.path).toBe(`/transactions/${POS_SALES_ID}/status`);
      expect(sent.url).toBe(`/transactions/${POS_SALES_ID}/status?clientReference=st-1`);
      expect(sent.headers.authorization).toBe(BASIC_AUTH);
      expect(sent.headers.accept).toBe('application/json');
      expect(sent.headers['cache-control']).toBe('no-cache');
      expect(status).toEqual({
        clientReference: 'st-1',
        status: 'Paid',
        paid: true,
        amount: 30,
        charges: 0.01,
        amountAfterCharges: 29.99,
        transactionId: 'txn-st-1',
        externalTransactionId: 'ext-st-1',
        paymentMethod: 'mobilemoney',
        date: '2024-05-01T10:00:00Z',
        responseCode: '0000',
        message: 'Successful',
      });
    });

    it('encodes the reference in the query and reports unpaid', async () => {
      await start({ reconciliation: { enabled: false } });
      api.transactions.set('a&b=c', { status: 'Unpaid', amount: 1 });
      await expect(t.service.getStatus('a&b=c')).resolves.toMatchObject({ status: 'Unpaid', paid: false });
      expect(api.statusRequests[0]!.query.get('clientReference')).toBe('a&b=c');
    });

    it('throws HUBTEL_NOT_FOUND for a transaction the platform does not know, and a validation error for a bad reference', async () => {
      await start({ reconciliation: { enabled: false } });
      await expect(t.service.getStatus('nobody')).rejects.toMatchObject({
        code: 'HUBTEL_NOT_FOUND',
        httpStatus: 404,
      });
      await expect(t.service.getStatus('')).rejects.toMatchObject({ code: 'HUBTEL_VALIDATION_FAILED' });
      await expect(t.service.getStatus('x'.repeat(33))).rejects.toMatchObject({
        code: 'HUBTEL_VALIDATION_FAILED',
      });
    });

    it('says getStatus needs posSalesId when it is not configured', async () => {
      t = await startCheckoutApp(adapter, baseOptions(api));
      const error = await t.service.getStatus('x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HubtelError);
      expect((error as HubtelError).code).toBe('HUBTEL_CONFIG_INVALID');
      expect((error as Error).message).toContain('posSalesId');
      expect(api.statusRequests).toHaveLength(0);
    });
  });

  describe('callback confirmation through the status check', () => {
    it('counts a callback only once the status check confirms it, and checks once for 10 concurrent copies', async () => {
      await start({ store: new JitteryStore({ sweepIntervalMs: 0 }), reconciliation: { enabled: false } });
      const created = await invoice('conf-1');
      api.transactions.set('conf-1', { status: 'Paid', amount: 30 });
      const body = callbackBody({ ref: 'conf-1', checkoutId: created.checkoutId, amount: 30 });
      const answers = await Promise.all(Array.from({ length: 10 }, () => t.post(body)));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      await t.handlers.waitFor('paid');
      await t.service.drain();
      await settle();
      expect(t.handlers.paidCalls).toBe(1);
      expect(t.handlers.events.paid[0]).toMatchObject({
        clientReference: 'conf-1',
        source: 'callback',
        confirmedByStatusCheck: true,
        amountPaid: 30,
        payment: { transactionId: 'txn-conf-1', paymentType: 'mobilemoney' },
      });
      // The status check's details only: the callback's channel and numbers are unverified claims.
      expect(t.handlers.events.paid[0]!.payment).not.toHaveProperty('channel');
      expect(t.handlers.events.paid[0]!.payment).not.toHaveProperty('customerPhoneNumber');
      expect(api.statusRequests).toHaveLength(1);
    });

    it('rejects a callback the status check does not confirm (NOT_CONFIRMED), then the reconciler pays it when it is paid', async () => {
      await start({
        reconciliation: { delayMs: 50, intervalMs: 20, maxIntervalMs: 20 },
        verification: { recheck: { delayMs: 5, maxDelayMs: 10, minIntervalMs: 5 } },
      });
      const created = await invoice('forged-ok');
      api.transactions.set('forged-ok', { status: 'Unpaid', amount: 30 });
      // Right reference, amount and checkout id (an attacker who saw the return URL): still not believed.
      await t.post(callbackBody({ ref: 'forged-ok', checkoutId: created.checkoutId, amount: 30 }));
      await t.handlers.waitFor('rejected');
      expect(t.handlers.events.rejected[0]).toMatchObject({
        reason: 'NOT_CONFIRMED',
        clientReference: 'forged-ok',
        source: 'callback',
      });
      expect(t.handlers.paidCalls).toBe(0);
      expect(await t.service.getInvoice('forged-ok')).toMatchObject({ status: 'pending' });
      api.transactions.set('forged-ok', { status: 'Paid', amount: 30 });
      await t.handlers.waitFor('paid');
      expect(t.handlers.events.paid[0]).toMatchObject({
        clientReference: 'forged-ok',
        source: 'status-check',
      });
    });

    it('retries a confirmation whose status check failed, then pays', async () => {
      await start({ reconciliation: { enabled: false }, retry: { maxAttempts: 1 } });
      const created = await invoice('conf-retry');
      api.transactions.set('conf-retry', { status: 'Paid', amount: 30 });
      api.server.enqueue('GET', /^\/transactions\//, { status: 500, body: { message: 'boom' } });
      await t.post(callbackBody({ ref: 'conf-retry', checkoutId: created.checkoutId, amount: 30 }));
      await t.handlers.waitFor('paid');
      expect(api.statusRequests).toHaveLength(2);
      expect(t.handlers.paidCalls).toBe(1);
    });

    it('confirms a failed attempt: failed event, unless the status check says it was paid', async () => {
      await start({ reconciliation: { enabled: false } });
      const a = await invoice('fail-a');
      const b = await invoice('fail-b');
      api.transactions.set('fail-a', { status: 'Unpaid', amount: 30 });
      api.transactions.set('fail-b', { status: 'Paid', amount: 30 });
      await t.post(callbackBody({ ref: 'fail-a', checkoutId: a.checkoutId, status: 'Failed' }));
      await t.post(callbackBody({ ref: 'fail-b', checkoutId: b.checkoutId, status: 'Failed' }));
      await t.handlers.waitFor('failed');
      await t.handlers.waitFor('paid');
      await t.service.drain();
      expect(t.handlers.events.failed.map((e) => e.clientReference)).toEqual(['fail-a']);
      expect(t.handlers.events.paid.map((e) => e.clientReference)).toEqual(['fail-b']);
    });
  });

  describe('reconcile(clientReference): one invoice, now', () => {
    // The reconciler is off in most of these: reconcile() must not depend on it.
    const off = { reconciliation: { enabled: false } };

    it('pays an invoice the status check says is paid, once: a second call is already-paid without asking again', async () => {
      await start(off);
      await invoice('now-1');
      api.transactions.set('now-1', { status: 'Paid', amount: 30 });
      const first = await t.service.reconcile('now-1');
      expect(first).toMatchObject({
        clientReference: 'now-1',
        outcome: 'paid',
        status: { status: 'Paid', paid: true, amount: 30 },
        invoice: { status: 'paid', paidVia: 'status-check', amountPaid: 30 },
      });
      expect(api.statusRequests).toHaveLength(1);
      expect(api.statusRequests[0]!.url).toBe(`/transactions/${POS_SALES_ID}/status?clientReference=now-1`);
      await t.handlers.waitFor('paid');
      expect(t.handlers.events.paid[0]).toMatchObject({
        clientReference: 'now-1',
        source: 'status-check',
        confirmedByStatusCheck: true,
        payment: { transactionId: 'txn-now-1' },
      });
      const second = await t.service.reconcile('now-1');
      expect(second.outcome).toBe('already-paid');
      expect(second.status).toBeUndefined();
      expect(api.statusRequests).toHaveLength(1);
      await t.service.drain();
      await settle();
      expect(t.handlers.paidCalls).toBe(1);
    });

    it('says already-paid after the callback paid it, and pays nothing twice', async () => {
      await start({ ...off, verification: { confirmWithStatusCheck: false } });
      const created = await invoice('cb-then-now');
      await t.post(callbackBody({ ref: 'cb-then-now', checkoutId: created.checkoutId, amount: 30 }));
      await t.handlers.waitFor('paid');
      expect((await t.service.reconcile('cb-then-now')).outcome).toBe('already-paid');
      expect(api.statusRequests).toHaveLength(0);
      await t.service.drain();
      expect(t.handlers.paidCalls).toBe(1);
    });

    it('changes nothing while unpaid or unknown to the platform, and pays once it is paid', async () => {
      await start(off);
      await invoice('later-1');
      await expect(t.service.reconcile('later-1')).resolves.toMatchObject({
        outcome: 'unpaid',
        invoice: { status: 'pending' },
      });
      api.transactions.set('later-1', { status: 'Unpaid', amount: 30 });
      await expect(t.service.reconcile('later-1')).resolves.toMatchObject({
        outcome: 'unpaid',
        status: { status: 'Unpaid', paid: false },
        invoice: { status: 'pending' },
      });
      await t.service.drain();
      expect(t.handlers.events).toMatchObject({ paid: [], failed: [], rejected: [], expired: [] });
      api.transactions.set('later-1', { status: 'Paid', amount: 30 });
      expect((await t.service.reconcile('later-1')).outcome).toBe('paid');
      await t.handlers.waitFor('paid');
    });

    it('reports a refund as failed, and a paid amount that does not match as rejected (flagged, never paid)', async () => {
      await start(off);
      await invoice('now-refund');
      await invoice('now-short');
      api.transactions.set('now-refund', { status: 'Refunded', amount: 30 });
      api.transactions.set('now-short', { status: 'Paid', amount: 29 });
      expect((await t.service.reconcile('now-refund')).outcome).toBe('refunded');
      const short = await t.service.reconcile('now-short');
      expect(short).toMatchObject({
        outcome: 'rejected',
        invoice: { status: 'attention', attention: { reason: 'AMOUNT_MISMATCH' } },
      });
      await t.handlers.waitFor('failed');
      await t.handlers.waitFor('rejected');
      await t.service.drain();
      expect(t.handlers.events.failed[0]).toMatchObject({
        clientReference: 'now-refund',
        status: 'Refunded',
      });
      expect(t.handlers.events.rejected[0]).toMatchObject({
        clientReference: 'now-short',
        reason: 'AMOUNT_MISMATCH',
        source: 'status-check',
        amountClaimed: 29,
        amountExpected: 30,
      });
      expect(t.handlers.paidCalls).toBe(0);
    });

    it('settles an invoice whose creation had no answer, once the platform knows it', async () => {
      await start(off);
      api.server.enqueue('POST', '/items/initiate', { status: 504, body: 'Gateway timeout' });
      await expect(invoice('lost-create')).rejects.toBeInstanceOf(CheckoutUnknownOutcomeError);
      expect((await t.service.reconcile('lost-create')).outcome).toBe('unpaid');
      api.transactions.set('lost-create', { status: 'Paid', amount: 30 });
      expect((await t.service.reconcile('lost-create')).outcome).toBe('paid');
      await t.handlers.waitFor('paid');
      expect(t.handlers.events.paid[0]).toMatchObject({ clientReference: 'lost-create', amountPaid: 30 });
    });

    it('throws typed errors: unknown invoice, bad reference, no posSalesId, a status check that failed', async () => {
      await start(off);
      await expect(t.service.reconcile('never-made')).rejects.toMatchObject({
        code: 'HUBTEL_NOT_FOUND',
        message: expect.stringContaining('never-made'),
      });
      for (const bad of ['', 'x'.repeat(33), 42 as unknown as string]) {
        const error = await t.service.reconcile(bad).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(HubtelValidationError);
        expect((error as HubtelValidationError).issues[0]!.field).toBe('clientReference');
      }
      expect(api.statusRequests).toHaveLength(0);

      await invoice('status-down');
      api.server.enqueue('GET', /^\/transactions\//, { status: 500, body: { message: 'boom' } });
      api.transactions.set('status-down', { status: 'Paid', amount: 30 });
      await expect(t.service.reconcile('status-down')).rejects.toBeInstanceOf(HubtelApiError);
      expect(await t.service.getInvoice('status-down')).toMatchObject({ status: 'pending' });
      expect((await t.service.reconcile('status-down')).outcome).toBe('paid');
      await t.close();

      t = await startCheckoutApp(adapter, baseOptions(api));
      await invoice('no-pos');
      const error = await t.service.reconcile('no-pos').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HubtelError);
      expect((error as HubtelError).code).toBe('HUBTEL_CONFIG_INVALID');
      expect((error as Error).message).toContain('posSalesId');
    });
  });

  describe('reconciler', () => {
    it('emits paid when no callback ever comes', async () => {
      await start();
      expect(t.reconciler.running).toBe(true);
      await invoice('silent-1');
      api.transactions.set('silent-1', { status: 'Paid', amount: 30 });
      await t.handlers.waitFor('paid');
      await t.service.drain();
      expect(t.handlers.events.paid).toHaveLength(1);
      expect(t.handlers.events.paid[0]).toMatchObject({
        clientReference: 'silent-1',
        source: 'status-check',
        confirmedByStatusCheck: true,
        amountPaid: 30,
      });
      expect(await t.service.getInvoice('silent-1')).toMatchObject({
        status: 'paid',
        paidVia: 'status-check',
      });
      // Paid invoices are no longer checked (by a pass begun after, nor by the timer's).
      const checks = api.statusRequests.length;
      await freshPass();
      await settle(120);
      expect(api.statusRequests.length).toBe(checks);
    });

    it('ignores a callback that arrives after the status check already paid the invoice', async () => {
      await start();
      const created = await invoice('check-first');
      api.transactions.set('check-first', { status: 'Paid', amount: 30 });
      await t.handlers.waitFor('paid');
      expect(t.handlers.events.paid[0]).toMatchObject({ source: 'status-check' });
      const late = await t.post(
        callbackBody({ ref: 'check-first', checkoutId: created.checkoutId, amount: 30 }),
      );
      expect(late.status).toBe(200);
      await t.service.drain();
      await settle();
      expect(t.handlers.paidCalls).toBe(1);
    });

    it('waits the configured delay before the first check', async () => {
      await start({ reconciliation: { delayMs: 60_000, intervalMs: 20 } });
      await invoice('not-yet');
      api.transactions.set('not-yet', { status: 'Paid', amount: 30 });
      await freshPass();
      await settle(150);
      expect(api.statusRequests).toHaveLength(0);
      expect(t.handlers.paidCalls).toBe(0);
    });

    it.each([
      ['unconfirmed callbacks and reconciler passes', false, 0],
      ['confirmed callbacks and reconciler passes', true, 0],
      ['unconfirmed callbacks, reconcile() calls and reconciler passes', false, 3],
      ['confirmed callbacks, reconcile() calls and reconciler passes', true, 3],
    ])(
      'emits paid exactly once when %s race for the same invoices',
      async (_name, confirm, reconcileCalls) => {
        await start({
          store: new JitteryStore({ sweepIntervalMs: 0 }),
          verification: { confirmWithStatusCheck: confirm },
          reconciliation: { enabled: true, delayMs: 0, intervalMs: 60_000 },
        });
        const refs = Array.from({ length: 15 }, (_, i) => `race-${i}`);
        const created = await Promise.all(refs.map((ref) => invoice(ref)));
        for (const ref of refs) api.transactions.set(ref, { status: 'Paid', amount: 30 });
        const reconciled: CheckoutReconcileResult[] = [];
        // Everything at once: two callbacks per invoice, reconcile() calls, a pass (all due), and
        // runOnce() again during it.
        const [, , ...passes] = await Promise.all([
          Promise.all(
            created.flatMap((c) =>
              [0, 1].map(() =>
                t.post(callbackBody({ ref: c.clientReference, checkoutId: c.checkoutId, amount: 30 })),
              ),
            ),
          ),
          Promise.all(
            refs.flatMap((ref) =>
              Array.from({ length: reconcileCalls }, async () =>
                reconciled.push(await t.service.reconcile(ref)),
              ),
            ),
          ),
          t.reconciler.runOnce(),
          t.reconciler.runOnce(),
        ]);
        await t.service.drain();
        await settle();
        expect(t.handlers.paidCalls).toBe(refs.length);
        expect(t.handlers.events.paid.map((e) => e.clientReference).sort()).toEqual([...refs].sort());
        for (const ref of refs) expect(await t.service.getInvoice(ref)).toMatchObject({ status: 'paid' });
        // Each paid event was recorded by exactly one caller: the reconcile() calls that say `paid`
        // and the pass's count of paid account for every status-check event, no more, no less.
        const byReconcile = reconciled.filter((r) => r.outcome === 'paid').map((r) => r.clientReference);
        expect(new Set(byReconcile).size).toBe(byReconcile.length);
        // A runOnce() during a pass returns that pass: count each report once.
        const passPaid = [...new Set(passes)].reduce((sum, report) => sum + report.paid, 0);
        const fromStatus = t.handlers.events.paid.filter((e) => e.source === 'status-check').length;
        expect(byReconcile.length + passPaid).toBe(fromStatus);
        expect(reconciled.every((r) => r.outcome === 'paid' || r.outcome === 'already-paid')).toBe(true);
      },
    );

    it('rejects a status answer whose amount does not match, flags the invoice and stops checking it', async () => {
      await start();
      await invoice('short-paid', 30);
      api.transactions.set('short-paid', { status: 'Paid', amount: 3 });
      await t.handlers.waitFor('rejected');
      expect(t.handlers.events.rejected[0]).toMatchObject({
        reason: 'AMOUNT_MISMATCH',
        source: 'status-check',
        amountClaimed: 3,
        amountExpected: 30,
      });
      expect(await t.service.getInvoice('short-paid')).toMatchObject({
        status: 'attention',
        attention: { reason: 'AMOUNT_MISMATCH' },
      });
      const checks = api.statusRequests.length;
      await freshPass();
      await settle(150);
      expect(api.statusRequests.length).toBe(checks);
      expect(t.handlers.paidCalls).toBe(0);
    });

    it('expires an invoice never paid after giveUpAfterMs, once, and stops checking it', async () => {
      // A second to give up: checked before the deadline too, however late the first pass comes.
      await start({
        reconciliation: { delayMs: 10, intervalMs: 20, maxIntervalMs: 20, giveUpAfterMs: 1_000 },
      });
      await invoice('abandoned');
      api.transactions.set('abandoned', { status: 'Unpaid', amount: 30 });
      await t.handlers.waitFor('expired');
      expect(t.handlers.events.expired[0]).toMatchObject({
        clientReference: 'abandoned',
        lastStatus: 'pending',
        amount: 30,
      });
      expect(await t.service.getInvoice('abandoned')).toMatchObject({ status: 'expired' });
      expect(api.statusRequests.length).toBeGreaterThanOrEqual(2);
      const checks = api.statusRequests.length;
      await freshPass();
      await settle(150);
      expect(api.statusRequests.length).toBe(checks);
      expect(t.handlers.events.expired).toHaveLength(1);
    });

    it('an expiry whose event could not be queued is kept watched, and the next pass records it, once', async () => {
      /** The in-process runner, whose queue refuses the first two run requests of an expired event. */
      class QueueDownRunner extends InProcessJobRunner {
        refused = 0;
        override async enqueue(pipeline: string, request: JobRunRequest): Promise<void> {
          if (request.type === CheckoutEvents.Expired && this.refused < 2) {
            this.refused++;
            throw new Error('the queue is down');
          }
          return super.enqueue(pipeline, request);
        }
      }
      const runner = new QueueDownRunner();
      @Global()
      @Module({ providers: [{ provide: HUBTEL_JOB_RUNNER, useValue: runner }], exports: [HUBTEL_JOB_RUNNER] })
      class RunnerModule {}
      t = await startCheckoutApp(
        adapter,
        baseOptions(api, {
          posSalesId: POS_SALES_ID,
          reconciliation: { delayMs: 10, intervalMs: 20, maxIntervalMs: 20, giveUpAfterMs: 150 },
        }),
        {},
        undefined,
        false,
        [{ module: RunnerModule }],
      );
      await invoice('abandoned-q');
      api.transactions.set('abandoned-q', { status: 'Unpaid', amount: 30 });
      await t.handlers.waitFor('expired');
      expect(runner.refused).toBe(2);
      expect(t.handlers.events.expired).toEqual([
        expect.objectContaining({ clientReference: 'abandoned-q', lastStatus: 'pending' }),
      ]);
      const checks = api.statusRequests.length;
      await freshPass();
      await settle(150);
      expect(api.statusRequests.length).toBe(checks);
      expect(t.handlers.events.expired).toHaveLength(1);
    });

    it('checks a never-paid invoice at most maxChecks times: the last one at giveUpAfterMs, then expired', async () => {
      // Issue 21 item 7: before, an unpaid invoice was checked every (backed-off) interval until
      // giveUpAfterMs: here ~40 checks in 800 ms; a flood of orders nobody pays multiplied that.
      const giveUpAfterMs = 800;
      await start({
        reconciliation: { delayMs: 0, intervalMs: 20, maxIntervalMs: 20, giveUpAfterMs, maxChecks: 3 },
      });
      // The invoice's initiation, then the two backed-off checks (seen as the second comes)...
      const twoChecks = api.server.waitForRequests(api.server.requests.length + 3);
      const created = Date.now();
      await invoice('never-paid');
      api.transactions.set('never-paid', { status: 'Unpaid', amount: 30 });
      await twoChecks;
      // ...then none until the deadline: the last one, then the expiry.
      expect(t.handlers.events.expired).toHaveLength(0);
      await t.handlers.waitFor('expired');
      expect(Date.now() - created).toBeGreaterThanOrEqual(giveUpAfterMs);
      expect(api.statusRequests.length).toBe(3);
      expect(api.statusRequests[2]!.at - created).toBeGreaterThanOrEqual(giveUpAfterMs);
      expect(await t.service.getInvoice('never-paid')).toMatchObject({ status: 'expired' });
      await settle(100);
      expect(api.statusRequests.length).toBe(3);
    });

    it('finds a payment at the last check, kept for giveUpAfterMs', async () => {
      const giveUpAfterMs = 400;
      await start({
        reconciliation: { delayMs: 0, intervalMs: 20, maxIntervalMs: 20, giveUpAfterMs, maxChecks: 2 },
      });
      // The first check by hand, right after the invoice: the timer's could come after
      // giveUpAfterMs on a loaded machine, and rightly give up then.
      await t.reconciler.stop();
      api.transactions.set('slow-bank', { status: 'Unpaid', amount: 30 });
      const created = Date.now();
      await invoice('slow-bank');
      await t.reconciler.runOnce();
      expect(api.statusRequests.length).toBe(1);
      expect(await t.service.getInvoice('slow-bank')).toMatchObject({ status: 'pending' });
      // Paid from then on, whenever the last check comes.
      api.transactions.set('slow-bank', { status: 'Paid', amount: 30 });
      t.reconciler.start();
      await t.handlers.waitFor('paid');
      expect(api.statusRequests.length).toBe(2);
      expect(api.statusRequests[1]!.at - created).toBeGreaterThanOrEqual(giveUpAfterMs);
      expect(t.handlers.events.expired).toHaveLength(0);
    });

    it('still checks an invoice it reaches late (a reconciler behind, stopped or down), past giveUpAfterMs', async () => {
      const giveUpAfterMs = 100;
      await start({ reconciliation: { delayMs: 0, intervalMs: 20, maxIntervalMs: 20, giveUpAfterMs } });
      await t.reconciler.stop();
      await invoice('late-paid');
      await invoice('late-unpaid');
      api.transactions.set('late-paid', { status: 'Paid', amount: 30 });
      api.transactions.set('late-unpaid', { status: 'Unpaid', amount: 30 });
      // Well past giveUpAfterMs + 2 maxIntervalMs: the watch list once forgot an invoice by then,
      // and a paid one nobody called back for was never found.
      await settle(3 * giveUpAfterMs);
      await t.reconciler.runOnce();
      await t.service.drain();
      expect(t.handlers.events.paid).toEqual([expect.objectContaining({ clientReference: 'late-paid' })]);
      expect(t.handlers.events.expired).toEqual([
        expect.objectContaining({ clientReference: 'late-unpaid', lastStatus: 'pending' }),
      ]);
      expect(api.statusRequests).toHaveLength(2);
    });

    it('treats a transaction unknown to the platform as unpaid', async () => {
      await start({ reconciliation: { delayMs: 10, intervalMs: 20, maxIntervalMs: 20, giveUpAfterMs: 100 } });
      await invoice('unknown-txn');
      await t.handlers.waitFor('expired');
      expect(t.handlers.paidCalls).toBe(0);
    });

    it('reports a refunded transaction as failed', async () => {
      await start();
      await invoice('refunded');
      api.transactions.set('refunded', { status: 'Refunded', amount: 30 });
      await t.handlers.waitFor('failed');
      expect(t.handlers.events.failed[0]).toMatchObject({
        clientReference: 'refunded',
        status: 'Refunded',
        source: 'status-check',
      });
      expect(t.handlers.paidCalls).toBe(0);
    });

    it('is off without a POS Sales id, and can be turned off explicitly', async () => {
      t = await startCheckoutApp(adapter, baseOptions(api));
      expect(t.reconciler.running).toBe(false);
      await t.close();
      await start({ reconciliation: { enabled: false } });
      expect(t.reconciler.running).toBe(false);
      await invoice('off');
      api.transactions.set('off', { status: 'Paid', amount: 30 });
      await settle(150);
      expect(api.statusRequests).toHaveLength(0);
    });

    it('can be stopped and started, and stops cleanly with the app (no more checks, no timers left)', async () => {
      await start({
        reconciliation: { delayMs: 0, intervalMs: 20, maxIntervalMs: 20, giveUpAfterMs: 60_000 },
      });
      await invoice('stop-1');
      api.transactions.set('stop-1', { status: 'Unpaid', amount: 30 });
      await api.server.waitForRequests(api.server.requests.length + 2);
      await t.reconciler.stop();
      expect(t.reconciler.running).toBe(false);
      const stopped = api.statusRequests.length;
      await settle(120);
      expect(api.statusRequests.length).toBe(stopped);
      t.reconciler.start();
      expect(t.reconciler.running).toBe(true);
      await api.server.waitForRequests(api.server.requests.length + 1);
      await t.close();
      expect(t.reconciler.running).toBe(false);
      const closed = api.statusRequests.length;
      await settle(120);
      expect(api.statusRequests.length).toBe(closed);
    });
  });
});
