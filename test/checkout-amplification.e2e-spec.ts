/**
 * What forged callbacks can make the module spend of the merchant's status checks (issue 21,
 * item 5; issue 30, item 4), over real HTTP against the sandbox: a forged Success on a real unpaid
 * invoice, sent again and again, costs at most one check per `recheck.minIntervalMs`, and leaves
 * no record for days; and the instance's budget of checks a minute, shared by checkout and the
 * service app, holds with a metric and one warning line. Before issue 21: 300 paced copies made
 * about 300 checks. The genuine payment after a flood: checkout-forged-early.e2e-spec.ts.
 */
import { HubtelStatusCheckBudgetError, type HubtelStore } from 'nestjs-hubtel';
import type { CheckoutModuleOptions } from 'nestjs-hubtel/checkout';
import { HubtelMetricsModule } from 'nestjs-hubtel/metrics';
import { RedisStore } from 'nestjs-hubtel/redis';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import { Registry } from 'prom-client';
import type { ServiceAppAccounts } from '../libs/service-app/src/service-app.accounts.js';
import { SERVICE_APP_ACCOUNTS } from '../libs/service-app/src/service-app.constants.js';
import { CaptureLogger } from './support/capture-logger.js';
import { callbackBody, settle, startCheckoutApp, type CheckoutTestApp } from './support/checkout-harness.js';
import { checkoutSettled, eventually } from './support/job-settle.js';
import { STORE_KINDS, storeFixture } from './support/test-stores.js';

const HOUR_MS = 3600_000;

function statusChecks(sandbox: HubtelSandbox): number {
  return sandbox.requests().filter((r) => r.api === 'status' && r.statusCode !== null).length;
}

function baseOptions(sandbox: HubtelSandbox): CheckoutModuleOptions {
  const urls = sandbox.baseUrls();
  return {
    ...sandbox.credentials.api,
    baseUrls: { checkout: urls.checkout, status: urls.status },
    posSalesId: sandbox.posSalesId,
    returnUrl: 'https://shop.example.test/return',
    cancellationUrl: 'https://shop.example.test/cancel',
    retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    handlers: { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 } },
    // Only the callback path makes checks here.
    reconciliation: { enabled: false },
    // Three re-checks, quickly (10, 20, 40 ms), and one invoice's checks at least 100 ms apart.
    verification: { recheck: { attempts: 3, delayMs: 10, maxDelayMs: 40, minIntervalMs: 100 } },
  };
}

for (const kind of STORE_KINDS) {
  const stores = storeFixture(kind);
  stores.describe(`checkout: paced forged copies on an unpaid invoice (${kind} store)`, () => {
    let sandbox: HubtelSandbox;
    let store: HubtelStore;
    let t: CheckoutTestApp | undefined;

    beforeAll(async () => {
      sandbox = await HubtelSandbox.start();
      store = await stores.create();
    });
    afterAll(async () => {
      await t?.close();
      await sandbox.stop();
      await stores.dispose();
    });

    it('costs at most one check per minIntervalMs, in one round, and keeps its round records for hours', async () => {
      t = await startCheckoutApp(
        'express',
        { ...baseOptions(sandbox), store },
        {},
        undefined,
        false,
        stores.jobRunnerImports(),
      );
      const created = await t.service.createInvoice({
        totalAmount: 12.5,
        description: 'Data bundle 5GB',
        clientReference: 'amp-1',
        callbackUrl: t.callbackUrl,
      });
      const forged = callbackBody({ ref: 'amp-1', checkoutId: created.checkoutId, amount: 12.5 });
      // 150 copies, one every 5 ms at most (three quarters of a second or more: seven spacings'
      // worth or more; each spacing is one check, however many copies it saw. A minute's stream:
      // checkout-forged-early.e2e-spec.ts).
      const started = Date.now();
      for (let copy = 0; copy < 150; copy++) {
        expect((await t.post(forged)).status).toBe(200);
        await settle(5);
      }
      const streamMs = Date.now() - started;
      // The last copy's checks (spaced), then the round ends.
      await t.handlers.waitFor('rejected');
      await checkoutSettled(t.app);

      const at = sandbox
        .requests()
        .filter((r) => r.api === 'status' && r.statusCode !== null)
        .map((r) => Date.parse(r.at));
      const gaps = at.slice(1).map((time, i) => time - at[i]!);
      expect(gaps.filter((gap) => gap < 100)).toEqual([]);
      // The stream's share (one at its start, then one per 100 ms), and the last copy's three
      // re-checks and the check it came for, after it.
      expect(at.length).toBeLessThanOrEqual(Math.floor(streamMs / 100) + 1 + 4);
      const invoice = (await t.service.getInvoice('amp-1'))!;
      expect(invoice.status).toBe('pending');
      // Each round ended, rejected, once its latest copy's checks were made (a pause in the
      // stream may end one; the next copy starts another, spaced all the same).
      expect(invoice.confirmRound).toBeGreaterThanOrEqual(1);
      expect(t.handlers.events.rejected.filter((r) => r.reason === 'NOT_CONFIRMED')).toHaveLength(
        invoice.confirmRound!,
      );

      // The invoice is the merchant's own record (kept its 30 days); what the rounds left expires
      // in hours. Round records are the confirmation jobs (a copy that came as a round ended may
      // also have left a wake mark, `hubtel:checkout:wake:<job key>`: not a round, and it expires).
      const keys: string[] = [];
      for await (const [key] of store.scan('hubtel:checkout:')) keys.push(key);
      const rounds = keys.filter((key) => key.startsWith('hubtel:checkout:job:hubtel.checkout.confirm:'));
      expect(rounds.length).toBeGreaterThan(0);
      expect(rounds.length).toBeLessThanOrEqual(invoice.confirmRound!);
      if (store instanceof RedisStore) {
        for (const key of keys.filter((k) => !k.startsWith('hubtel:checkout:invoice:'))) {
          const ttl = await store.client.pttl(store.keyPrefix + key);
          expect({ key, expires: ttl > 0 && ttl <= 3 * HOUR_MS }).toEqual({ key, expires: true });
        }
      }

      // The genuine payment is not lost: the status check (here, by hand; the reconciler in a
      // real app) still settles it once.
      await sandbox.pay('amp-1');
      await t.service.reconcile('amp-1');
      await checkoutSettled(t.app);
      expect(t.handlers.paidCalls).toBe(1);
    }, 60_000);
  });
}

describe('the instance’s status-check budget', () => {
  let sandbox: HubtelSandbox;
  let t: CheckoutTestApp | undefined;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
  });
  afterAll(async () => {
    await t?.close();
    await sandbox.stop();
  });

  it('is shared by checkout and the service app, with one warning line and a metric when reached', async () => {
    const logger = new CaptureLogger();
    const registry = new Registry();
    const urls = sandbox.baseUrls();
    t = await startCheckoutApp(
      'express',
      { ...baseOptions(sandbox), statusCheckBudget: { perMinute: 5 } },
      {},
      undefined,
      logger,
      [
        HubtelMetricsModule.forRoot({ registry }),
        ServiceAppModule.forRoot({
          routes: { disabled: true },
          statusCheck: { ...sandbox.credentials.api, posSalesId: sandbox.posSalesId, url: urls.status },
        }),
      ],
    );
    // Eight invoices, a forged Success for each: five checks, then the budget says no.
    for (let i = 0; i < 8; i++) {
      const created = await t.service.createInvoice({
        totalAmount: 12.5,
        description: 'Data bundle 5GB',
        clientReference: `bud-${i}`,
        callbackUrl: t.callbackUrl,
      });
      await t.post(callbackBody({ ref: `bud-${i}`, checkoutId: created.checkoutId, amount: 12.5 }));
    }
    // Every callback's check asked (five made, three refused: their jobs run on a loaded machine's
    // time), then room for a sixth, had the budget let one through.
    const refusedOf = (metrics: string, operation: string) =>
      Number(
        new RegExp(`hubtel_status_checks_refused_total\\{operation="${operation}"\\} (\\d+)`).exec(
          metrics,
        )?.[1] ?? 0,
      );
    await eventually(
      async () =>
        statusChecks(sandbox) >= 5 && refusedOf(await registry.metrics(), 'checkout\\.getStatus') >= 3,
      'five status checks made and three refused',
    );
    await settle(300);
    expect(statusChecks(sandbox)).toBe(5);

    // The service app's payment check draws on the same budget: refused, and not sent.
    const accounts = t.app.get<ServiceAppAccounts>(SERVICE_APP_ACCOUNTS, { strict: false });
    await expect(accounts.default.checkPayment!('session-1')).rejects.toBeInstanceOf(
      HubtelStatusCheckBudgetError,
    );
    await expect(t.service.getStatus('bud-0')).rejects.toMatchObject({ code: 'HUBTEL_STATUS_CHECK_BUDGET' });
    expect(statusChecks(sandbox)).toBe(5);

    const warnings = logger.lines.filter(
      (l) => l.level === 'warn' && /Status-check budget reached/.test(l.message),
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('5 transaction status checks in the last minute');
    const metrics = await registry.metrics();
    expect(refusedOf(metrics, 'checkout\\.getStatus')).toBeGreaterThanOrEqual(4);
    expect(metrics).toMatch(/hubtel_status_checks_refused_total\{operation="serviceApp\.paymentStatus"\} 1/);
  }, 30_000);
});
