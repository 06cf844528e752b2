/*
 * A payment check refused by the instance's status-check budget (issue 21, item 5) is deferred,
 * not counted: over real HTTP against the sandbox, a genuine paid order that arrives while the
 * budget is spent is neither refused (NOT_PAID / NOT_CONFIRMED) nor left short of its six checks,
 * however long the budget stays spent; once it allows again, the order is verified and delivered
 * once. The budget runs on a test clock (its `now` hook, put in place of the app's budget), so the
 * minute passes at once; the re-check window is short, so six counted checks would end it.
 */
import {
  HUBTEL_STATUS_CHECK_BUDGET,
  StatusCheckBudget,
  type InboundPipeline,
  type JobRecord,
} from '#internal';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import type { ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import { MAX_STATUS_CHECKS } from '../libs/service-app/src/fulfillment/fulfillment.payment.js';
import { SERVICE_APP_JOBS, SERVICE_APP_PIPELINE } from '../libs/service-app/src/service-app.constants.js';
import { RecordingLogger } from './support/service-app.fixtures.js';
import { startMerchant, type Merchant } from './support/service-app.harness.js';

/** Polls `test()` (sync or async) until it holds. */
async function until(test: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error('until: timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("service app: a payment check refused by the instance's status-check budget", () => {
  /** The budget's clock: the test moves it; the pipeline's timers keep real time. */
  const clock = { now: 1_000_000 };
  const START = clock.now;
  /** The whole re-check window: six counted checks end it well within the test. */
  const RECHECK_MS = 300;
  const logger = new RecordingLogger();
  let sandbox: HubtelSandbox;
  let merchant: Merchant;
  let budget: StatusCheckBudget;
  let refusals = 0;

  const pipeline = () => merchant.app.get<InboundPipeline>(SERVICE_APP_PIPELINE);
  const statusChecks = () => sandbox.requests().filter((r) => r.api === 'status').length;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    refusals = 0;
    budget = new StatusCheckBudget({
      logger,
      now: () => clock.now,
      // Counts the checks it refused (what the metric hubtel_status_checks_refused_total counts).
      telemetry: { record: (signal) => void (signal.kind === 'status-check-budget' && refusals++) },
    });
    const options: ServiceAppModuleOptions = {
      callbackUrl: sandbox.baseUrls().fulfillmentCallback,
      callbackTimeoutMs: 2_500,
      callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 6_000 },
      fulfillmentRetry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 },
      statusCheck: {
        ...sandbox.credentials.api,
        posSalesId: sandbox.posSalesId,
        url: sandbox.baseUrls().status,
      },
      verification: { recheckForMs: RECHECK_MS, recheckDelay: { baseDelayMs: 5, maxDelayMs: 20 } },
      // One check a minute: the first order spends the budget.
      statusCheckBudget: { perMinute: 1 },
    };
    merchant = await startMerchant(
      'express',
      options,
      {},
      {
        logger,
        overrides: [[HUBTEL_STATUS_CHECK_BUDGET, budget]],
      },
    );
  });

  afterAll(async () => {
    await merchant?.close();
    await sandbox?.stop();
  });

  /** A cart of 1GB for GHS 5.00, as the platform's client app builds it. */
  async function toCart() {
    const session = sandbox.serviceApp(merchant.url);
    await session.start();
    await session.reply('0241234567');
    await session.choose('1gb');
    return session;
  }

  it('defers a paid order without counting it among its checks, then verifies and delivers it once', async () => {
    // The module's option configured the app's budget.
    expect(budget.perMinute).toBe(1);

    // A first genuine order takes the minute's one check.
    const first = await toCart();
    await first.pay();
    expect((await first.waitForCallback()).body).toMatchObject({ ServiceStatus: 'success' });
    expect(statusChecks()).toBe(1);

    // 100 ms before the minute is over: every payment check is refused, the next allowed in 100 ms.
    clock.now = START + 59_900;
    const session = await toCart();
    const { order, deliveries } = await session.pay();
    expect(deliveries[0]).toMatchObject({ statusCode: 200 });
    const orderId = order.orderId;
    const record = () =>
      pipeline().get<unknown>(SERVICE_APP_JOBS.payment, orderId) as Promise<JobRecord | undefined>;

    // Asked again and again, more than MAX_STATUS_CHECKS times and past the re-check window.
    const since = Date.now();
    const refused = () => merchant.fulfiller.rejected.filter((e) => e.orderId === orderId);
    // (Or until it is refused, as it was when a refused check counted: the assertions below say so.)
    await until(async () => refused().length > 0 || refusals > 2 * MAX_STATUS_CHECKS);
    await until(() => Date.now() - since > 2 * RECHECK_MS);
    expect(refused()).toEqual([]);
    expect(statusChecks()).toBe(1);
    expect(merchant.fulfiller.calls.get(orderId)).toBeUndefined();
    expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toEqual([]);
    expect(await merchant.fulfillment.getOrder(orderId)).toMatchObject({ payment: { status: 'checking' } });
    // No check of the order's six was used: nothing reached the platform.
    expect(await record()).toMatchObject({ status: 'pending', attempts: 0, state: { checks: 0 } });
    // One warning for the whole episode, however many checks it refused.
    expect(logger.lines.filter((l) => l.includes('Status-check budget reached'))).toHaveLength(1);

    // The minute is over: the next run's check is sent, the order verified and delivered once.
    clock.now = START + 60_000;
    expect((await session.waitForCallback()).body).toMatchObject({
      OrderId: orderId,
      SessionId: session.sessionId,
      ServiceStatus: 'success',
    });
    await pipeline().drain();
    expect(statusChecks()).toBe(2);
    expect(merchant.fulfiller.calls.get(orderId)).toBe(1);
    expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(1);
    expect(refused()).toEqual([]);
    expect(await merchant.fulfillment.getOrder(orderId)).toMatchObject({
      payment: { status: 'confirmed' },
      handler: { status: 'done', attempts: 1 },
      callback: { serviceStatus: 'success', status: 'done' },
    });
  }, 30_000);
});
