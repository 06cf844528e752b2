/**
 * Forged copies sent BEFORE the payer pays (issue 30, item 4), over real HTTP against the sandbox,
 * with reconciliation off: only the callback path can confirm the payment here. Anyone who saw an
 * order's payment link knows its reference and checkout id, so forged "Success" copies may come
 * from the moment the invoice exists. Before: copies sent for 50 s spent the invoice's rounds on
 * "Unpaid" and the genuine callback got no check at all; copies sent 0.3 s before the payment held
 * it back for the round's 14 s.
 *
 * What must hold, whatever forged callbacks came before: the genuine payment is confirmed within
 * 20 s of the platform taking it (the bound), and within `minIntervalMs` of it plus
 * delivery (the module's own: a callback is checked at most `minIntervalMs` after it arrives);
 * a continuous stream for one invoice costs at most 6 status checks in any minute.
 *
 * (A stream then the payment at once is one test: the stream's cost is bounded over the minute,
 * and the payment, coming while its last copies are still owed their checks, is the harder case.)
 *
 * On both stores the scenarios run on a scaled clock: the default `recheck` (re-checks 2 s, 4 s,
 * 8 s; checks at least 10 s apart: checkout.options.spec.ts pins them) scaled, and with it every
 * duration and bound here. The bounds scale the same way: they come from the spacing of checks
 * alone, the sandbox answers at once. The streams run at a tenth (20 s → 2 s, a minute → 6 s);
 * the 0.3 s scenario at a quarter, its bound leaving the delivery 20 % of the spacing (a tenth
 * would leave 200 ms, too little on a loaded machine).
 */
import type { CheckoutModuleOptions } from 'nestjs-hubtel/checkout';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { callbackBody, settle, startCheckoutApp, type CheckoutTestApp } from './support/checkout-harness.js';
import { checkoutSettled } from './support/job-settle.js';
import { storeFixture, type StoreKind } from './support/test-stores.js';

const MINUTE_MS = 60_000;
/** The bound: a genuine payment is confirmed this soon after the platform took it. */
const CONFIRMED_WITHIN_MS = 20_000;
/** The default spacing of one invoice's status checks (6 a minute). */
const INTERVAL_MS = 10_000;

/** The clocks of the scenarios: the default timings, scaled (see above). */
const STREAM_SCALE = 0.1;
const TIGHT_SCALE = 0.25;
const clock = (scale: number) => (real: number) => Math.round(real * scale);

for (const kind of ['redis', 'memory'] as StoreKind[]) {
  const stores = storeFixture(kind);
  const timing = `time scaled by ${STREAM_SCALE} and ${TIGHT_SCALE}`;

  stores.describe(`checkout: forged copies before the payment (${kind} store, ${timing})`, () => {
    let sandbox: HubtelSandbox;
    let t: CheckoutTestApp | undefined;
    let seq = 0;

    beforeAll(async () => {
      sandbox = await HubtelSandbox.start();
    });
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });
    afterAll(async () => {
      await sandbox.stop();
      await stores.dispose();
    });

    /** An app whose verification runs on the clock `ms`. */
    async function start(ms: (real: number) => number): Promise<CheckoutTestApp> {
      sandbox.reset(); // each scenario counts its own status checks
      const store = await stores.create();
      const urls = sandbox.baseUrls();
      const options: CheckoutModuleOptions = {
        ...sandbox.credentials.api,
        baseUrls: { checkout: urls.checkout, status: urls.status },
        posSalesId: sandbox.posSalesId,
        returnUrl: 'https://shop.example.test/return',
        cancellationUrl: 'https://shop.example.test/cancel',
        store,
        reconciliation: { enabled: false },
        verification: {
          recheck: { delayMs: ms(2_000), maxDelayMs: ms(10_000), minIntervalMs: ms(INTERVAL_MS) },
        },
      };
      t = await startCheckoutApp('express', options, {}, undefined, false, stores.jobRunnerImports());
      return t;
    }

    async function invoice(app: CheckoutTestApp) {
      const ref = `early-${kind}-${++seq}`;
      const created = await app.service.createInvoice({
        totalAmount: 12.5,
        description: 'Data bundle 5GB',
        clientReference: ref,
        callbackUrl: app.callbackUrl,
      });
      return { ref, forged: callbackBody({ ref, checkoutId: created.checkoutId, amount: 12.5 }) };
    }

    /**
     * Posts forged copies one every `paceMs` for `forMs` (the attacker's pace: not held back by the
     * app's answers); each is answered 200 like any callback.
     */
    async function forge(
      app: CheckoutTestApp,
      body: unknown,
      forMs: number,
      paceMs: number,
    ): Promise<number> {
      const from = Date.now();
      const answers: Array<Promise<number>> = [];
      // On a schedule: every copy due by now goes out (several at once after a late timer or a
      // slow turn of the event loop), so how many go out does not depend on the machine's speed.
      while (Date.now() < from + forMs) {
        while (answers.length <= (Date.now() - from) / paceMs)
          answers.push(app.post(body).then((answer) => answer.status));
        await settle(from + answers.length * paceMs - Date.now());
      }
      expect(await Promise.all(answers)).toEqual(answers.map(() => 200));
      return answers.length;
    }

    /** When each status check (of the scenario's one invoice) reached the sandbox, oldest first. */
    function checks(): number[] {
      return sandbox
        .requests()
        .filter((r) => r.api === 'status' && r.statusCode !== null)
        .map((r) => Date.parse(r.at));
    }

    /** The most checks made within any window of `windowMs`. */
    function mostInAnyWindow(times: number[], windowMs: number): number {
      return Math.max(
        0,
        ...times.map((from) => times.filter((at) => at >= from && at < from + windowMs).length),
      );
    }

    /**
     * Pays `ref` in the sandbox (which posts the genuine callback) and resolves with how long after
     * the platform took the money the app's paid handler ran; undefined when not within `waitMs`.
     */
    async function payAndTime(
      app: CheckoutTestApp,
      ref: string,
      waitMs: number,
    ): Promise<number | undefined> {
      const seen = app.handlers.waitFor('paid').then(() => Date.now());
      await sandbox.pay(ref);
      const takenAt = Date.parse(sandbox.invoice(ref)!.paidAt!);
      const at = await Promise.race([seen, settle(waitMs).then(() => undefined)]);
      return at === undefined ? undefined : at - takenAt;
    }

    async function expectPaidOnce(app: CheckoutTestApp, ref: string): Promise<void> {
      await checkoutSettled(app.app);
      expect(app.handlers.paidCalls).toBe(1);
      expect(app.handlers.events.paid[0]).toMatchObject({
        clientReference: ref,
        source: 'callback',
        confirmedByStatusCheck: true,
      });
      expect(await app.service.getInvoice(ref)).toMatchObject({ status: 'paid' });
    }

    it('copies sent 0.3 s before the payment: the genuine callback is checked within the spacing of checks, not a round', async () => {
      const ms = clock(TIGHT_SCALE);
      const app = await start(ms);
      const { ref, forged } = await invoice(app);
      // The attacker's timing, not the module's: 0.3 s of copies in either run (enough to spend
      // a round's checks before).
      await forge(app, forged, 300, 25);
      const took = await payAndTime(app, ref, ms(3 * CONFIRMED_WITHIN_MS));
      expect({ confirmedWithinMs: took }).toEqual({ confirmedWithinMs: expect.any(Number) });
      expect(took).toBeLessThanOrEqual(ms(CONFIRMED_WITHIN_MS));
      // The module's bound: checked at most minIntervalMs after it came, plus 20 % for the
      // delivery, the check and the settlement (before: the round's 14 s).
      expect(took).toBeLessThanOrEqual(ms(INTERVAL_MS * 1.2));
      await expectPaidOnce(app, ref);
    }, 60_000);

    it('a 60 s stream of copies before the payer pays costs at most 6 status checks a minute, and the payment right after it is confirmed within 20 s', async () => {
      const ms = clock(STREAM_SCALE);
      const app = await start(ms);
      const { ref, forged } = await invoice(app);
      const copies = await forge(app, forged, ms(MINUTE_MS), ms(250));
      expect(copies).toBeGreaterThan(100);
      // The first copies were refused while the stream went on; none was taken for a payment.
      await app.handlers.waitFor('rejected');
      expect(app.handlers.events.paid).toHaveLength(0);

      // Paid at once: the stream's last copies are still owed their checks, the rounds are busy.
      const took = await payAndTime(app, ref, ms(3 * CONFIRMED_WITHIN_MS));
      expect({ confirmedWithinMs: took }).toEqual({ confirmedWithinMs: expect.any(Number) });
      expect(took).toBeLessThanOrEqual(ms(CONFIRMED_WITHIN_MS));
      await expectPaidOnce(app, ref);
      // The copies bought no more than the spacing's share of checks, the payment's included.
      const made = checks();
      expect(made.length).toBeGreaterThan(0);
      expect(mostInAnyWindow(made, ms(MINUTE_MS))).toBeLessThanOrEqual(6);
      expect(app.handlers.events.rejected.every((r) => r.reason === 'NOT_CONFIRMED')).toBe(true);
    }, 180_000);
  });
}
