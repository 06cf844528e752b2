import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { HubtelApiError, HubtelConfigError, HubtelValidationError, MemoryStore } from 'nestjs-hubtel';
import {
  CheckoutEvents,
  CheckoutModule,
  CheckoutUnknownOutcomeError,
  type CheckoutModuleOptions,
} from 'nestjs-hubtel/checkout';
import { CaptureLogger } from './support/capture-logger.js';
import {
  ADAPTERS,
  BASIC_AUTH,
  FaultyStore,
  FakeCheckoutApi,
  JitteryStore,
  RecordingHandlers,
  baseOptions,
  callbackBody,
  settle,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';

const IS_PUBLIC = 'test:isPublic';

/** A host app's global guard: everything needs auth unless marked public (like many real apps). */
@Injectable()
class RequireAuthUnlessPublic implements CanActivate {
  constructor(private readonly reflector: Reflector) {}
  canActivate(context: ExecutionContext): boolean {
    return (
      this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]) ===
      true
    );
  }
}

@Injectable()
class DenyAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

describe.each(ADAPTERS)('CheckoutModule over HTTP (%s)', (adapter) => {
  let api: FakeCheckoutApi;
  let t: CheckoutTestApp;

  beforeAll(async () => {
    api = await FakeCheckoutApi.start();
  });
  afterAll(async () => {
    await api.close();
  });
  afterEach(async () => {
    await t?.close();
    api.server.reset();
  });

  async function start(overrides: Partial<CheckoutModuleOptions> = {}, extras = {}, logger?: CaptureLogger) {
    t = await startCheckoutApp(adapter, baseOptions(api, overrides), extras, undefined, logger ?? false);
    return t;
  }

  async function invoice(amount = 25.5, ref?: string) {
    return t.service.createInvoice({
      totalAmount: amount,
      description: 'Data bundle 5GB',
      ...(ref ? { clientReference: ref } : {}),
    });
  }

  describe('createInvoice', () => {
    it('sends the contract request exactly and returns the typed data', async () => {
      await start();
      const created = await t.service.createInvoice({
        totalAmount: 100.5,
        description: 'Two tickets',
        clientReference: 'order-1001',
        payeeName: 'Ama Mensah',
        payeeMobileNumber: '+233 24 123 4567',
        payeeEmail: 'ama@example.com',
      });
      expect(api.initiateRequests).toHaveLength(1);
      const sent = api.initiateRequests[0]!;
      expect(sent.method).toBe('POST');
      expect(sent.path).toBe('/items/initiate');
      expect(sent.headers.authorization).toBe(BASIC_AUTH);
      expect(sent.headers.accept).toBe('application/json');
      expect(sent.headers['content-type']).toMatch(/^application\/json/);
      expect(sent.headers['cache-control']).toBe('no-cache');
      expect(sent.body).toEqual({
        totalAmount: 100.5,
        description: 'Two tickets',
        callbackUrl: 'https://shop.example.test/hubtel/checkout/callback',
        returnUrl: 'https://shop.example.test/return',
        cancellationUrl: 'https://shop.example.test/cancel',
        clientReference: 'order-1001',
        merchantAccountNumber: '2017101',
        PayeeName: 'Ama Mensah',
        PayeeMobileNumber: '233241234567',
        PayeeEmail: 'ama@example.com',
      });
      // Exact casing, nothing else: a camelCased payeeName or a stray field would be a different contract.
      expect(Object.keys(sent.body as object).sort()).toEqual(
        [
          'PayeeEmail',
          'PayeeMobileNumber',
          'PayeeName',
          'callbackUrl',
          'cancellationUrl',
          'clientReference',
          'description',
          'merchantAccountNumber',
          'returnUrl',
          'totalAmount',
        ].sort(),
      );
      expect(created).toEqual({
        checkoutUrl: 'https://pay.example.test/chk000001',
        checkoutId: 'chk000001',
        clientReference: 'order-1001',
        checkoutDirectUrl: 'https://pay.example.test/chk000001/direct',
        message: '',
      });
      expect(await t.service.getInvoice('order-1001')).toMatchObject({
        clientReference: 'order-1001',
        checkoutId: 'chk000001',
        amount: 100.5,
        status: 'pending',
        creation: 'created',
      });
    });

    it('lets the call override the URLs and omits optional fields it was not given', async () => {
      await start({ merchantAccountNumber: undefined });
      await t.service.createInvoice({
        totalAmount: 1,
        description: 'x',
        clientReference: 'r-2',
        callbackUrl: 'https://hooks.example.test/cb',
        returnUrl: 'http://localhost:3000/ok',
        cancellationUrl: 'http://localhost:3000/no',
      });
      expect(api.initiateRequests[0]!.body).toEqual({
        totalAmount: 1,
        description: 'x',
        callbackUrl: 'https://hooks.example.test/cb',
        returnUrl: 'http://localhost:3000/ok',
        cancellationUrl: 'http://localhost:3000/no',
        clientReference: 'r-2',
      });
    });

    it('sends and records the amount rounded to the pesewa (0.1 + 0.2 is 0.3)', async () => {
      await start();
      await t.service.createInvoice({ totalAmount: 0.1 + 0.2, description: 'x', clientReference: 'float-1' });
      expect((api.initiateRequests[0]!.body as { totalAmount: number }).totalAmount).toBe(0.3);
      expect(await t.service.getInvoice('float-1')).toMatchObject({ amount: 0.3 });
    });

    it('generates a unique 32-character clientReference when none is given', async () => {
      await start();
      const a = await invoice();
      const b = await invoice();
      expect(a.clientReference).toMatch(/^[0-9a-f]{32}$/);
      expect(b.clientReference).toMatch(/^[0-9a-f]{32}$/);
      expect(a.clientReference).not.toBe(b.clientReference);
      expect((api.initiateRequests[0]!.body as { clientReference: string }).clientReference).toBe(
        a.clientReference,
      );
    });

    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['a zero amount', { totalAmount: 0 }, 'totalAmount'],
      ['a negative amount', { totalAmount: -5 }, 'totalAmount'],
      ['an amount with 3 decimals', { totalAmount: 10.005 }, 'totalAmount'],
      ['NaN', { totalAmount: Number.NaN }, 'totalAmount'],
      ['an amount given as text', { totalAmount: '10' }, 'totalAmount'],
      ['an empty description', { description: '' }, 'description'],
      ['a blank description', { description: '   ' }, 'description'],
      ['a description with &', { description: 'Fish & chips' }, 'description'],
      ['a description with @ and %', { description: '50% off @ shop' }, 'description'],
      ['a description with *', { description: 'Bundle*' }, 'description'],
      ['a description with !', { description: 'Bundle!' }, 'description'],
      ['an empty clientReference', { clientReference: '' }, 'clientReference'],
      ['a 33-character clientReference', { clientReference: 'x'.repeat(33) }, 'clientReference'],
      ['a clientReference with a space', { clientReference: 'order 1' }, 'clientReference'],
      ['a relative returnUrl', { returnUrl: '/return' }, 'returnUrl'],
      ['an ftp cancellationUrl', { cancellationUrl: 'ftp://example.test/x' }, 'cancellationUrl'],
      ['a callbackUrl that is not a URL', { callbackUrl: 'not a url' }, 'callbackUrl'],
      ['a callbackUrl with credentials', { callbackUrl: 'https://u:p@example.test/cb' }, 'callbackUrl'],
      ['a bad payee phone', { payeeMobileNumber: '02412' }, 'payeeMobileNumber'],
      ['a bad payee e-mail', { payeeEmail: 'ama@' }, 'payeeEmail'],
      ['metadata that is not an object', { metadata: 'x' }, 'metadata'],
      ['metadata over 4 KB', { metadata: { blob: 'x'.repeat(5000) } }, 'metadata'],
    ];
    it.each(bad)('refuses %s before sending anything', async (_name, fields, field) => {
      await start();
      const error = await t.service
        .createInvoice({ totalAmount: 10, description: 'ok', ...fields } as never)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(HubtelValidationError);
      expect((error as HubtelValidationError).code).toBe('HUBTEL_VALIDATION_FAILED');
      expect((error as HubtelValidationError).issues.map((i) => i.field)).toContain(field);
      expect((error as Error).message).toContain(field);
      expect(api.initiateRequests).toHaveLength(0);
    });

    it('reports every bad field at once', async () => {
      await start();
      const error = (await t.service
        .createInvoice({ totalAmount: -1, description: '', clientReference: 'y'.repeat(40) })
        .catch((e: unknown) => e)) as HubtelValidationError;
      expect(error.issues.map((i) => i.field).sort()).toEqual([
        'clientReference',
        'description',
        'totalAmount',
      ]);
      expect(api.initiateRequests).toHaveLength(0);
    });

    it('needs a callback URL: says which option to set when there is none', async () => {
      await start({ publicBaseUrl: undefined });
      const error = (await invoice().catch((e: unknown) => e)) as HubtelValidationError;
      expect(error).toBeInstanceOf(HubtelValidationError);
      expect(error.message).toMatch(/callbackUrl.*publicBaseUrl/);
      expect(api.initiateRequests).toHaveLength(0);
    });

    it("strips & * ! % @ from descriptions when descriptionSpecialCharacters is 'strip'", async () => {
      await start({ descriptionSpecialCharacters: 'strip' });
      await t.service.createInvoice({
        totalAmount: 5,
        description: 'Fish & chips! 50% off*',
        clientReference: 's-1',
      });
      expect((api.initiateRequests[0]!.body as { description: string }).description).toBe(
        'Fish chips 50 off',
      );
      const error = (await t.service
        .createInvoice({ totalAmount: 5, description: '!!! @ *' })
        .catch((e: unknown) => e)) as HubtelValidationError;
      expect(error).toBeInstanceOf(HubtelValidationError);
      expect(error.message).toContain('description is empty once the characters & * ! % @ are removed');
      expect(api.initiateRequests).toHaveLength(1);
    });

    it('turns a non-0000 answer into a typed error carrying the platform code, and forgets the invoice', async () => {
      await start();
      api.server.enqueue('POST', '/items/initiate', {
        status: 200,
        body: { responseCode: '4000', status: 'Error', data: null, message: 'Validation error' },
      });
      const error = (await invoice(10, 'ref-refused').catch((e: unknown) => e)) as HubtelApiError;
      expect(error).toBeInstanceOf(HubtelApiError);
      expect(error.code).toBe('HUBTEL_API_ERROR');
      expect(error.responseCode).toBe('4000');
      expect(error.message).toContain('4000');
      expect(await t.service.getInvoice('ref-refused')).toBeUndefined();
      // The reference can be used again once the platform refused it.
      await expect(invoice(10, 'ref-refused')).resolves.toMatchObject({ clientReference: 'ref-refused' });
    });

    it('does not retry a create that may have reached the platform: unknown outcome, invoice kept', async () => {
      await start();
      api.server.enqueue('POST', '/items/initiate', { status: 502, body: 'Bad gateway' });
      const error = (await invoice(10, 'ref-unknown').catch(
        (e: unknown) => e,
      )) as CheckoutUnknownOutcomeError;
      expect(error).toBeInstanceOf(CheckoutUnknownOutcomeError);
      expect(error.code).toBe('HUBTEL_UNKNOWN_OUTCOME');
      expect(error.clientReference).toBe('ref-unknown');
      expect(api.initiateRequests).toHaveLength(1);
      expect(await t.service.getInvoice('ref-unknown')).toMatchObject({
        status: 'pending',
        creation: 'unknown',
      });
    });

    it('refuses a clientReference that is already used, without calling the platform', async () => {
      await start();
      await invoice(10, 'dup-ref');
      await expect(invoice(10, 'dup-ref')).rejects.toMatchObject({ code: 'HUBTEL_STORE_CONFLICT' });
      expect(api.initiateRequests).toHaveLength(1);
    });
  });

  describe('web callback', () => {
    it('accepts a verified callback, answers 200 and runs the handler once with a typed event', async () => {
      await start();
      const created = await t.service.createInvoice({
        totalAmount: 25.5,
        description: 'Bundle',
        clientReference: 'pay-1',
        metadata: { orderId: 42 },
      });
      const res = await t.post(callbackBody({ ref: 'pay-1', checkoutId: created.checkoutId, amount: 25.5 }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true });
      await t.handlers.waitFor('paid');
      await t.service.drain();
      expect(t.handlers.events.paid).toHaveLength(1);
      expect(t.handlers.events.plainPaid).toHaveLength(1);
      expect(t.handlers.events.paid[0]).toMatchObject({
        clientReference: 'pay-1',
        checkoutId: created.checkoutId,
        amount: 25.5,
        amountPaid: 25.5,
        description: 'Bundle',
        source: 'callback',
        confirmedByStatusCheck: false,
        metadata: { orderId: 42 },
        payment: {
          paymentType: 'mobilemoney',
          channel: 'mtn-gh',
          salesInvoiceId: `inv-${created.checkoutId}`,
        },
      });
      expect(typeof t.handlers.events.paid[0]!.paidAt).toBe('string');
      expect(await t.service.getInvoice('pay-1')).toMatchObject({
        status: 'paid',
        amountPaid: 25.5,
        paidVia: 'callback',
      });
      expect(t.handlers.events.rejected).toHaveLength(0);
    });

    it('records the callback before acknowledging it, and keeps the record while the handler runs', async () => {
      const store = new MemoryStore({ sweepIntervalMs: 0 });
      await start({ store });
      let release!: () => void;
      t.handlers.paidGate = new Promise<void>((resolve) => (release = resolve));
      const created = await invoice(11, 'rec-1');
      const res = await t.post(callbackBody({ ref: 'rec-1', checkoutId: created.checkoutId, amount: 11 }));
      expect(res.status).toBe(200);
      // Acknowledged, handler not finished: the job is already in the store, and the invoice paid.
      const job = await store.get<{ status: string; payload: { clientReference: string } }>(
        'hubtel:checkout:job:hubtel.checkout.paid:rec-1',
      );
      expect(job?.value).toMatchObject({ payload: { clientReference: 'rec-1' } });
      expect(job?.value.status).toBe('pending'); // recorded, not settled: it settles when the handler ends
      expect(await t.service.getInvoice('rec-1')).toMatchObject({ status: 'paid' });
      expect(t.handlers.events.paid).toHaveLength(0);
      release();
      await t.handlers.waitFor('paid');
      await t.service.drain();
      const done = await store.get<Record<string, unknown>>('hubtel:checkout:job:hubtel.checkout.paid:rec-1');
      // Handled: only what recognises the key is kept (the event's payload is dropped)...
      expect(done?.value).toMatchObject({ status: 'done', compacted: true, attempts: 1 });
      expect(done?.value.payload).toBeUndefined();

      // ...and that still gates: with the invoice's own transition lost (as after a crash between
      // the record and the invoice write, with a persistent store), a re-sent callback completes
      // the invoice but cannot emit a second paid.
      const key = 'hubtel:checkout:invoice:rec-1';
      const paid = (await store.get<Record<string, unknown>>(key))!.value;
      await store.set(key, { ...paid, status: 'pending' });
      expect(
        (await t.post(callbackBody({ ref: 'rec-1', checkoutId: created.checkoutId, amount: 11 }))).status,
      ).toBe(200);
      await t.service.drain();
      expect(t.handlers.events.paid).toHaveLength(1);
      expect(await t.service.getInvoice('rec-1')).toMatchObject({ status: 'paid' });
    });

    it('runs the handler once for 10 concurrent copies of a callback, and for a later copy', async () => {
      await start({ store: new JitteryStore({ sweepIntervalMs: 0 }) });
      const created = await invoice(12, 'dup-10');
      const body = callbackBody({ ref: 'dup-10', checkoutId: created.checkoutId, amount: 12 });
      const answers = await Promise.all(Array.from({ length: 10 }, () => t.post(body)));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
      await t.service.drain();
      expect((await t.post(body)).status).toBe(200);
      await t.service.drain();
      await settle();
      expect(t.handlers.paidCalls).toBe(1);
      expect(t.handlers.events.paid).toHaveLength(1);
    });

    it('emits failed once for 10 concurrent copies of a failed-payment callback', async () => {
      await start({ store: new JitteryStore({ sweepIntervalMs: 0 }) });
      const created = await invoice(12, 'fail-10');
      const body = callbackBody({ ref: 'fail-10', checkoutId: created.checkoutId, status: 'Failed' });
      const answers = await Promise.all(Array.from({ length: 10 }, () => t.post(body)));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
      await t.service.drain();
      await settle();
      expect(t.handlers.events.failed.map((e) => e.clientReference)).toEqual(['fail-10']);
    });

    it('accepts and ignores unknown extra fields', async () => {
      await start();
      const created = await invoice(3, 'extra-1');
      const body = callbackBody(
        { ref: 'extra-1', checkoutId: created.checkoutId, amount: 3 },
        { Extra: { nested: [1, 2] }, Timestamp: 'x' },
      );
      body.Data.NewPlatformField = 'something new';
      body.Data.PaymentDetails.Network = 'MTN';
      expect((await t.post(body)).status).toBe(200);
      await t.handlers.waitFor('paid');
      expect(t.handlers.events.paid[0]!.clientReference).toBe('extra-1');
    });

    it('rejects an unknown ClientReference: rejected event, no paid event, the same 200 answer', async () => {
      await start();
      const created = await invoice(10, 'known-1');
      const res = await t.post(
        callbackBody({ ref: 'never-created', checkoutId: created.checkoutId, amount: 10 }),
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true });
      await t.handlers.waitFor('rejected');
      await t.service.drain();
      expect(t.handlers.events.rejected[0]).toMatchObject({
        reason: 'UNKNOWN_REFERENCE',
        clientReference: 'never-created',
        source: 'callback',
        sourceAddress: '127.0.0.1',
      });
      expect(t.handlers.events.paid).toHaveLength(0);
      expect(t.handlers.paidCalls).toBe(0);
    });

    it('rejects a wrong Amount and still accepts the genuine callback after it', async () => {
      await start();
      const created = await invoice(50, 'amt-1');
      expect(
        (await t.post(callbackBody({ ref: 'amt-1', checkoutId: created.checkoutId, amount: 0.5 }))).status,
      ).toBe(200);
      await t.handlers.waitFor('rejected');
      await t.service.drain();
      expect(t.handlers.events.rejected[0]).toMatchObject({
        reason: 'AMOUNT_MISMATCH',
        amountClaimed: 0.5,
        amountExpected: 50,
      });
      expect(t.handlers.events.paid).toHaveLength(0);
      expect(await t.service.getInvoice('amt-1')).toMatchObject({ status: 'pending' });
      // A forgery must not block the real payment.
      await t.post(callbackBody({ ref: 'amt-1', checkoutId: created.checkoutId, amount: 50 }));
      await t.handlers.waitFor('paid');
      expect(t.handlers.events.paid).toHaveLength(1);
    });

    it('rejects a success callback without an Amount', async () => {
      await start();
      const created = await invoice(5, 'amt-none');
      const body = callbackBody({ ref: 'amt-none', checkoutId: created.checkoutId });
      delete body.Data.Amount;
      expect((await t.post(body)).status).toBe(200);
      await t.handlers.waitFor('rejected');
      expect(t.handlers.events.rejected[0]).toMatchObject({ reason: 'AMOUNT_MISMATCH' });
      expect(t.handlers.paidCalls).toBe(0);
    });

    it('rejects a wrong CheckoutId', async () => {
      await start();
      await invoice(7, 'cid-1');
      expect((await t.post(callbackBody({ ref: 'cid-1', checkoutId: 'chk-forged', amount: 7 }))).status).toBe(
        200,
      );
      await t.handlers.waitFor('rejected');
      await t.service.drain();
      expect(t.handlers.events.rejected[0]).toMatchObject({
        reason: 'CHECKOUT_ID_MISMATCH',
        checkoutId: 'chk-forged',
      });
      expect(t.handlers.events.paid).toHaveLength(0);
    });

    it('accepts an amount within the configured fee tolerance, and rejects one beyond it', async () => {
      await start({ verification: { amountTolerance: { absolute: 0.5, percent: 1 } } });
      const a = await invoice(100, 'tol-a'); // allowed: max(0.50, 1.00) = 1.00
      const b = await invoice(100, 'tol-b');
      await t.post(callbackBody({ ref: 'tol-a', checkoutId: a.checkoutId, amount: 99.0 }));
      await t.post(callbackBody({ ref: 'tol-b', checkoutId: b.checkoutId, amount: 98.99 }));
      await t.handlers.waitFor('paid');
      await t.handlers.waitFor('rejected');
      await t.service.drain();
      expect(t.handlers.events.paid.map((e) => [e.clientReference, e.amountPaid])).toEqual([['tol-a', 99]]);
      expect(t.handlers.events.rejected.map((e) => [e.clientReference, e.reason])).toEqual([
        ['tol-b', 'AMOUNT_MISMATCH'],
      ]);
    });

    it('emits failed for a failed attempt, then paid when the payer retries; never failed after paid', async () => {
      await start();
      const created = await invoice(20, 'retry-pay');
      await t.post(
        callbackBody({
          ref: 'retry-pay',
          checkoutId: created.checkoutId,
          status: 'Failed',
          responseCode: '2001',
        }),
      );
      await t.handlers.waitFor('failed');
      expect(t.handlers.events.failed[0]).toMatchObject({
        clientReference: 'retry-pay',
        responseCode: '2001',
        status: 'Failed',
        reason: 'Payment failed',
      });
      expect(await t.service.getInvoice('retry-pay')).toMatchObject({ status: 'failed' });
      await t.post(callbackBody({ ref: 'retry-pay', checkoutId: created.checkoutId, amount: 20 }));
      await t.handlers.waitFor('paid');
      await t.post(callbackBody({ ref: 'retry-pay', checkoutId: created.checkoutId, status: 'Failed' }));
      await t.service.drain();
      await settle();
      expect(t.handlers.events.failed).toHaveLength(1);
      expect(t.handlers.events.paid).toHaveLength(1);
      expect(await t.service.getInvoice('retry-pay')).toMatchObject({ status: 'paid' });
    });

    it('never reads a contradiction as paid (ResponseCode 2001 with Status Success)', async () => {
      await start();
      const created = await invoice(9, 'contra');
      await t.post(
        callbackBody({
          ref: 'contra',
          checkoutId: created.checkoutId,
          amount: 9,
          status: 'Success',
          responseCode: '2001',
        }),
      );
      await t.handlers.waitFor('failed');
      expect(t.handlers.paidCalls).toBe(0);
    });

    it('retries a throwing handler with backoff, then dead-letters it; the app keeps serving', async () => {
      const store = new MemoryStore({ sweepIntervalMs: 0 });
      await start({ store });
      t.handlers.paidFailuresLeft = 99;
      const created = await invoice(15, 'dead-1');
      expect(
        (await t.post(callbackBody({ ref: 'dead-1', checkoutId: created.checkoutId, amount: 15 }))).status,
      ).toBe(200);
      await t.handlers.waitFor('dead');
      await t.service.drain();
      expect(t.handlers.paidCalls).toBe(3); // handlers.retry.maxAttempts
      expect(t.handlers.events.plainPaid).toHaveLength(0); // observers (@OnEvent) are told only once every handler succeeded
      const dead = t.handlers.events.dead[0]!;
      expect(dead).toMatchObject({ type: CheckoutEvents.Paid, key: 'dead-1', attempts: 3 });
      expect(dead.error).toContain('fulfilment for dead-1 is down');
      expect((dead.payload as { clientReference: string }).clientReference).toBe('dead-1');
      // The payment itself is recorded, and so is the job that gave up (nothing is lost); the app still serves callbacks.
      expect(await t.service.getInvoice('dead-1')).toMatchObject({ status: 'paid' });
      expect((await store.get('hubtel:checkout:job:hubtel.checkout.paid:dead-1'))?.value).toMatchObject({
        status: 'dead',
        attempts: 3,
      });
      t.handlers.paidFailuresLeft = 0;
      const next = await invoice(1, 'after-dead');
      await t.post(callbackBody({ ref: 'after-dead', checkoutId: next.checkoutId, amount: 1 }));
      await t.handlers.waitFor('paid');
      expect(t.handlers.events.paid.map((e) => e.clientReference)).toEqual(['after-dead']);
    });

    it('answers 503 when the callback cannot be recorded, emits nothing, and handles it when sent again', async () => {
      const store = new FaultyStore({ sweepIntervalMs: 0 });
      await start({ store });
      const created = await invoice(13, 'store-down');
      const body = callbackBody({ ref: 'store-down', checkoutId: created.checkoutId, amount: 13 });
      store.failWrites = /^hubtel:checkout:job:/;
      const refused = await t.post(body);
      expect(refused.status).toBe(503);
      expect(refused.body).toStrictEqual({
        statusCode: 503,
        error: 'Service Unavailable',
        code: 'HUBTEL_UNAVAILABLE',
        message: 'The checkout callback could not be recorded; send it again later',
      });
      await t.service.drain();
      await settle();
      expect(t.handlers.paidCalls).toBe(0);
      expect(await t.service.getInvoice('store-down')).toMatchObject({ status: 'pending' });
      store.failWrites = undefined;
      expect((await t.post(body)).status).toBe(200);
      await t.handlers.waitFor('paid');
      await t.service.drain();
      expect(t.handlers.paidCalls).toBe(1);
    });

    it('logs the dead letter, rejections and refusals without credentials or phone numbers', async () => {
      const logger = new CaptureLogger();
      await start({}, {}, logger);
      t.handlers.paidFailuresLeft = 99;
      const created = await t.service.createInvoice({
        totalAmount: 15,
        description: 'Logged',
        clientReference: 'log-1',
        payeeMobileNumber: '0241234567',
      });
      await t.post(callbackBody({ ref: 'log-1', checkoutId: 'chk-forged', amount: 15 }));
      await t.post({ ResponseCode: '0000', Data: { CustomerPhoneNumber: 233241234567 } });
      await t.post(callbackBody({ ref: 'log-1', checkoutId: created.checkoutId, amount: 15 }));
      await t.handlers.waitFor('dead');
      await t.service.drain();
      const text = logger.text();
      expect(text).toMatch(/\[error\].*hubtel\.checkout\.paid.*gave up after 3 attempt\(s\).*dead-lettered/);
      expect(text).toMatch(/\[warn\].*Rejected a checkout callback for "log-1": CHECKOUT_ID_MISMATCH/);
      // Each field named once (an issue's message already starts with it).
      expect(text).toMatch(
        /\[warn\].*Refused a malformed checkout callback.*: Invalid checkout callback: Data\.CheckoutId is required; Data\.ClientReference is required;/,
      );
      expect(text).toMatch(/\[log\].*Invoice log-1 created/);
      expect(text).toContain('receipt SMS to 233******567 failed');
      for (const secret of ['checkout-secret-value', BASIC_AUTH.slice('Basic '.length), '241234567']) {
        expect(text).not.toContain(secret);
      }
    });

    it('retries a handler that fails twice and then succeeds: paid once, nothing dead-lettered', async () => {
      await start();
      t.handlers.paidFailuresLeft = 2;
      const created = await invoice(15, 'flaky-1');
      await t.post(callbackBody({ ref: 'flaky-1', checkoutId: created.checkoutId, amount: 15 }));
      await t.handlers.waitFor('paid');
      await t.service.drain();
      expect(t.handlers.paidCalls).toBe(3);
      expect(t.handlers.events.paid).toHaveLength(1);
      expect(t.handlers.events.dead).toHaveLength(0);
    });
  });

  describe('route options and access guards', () => {
    it('mounts the callback at a custom path with the host decorators and guards', async () => {
      await start(
        { publicBaseUrl: 'https://shop.example.test/api' },
        { callback: { path: 'payments/hubtel', decorators: [SetMetadata(IS_PUBLIC, true)] } },
      );
      const created = await invoice(4, 'path-1');
      expect((api.initiateRequests[0]!.body as { callbackUrl: string }).callbackUrl).toBe(
        'https://shop.example.test/api/payments/hubtel',
      );
      expect(
        (
          await t.post(callbackBody({ ref: 'path-1', checkoutId: created.checkoutId, amount: 4 }), {
            path: 'hubtel/checkout/callback',
          })
        ).status,
      ).toBe(404);
      expect(
        (await t.post(callbackBody({ ref: 'path-1', checkoutId: created.checkoutId, amount: 4 }))).status,
      ).toBe(200);
      await t.handlers.waitFor('paid');
    });

    it('applies host guards (a guard that denies answers 403 and nothing is processed)', async () => {
      await start({}, { callback: { guards: [DenyAll] } });
      const created = await invoice(4, 'deny-1');
      const res = await t.post(callbackBody({ ref: 'deny-1', checkoutId: created.checkoutId, amount: 4 }));
      expect(res.status).toBe(403);
      await t.service.drain();
      expect(t.handlers.paidCalls).toBe(0);
    });

    it('lets a host with a global auth guard mark the route public through decorators', async () => {
      const { ExpressAdapter } = await import('@nestjs/platform-express');
      const { FastifyAdapter } = await import('@nestjs/platform-fastify');
      for (const isPublic of [false, true]) {
        const ref = await Test.createTestingModule({
          imports: [
            EventEmitterModule.forRoot(),
            CheckoutModule.forRoot({
              ...baseOptions(api),
              callback: { decorators: isPublic ? [SetMetadata(IS_PUBLIC, true)] : [] },
            }),
          ],
          providers: [RecordingHandlers, { provide: APP_GUARD, useClass: RequireAuthUnlessPublic }],
        }).compile();
        const app = ref.createNestApplication(
          adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
          { logger: false },
        );
        await app.listen(0, '127.0.0.1');
        const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
        try {
          const res = await fetch(`${url}/hubtel/checkout/callback`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(callbackBody({ ref: 'nope', checkoutId: 'x', amount: 1 })),
          });
          expect(res.status).toBe(isPublic ? 200 : 403);
        } finally {
          await app.close();
        }
      }
    });

    it('mounts no access guard when no access option is set; a path token is still answered 404 and nothing is processed', async () => {
      const definition = CheckoutModule.forRoot({
        ...baseOptions(api),
        access: { trustedProxies: ['10.0.0.1'] },
      });
      const controller = definition.controllers![0]!;
      // Nest's guard path costs per request; with nothing to check there is no guard at all.
      expect(Reflect.getMetadata('__guards__', controller)).toBeUndefined();
      expect(Reflect.getMetadata('__guards__', controller.prototype.receive)).toBeUndefined();
      t = await startCheckoutApp(adapter, baseOptions(api), {}, definition);
      const created = await invoice(3, 'open-1');
      const body = callbackBody({ ref: 'open-1', checkoutId: created.checkoutId, amount: 3 });
      const tokened = await t.post(body, { path: 'hubtel/checkout/callback/some-token-value-123' });
      expect(tokened.status).toBe(404);
      expect(tokened.body).toMatchObject({ statusCode: 404, code: 'HUBTEL_NOT_FOUND' });
      await t.service.drain();
      expect(t.handlers.paidCalls).toBe(0);
      expect((await t.post(body)).status).toBe(200);
      await t.handlers.waitFor('paid');
    });

    it('keeps the access guard, after the host guards, when access options are set or resolved asynchronously', async () => {
      const secured = CheckoutModule.forRoot({
        ...baseOptions(api),
        access: { allowedIps: ['127.0.0.1'] },
        callback: { guards: [DenyAll] },
      });
      // Issue 24: access is no longer a guard of its own but the routing of the one controller
      // (each account's path secret and allow-list), in its handler: after every guard of the host.
      const guards = Reflect.getMetadata('__guards__', secured.controllers![0]!) as unknown[];
      expect(guards).toEqual([DenyAll]);

      // forRootAsync: the options are not known when routes are fixed; routing checks them.
      const secret = 'Async-secret-token-42';
      const definition = CheckoutModule.forRootAsync({
        useFactory: () => ({ ...baseOptions(api), access: { pathSecret: secret } }),
      });
      expect(Reflect.getMetadata('__guards__', definition.controllers![0]!)).toBeUndefined();
      t = await startCheckoutApp(adapter, baseOptions(api), {}, definition);
      const created = await invoice(5, 'async-secret');
      const body = callbackBody({ ref: 'async-secret', checkoutId: created.checkoutId, amount: 5 });
      const without = await t.post(body);
      expect(without.status).toBe(404);
      expect(without.body).toMatchObject({ code: 'HUBTEL_NOT_FOUND' });
      await t.service.drain();
      expect(t.handlers.paidCalls).toBe(0);
      expect((await t.post(body, { path: `hubtel/checkout/callback/${secret}` })).status).toBe(200);
      await t.handlers.waitFor('paid');
      await t.close();

      // forRootAsync without access: guarded, and the guard refuses a path token.
      t = await startCheckoutApp(
        adapter,
        baseOptions(api),
        {},
        CheckoutModule.forRootAsync({ useFactory: () => baseOptions(api) }),
      );
      expect((await t.post(body, { path: 'hubtel/checkout/callback/anything-at-all' })).status).toBe(404);
    });

    it('can be disabled: no route, and handleCallback is there for a route of your own', async () => {
      await start(
        { callbackUrl: 'https://shop.example.test/my/own/route' },
        { callback: { disabled: true } },
      );
      const created = await invoice(6, 'own-route');
      expect((api.initiateRequests[0]!.body as { callbackUrl: string }).callbackUrl).toBe(
        'https://shop.example.test/my/own/route',
      );
      expect(
        (await t.post(callbackBody({ ref: 'own-route', checkoutId: created.checkoutId, amount: 6 }))).status,
      ).toBe(404);
      await expect(
        t.service.handleCallback(
          callbackBody({ ref: 'own-route', checkoutId: created.checkoutId, amount: 6 }),
        ),
      ).resolves.toMatchObject({
        outcome: 'accepted',
        claim: 'paid',
      });
      await t.handlers.waitFor('paid');
      await expect(t.service.handleCallback({ nope: true })).rejects.toBeInstanceOf(HubtelValidationError);
    });

    it('requires the path secret when one is configured (404 otherwise) and puts it in the default callback URL', async () => {
      const secret = 'Zx9-long-secret-token_1';
      await start({ access: { pathSecret: secret } });
      const created = await invoice(8, 'secret-1');
      expect((api.initiateRequests[0]!.body as { callbackUrl: string }).callbackUrl).toBe(
        `https://shop.example.test/hubtel/checkout/callback/${secret}`,
      );
      const body = callbackBody({ ref: 'secret-1', checkoutId: created.checkoutId, amount: 8 });
      const without = await t.post(body);
      expect(without.status).toBe(404);
      expect(without.body).toMatchObject({ statusCode: 404, code: 'HUBTEL_NOT_FOUND' });
      expect((await t.post(body, { path: 'hubtel/checkout/callback/wrong-secret-value-xx' })).status).toBe(
        404,
      );
      await t.service.drain();
      expect(t.handlers.paidCalls).toBe(0);
      expect((await t.post(body, { path: `hubtel/checkout/callback/${secret}` })).status).toBe(200);
      await t.handlers.waitFor('paid');
    });

    it('enforces an IP allow-list with CIDR ranges, reading X-Forwarded-For only from trusted proxies', async () => {
      await start({ access: { allowedIps: ['10.0.0.0/8'] } });
      const created = await invoice(8, 'ip-1');
      const body = callbackBody({ ref: 'ip-1', checkoutId: created.checkoutId, amount: 8 });
      const denied = await t.post(body, { headers: { 'x-forwarded-for': '10.1.2.3' } });
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ statusCode: 403, code: 'HUBTEL_SOURCE_NOT_ALLOWED' });
      await t.close();

      await start({ access: { allowedIps: ['10.0.0.0/8'], trustedProxies: ['127.0.0.1'] } });
      const again = await invoice(8, 'ip-2');
      const viaProxy = callbackBody({ ref: 'ip-2', checkoutId: again.checkoutId, amount: 8 });
      expect((await t.post(viaProxy, { headers: { 'x-forwarded-for': '6.6.6.6' } })).status).toBe(403);
      expect((await t.post(viaProxy, { headers: { 'x-forwarded-for': '10.1.2.3' } })).status).toBe(200);
      await t.handlers.waitFor('paid');
    });
  });
});

describe('CheckoutModule bootstrap', () => {
  let api: FakeCheckoutApi;
  beforeAll(async () => {
    api = await FakeCheckoutApi.start();
  });
  afterAll(() => api.close());

  async function boot(options: Record<string, unknown>, withEmitter = true) {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...(withEmitter ? [EventEmitterModule.forRoot()] : []),
        CheckoutModule.forRoot(options as unknown as CheckoutModuleOptions),
      ],
    }).compile();
    await moduleRef.close();
  }

  it.each([
    ['checkout.clientSecret', { clientSecret: undefined }],
    ['checkout.baseUrls.checkout', { baseUrls: { checkout: 'not a url' } }],
    ['checkout.reconciliation.enabled', { reconciliation: { enabled: true } }],
    ['checkout.verification.confirmWithStatusCheck', { verification: { confirmWithStatusCheck: true } }],
    ['checkout.reconciliation.delayMs', { posSalesId: '1', reconciliation: { delayMs: -1 } }],
    [
      'checkout.verification.amountTolerance.percent',
      { verification: { amountTolerance: { percent: 150 } } },
    ],
    ['checkout.handlers.retry.maxAttempts', { handlers: { retry: { maxAttempts: 0 } } }],
    ['checkout.access.allowedIps', { access: { allowedIps: ['10.0.0.0/40'] } }],
    ['checkout.access.pathSecret', { access: { pathSecret: 'short' } }],
    ['checkout.publicBaseUrl', { publicBaseUrl: 'ftp://shop' }],
    ['checkout.descriptionSpecialCharacters', { descriptionSpecialCharacters: 'escape' }],
    ['checkout.store', { store: 42 }],
  ])('fails at bootstrap naming %s', async (option, patch) => {
    const error = await boot({ ...baseOptions(api), ...patch }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as HubtelConfigError).option).toBe(option);
    expect((error as Error).message).not.toContain('checkout-secret-value');
  });

  it('says EventEmitterModule is missing', async () => {
    const error = await boot({ ...baseOptions(api) }, false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as Error).message).toMatch(/EventEmitterModule\.forRoot\(\)/);
  });

  it('supports forRootAsync with useFactory/inject, isGlobal and route extras, and a store given by token', async () => {
    const store = new MemoryStore({ sweepIntervalMs: 0 });
    const STORE = Symbol('MY_STORE');
    const { Module } = await import('@nestjs/common');
    @Module({
      providers: [
        { provide: STORE, useValue: store },
        { provide: 'URL', useValue: api.url },
      ],
      exports: [STORE, 'URL'],
    })
    class ConfigLikeModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        CheckoutModule.forRootAsync({
          imports: [ConfigLikeModule],
          inject: ['URL'],
          useFactory: (url: string) => ({ ...baseOptions({ url }), store: STORE }),
          isGlobal: true,
          callback: { path: 'async/cb' },
        }),
      ],
      providers: [RecordingHandlers],
    }).compile();
    const { ExpressAdapter } = await import('@nestjs/platform-express');
    const app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const { CheckoutService } = await import('nestjs-hubtel/checkout');
    const service = app.get(CheckoutService);
    const created = await service.createInvoice({
      totalAmount: 2,
      description: 'async',
      clientReference: 'async-1',
    });
    expect((api.initiateRequests.at(-1)!.body as { callbackUrl: string }).callbackUrl).toBe(
      'https://shop.example.test/async/cb',
    );
    // The invoice lives in the store the app gave, under the module's prefix.
    const keys: string[] = [];
    for await (const [key] of store.scan('hubtel:checkout:')) keys.push(key);
    expect(keys).toContain('hubtel:checkout:invoice:async-1');
    const res = await fetch(`${url}/async/cb`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(callbackBody({ ref: 'async-1', checkoutId: created.checkoutId, amount: 2 })),
    });
    expect(res.status).toBe(200);
    await app.get(RecordingHandlers).waitFor('paid');
    await app.close();
  });
});
