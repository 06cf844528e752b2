import { randomUUID } from 'node:crypto';
import { type InboundPipeline } from '#internal';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { SERVICE_APP_PIPELINE } from '../libs/service-app/src/service-app.constants.js';
import type { ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import { RecordingLogger } from './support/service-app.fixtures.js';
import {
  postJson as post,
  startMerchant,
  type Adapter,
  type Merchant,
  onAppChannel,
} from './support/service-app.harness.js';

/*
 * "An unpaid fulfillment request delivers goods": every fulfillment request's payment is confirmed
 * with the transaction status check (clientReference = SessionId) before any handler runs. Over
 * real HTTP, on Express and Fastify, against the sandbox (its status check knows what its
 * client-app driver paid).
 */

const UNVERIFIED = 'Fulfillment requests are trusted unverified';

/** Waits (polling) until `test()` holds. */
async function until(test: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('until: timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each<Adapter>(['express', 'fastify'])('fulfillment verification over %s', (adapter) => {
  let sandbox: HubtelSandbox;
  /** Re-checks an unrecorded payment for a minute: a late payment gets through. */
  let patient: Merchant;
  /** Re-checks for a moment only: an unpaid request is refused at once. */
  let strict: Merchant;

  const options = (recheckForMs: number): ServiceAppModuleOptions => ({
    callbackUrl: sandbox.baseUrls().fulfillmentCallback,
    callbackTimeoutMs: 1_500,
    // An order kept for a person is reported failed at 3/4 of it: what the held tests wait for
    // (nobody resolves one here). Still room for one retry of a callback slower than its time-out.
    callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 2_000 },
    fulfillmentRetry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 },
    statusCheck: {
      ...sandbox.credentials.api,
      posSalesId: sandbox.posSalesId,
      url: sandbox.baseUrls().status,
    },
    verification: { recheckForMs, recheckDelay: { baseDelayMs: 5, maxDelayMs: 20 } },
  });
  const pipelineOf = (m: Merchant) => m.app.get<InboundPipeline>(SERVICE_APP_PIPELINE);
  /** Status checks the sandbox answered since the last reset (one session per test). */
  const statusChecks = () => sandbox.requests().filter((r) => r.api === 'status').length;

  beforeAll(async () => {
    sandbox = onAppChannel(await HubtelSandbox.start());
    patient = await startMerchant(adapter, options(60_000));
    strict = await startMerchant(adapter, options(50), {}, { logger: patient.logger });
  });

  afterEach(async () => {
    for (const m of [patient, strict]) {
      await pipelineOf(m).drain();
      await m.fulfillment.drainRejections();
    }
    sandbox.reset();
  });

  afterAll(async () => {
    await strict?.close();
    await patient?.close();
    await sandbox?.stop();
  });

  /** The three service-flow calls: a cart of 1GB for GHS 5.00, nothing paid. */
  async function toCart(merchant: Merchant) {
    const session = sandbox.serviceApp(merchant.url);
    await session.start();
    await session.reply('0241234567');
    await session.choose('1gb');
    return session;
  }

  async function rejection(merchant: Merchant, orderId: string) {
    await merchant.fulfiller.until(() => merchant.fulfiller.rejected.some((e) => e.orderId === orderId));
    await pipelineOf(merchant).drain();
    return merchant.fulfiller.rejected.find((e) => e.orderId === orderId)!;
  }

  /** Kept for a person, nobody resolved it: no handler ran, and at its deadline the platform was told `failed`. */
  function heldThenFailed(merchant: Merchant, orderId: string) {
    expect(merchant.fulfiller.calls.get(orderId)).toBeUndefined();
    expect(merchant.fulfiller.attention.map((e) => e.orderId)).toContain(orderId);
    expect(
      sandbox
        .fulfillmentCallbacks()
        .filter((c) => c.orderId === orderId)
        .map((c) => c.serviceStatus),
    ).toEqual(['failed']);
  }

  function nothingDelivered(merchant: Merchant, orderId: string) {
    expect(merchant.fulfiller.calls.get(orderId)).toBeUndefined();
    expect(merchant.fulfiller.seen.some((e) => e.orderId === orderId)).toBe(false);
    expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toEqual([]);
  }

  it('refuses an unpaid (forged) fulfillment request: no handler, no callback, a NOT_PAID rejected event', async () => {
    const session = await toCart(strict);
    const orderId = randomUUID();
    // The reproduction: any OrderId with the session's SessionId, posted straight to the app.
    const forged = await post(`${strict.url}/api/fulfillment`, {
      OrderId: orderId,
      SessionId: session.sessionId,
      ExtraData: {},
      OrderInfo: { Status: 'Paid', Payment: { AmountPaid: 5, IsSuccessful: true } },
    });
    // Acknowledged as any request is (verification may need re-checks; a forger learns nothing).
    expect(forged.status).toBe(200);
    expect(forged.body).toEqual({ OrderId: orderId, SessionId: session.sessionId, Status: 'received' });

    expect(await rejection(strict, orderId)).toMatchObject({
      reason: 'NOT_PAID',
      orderId,
      sessionId: session.sessionId,
      serviceCode: 'sandbox-service',
      amountExpected: 5,
      message: expect.stringContaining('knows no transaction'),
    });
    nothingDelivered(strict, orderId);
    expect(statusChecks()).toBeGreaterThanOrEqual(1);
    expect(await strict.fulfillment.getOrder(orderId)).toMatchObject({
      payment: { status: 'refused', reason: 'NOT_PAID' },
      handler: { status: 'pending', attempts: 0 },
    });
    // Sent again: a duplicate, nothing runs.
    const again = await post(`${strict.url}/api/fulfillment`, {
      OrderId: orderId,
      SessionId: session.sessionId,
    });
    expect(again.body).toEqual({ OrderId: orderId, SessionId: session.sessionId, Status: 'duplicate' });

    // The forgery did not keep the cart: the user's genuine order still goes through.
    const { order } = await session.pay();
    expect((await session.waitForCallback()).body).toMatchObject({
      OrderId: order.orderId,
      ServiceStatus: 'success',
    });
    await pipelineOf(strict).drain();
    expect(strict.fulfiller.calls.get(order.orderId)).toBe(1);
    nothingDelivered(strict, orderId);
  });

  it("refuses the sandbox driver's forged request (OrderInfo claiming Paid) the same way", async () => {
    const session = await toCart(strict);
    const orderId = randomUUID();
    const [delivery] = await session.forgeFulfillment({
      orderId,
      orderInfo: { Status: 'Paid', Items: [], Payment: { AmountPaid: 5, IsSuccessful: true } },
    });
    expect(delivery).toMatchObject({ kind: 'fulfillment-request', statusCode: 200 });
    expect((await rejection(strict, orderId)).reason).toBe('NOT_PAID');
    nothingDelivered(strict, orderId);
    expect(sandbox.session(session.sessionId)!.state).toBe('cart');
  });

  it('emits the rejected event for requests refused at once too (unknown session: 404)', async () => {
    const orderId = randomUUID();
    const sessionId = randomUUID();
    const res = await post(`${strict.url}/api/fulfillment`, { OrderId: orderId, SessionId: sessionId });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'HUBTEL_UNKNOWN_SESSION' });
    expect(await rejection(strict, orderId)).toMatchObject({
      reason: 'UNKNOWN_SESSION',
      orderId,
      sessionId,
      serviceCode: null,
      checks: 0,
    });
    nothingDelivered(strict, orderId);
  });

  it('keeps a payment the status check reports in another currency for a person (CURRENCY_MISMATCH: rejected alert, nothing delivered), as checkout does', async () => {
    const session = await toCart(strict);
    // The platform's status check answers Paid, for the cart's 5.00, but in US dollars.
    sandbox.faults.add({
      match: { api: 'status' },
      status: 200,
      body: {
        message: 'Successful',
        responseCode: '0000',
        data: {
          date: new Date().toISOString(),
          status: 'Paid',
          transactionId: 'a1b2c3',
          externalTransactionId: '0000006824852622',
          paymentMethod: 'mobilemoney',
          clientReference: session.sessionId,
          currencyCode: 'USD',
          amount: 5,
          charges: 0.05,
          amountAfterCharges: 4.95,
          isFulfilled: false,
        },
      },
    });
    const { order } = await session.pay();
    expect(await rejection(strict, order.orderId)).toMatchObject({
      reason: 'CURRENCY_MISMATCH',
      orderId: order.orderId,
      sessionId: session.sessionId,
      message: expect.stringContaining('payment in USD for session'),
    });
    heldThenFailed(strict, order.orderId);
  });

  it('delivers a genuine order once, after the status check confirmed its payment', async () => {
    const session = await toCart(strict);
    const { order, deliveries } = await session.pay();
    expect(JSON.parse(deliveries[0]!.responseBody!)).toEqual({
      OrderId: order.orderId,
      SessionId: session.sessionId,
      Status: 'received',
    });
    expect((await session.waitForCallback()).body).toMatchObject({
      OrderId: order.orderId,
      SessionId: session.sessionId,
      ServiceStatus: 'success',
    });
    await pipelineOf(strict).drain();
    expect(strict.fulfiller.calls.get(order.orderId)).toBe(1);
    expect(strict.fulfiller.seen.find((e) => e.orderId === order.orderId)).toMatchObject({
      payment: {
        confirmedByStatusCheck: true,
        amount: 5,
        currencyCode: 'GHS',
        transactionId: order.transactionId,
      },
    });
    expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === order.orderId)).toHaveLength(1);
    expect(await strict.fulfillment.getOrder(order.orderId)).toMatchObject({
      payment: { status: 'confirmed', checks: 1 },
      handler: { status: 'done', attempts: 1 },
      callback: { serviceStatus: 'success', status: 'done' },
    });
    expect(strict.fulfiller.rejected.some((e) => e.orderId === order.orderId)).toBe(false);
  });

  it('re-checks a payment the platform records late, and delivers it once it is recorded', async () => {
    const session = await toCart(patient);
    const { order } = await session.pay({ recordPayment: false });
    const orderId = order.orderId;
    // Checked at least twice and still unknown: nothing delivered yet.
    await until(() => statusChecks() >= 2);
    expect(patient.fulfiller.calls.get(orderId)).toBeUndefined();
    expect(await patient.fulfillment.getOrder(orderId)).toMatchObject({ payment: { status: 'checking' } });

    session.recordPayment();
    expect((await session.waitForCallback()).body).toMatchObject({
      OrderId: orderId,
      ServiceStatus: 'success',
    });
    await pipelineOf(patient).drain();
    expect(patient.fulfiller.calls.get(orderId)).toBe(1);
    expect(patient.fulfiller.rejected.some((e) => e.orderId === orderId)).toBe(false);
    expect(await patient.fulfillment.getOrder(orderId)).toMatchObject({ payment: { status: 'confirmed' } });
  });

  it("keeps a payment of another amount than the cart's total for a person (AMOUNT_MISMATCH: rejected alert, nothing delivered), without waiting", async () => {
    // The patient merchant: a mismatch is not re-checked for the minute; it waits for a person.
    const session = await toCart(patient);
    const { order } = await session.pay({ amount: 0.5 });
    expect(await rejection(patient, order.orderId)).toMatchObject({
      reason: 'AMOUNT_MISMATCH',
      amountExpected: 5,
      amountPaid: 0.5,
      paymentStatus: 'Paid',
      checks: 1,
    });
    heldThenFailed(patient, order.orderId);
  });

  it('says once at start-up that fulfillment requests are trusted unverified when no status check is configured', async () => {
    const verified = patient.logger.lines.filter((l) => l.includes(UNVERIFIED));
    expect(verified).toEqual([]);
    const logger = new RecordingLogger();
    const unverified = await startMerchant(
      adapter,
      { callbackUrl: sandbox.baseUrls().fulfillmentCallback },
      {},
      { logger },
    );
    try {
      // A request or two later, still said once.
      const session = await toCart(unverified);
      await session.pay();
      await session.waitForCallback();
      const warnings = logger.lines.filter((l) => l.includes(UNVERIFIED));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('serviceApp.statusCheck');
      expect(warnings[0]).toContain('serviceApp.access');
    } finally {
      await unverified.close();
    }
  });
});
