/*
 * Charges borne by either side, and payments that match on neither count (issue 31), on checkout:
 * the sandbox as the platform (its status check reports `amount`, `charges`, `amountAfterCharges`
 * as the bearer makes them), over real HTTP, on Express and Fastify; on the memory store (one
 * instance) and on Redis with two replicas (the platform calls one, the merchant's code the other).
 */
import { Registry } from 'prom-client';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import type { CheckoutModuleOptions } from 'nestjs-hubtel/checkout';
import { HubtelMetricsModule } from 'nestjs-hubtel/metrics';
import { ADAPTERS, settle, startCheckoutApp, type CheckoutTestApp } from './support/checkout-harness.js';
import { eventually } from './support/multi-process.js';
import { STORE_KINDS, storeFixture } from './support/test-stores.js';

for (const adapter of ADAPTERS) {
  for (const kind of STORE_KINDS) {
    const stores = storeFixture(kind);
    stores.describe(`checkout charges and payments needing attention (${adapter}, ${kind} store)`, () => {
      let sandbox: HubtelSandbox;
      /** The replica the merchant's code runs on. */
      let a: CheckoutTestApp;
      /** The replica the platform's callbacks reach (the same one on the memory store). */
      let b: CheckoutTestApp;
      const registries: Registry[] = [];
      let seq = 0;

      beforeAll(async () => {
        // A 2% charge: a 1.00 invoice is 1.02 paid (payer) or 0.98 received (merchant).
        sandbox = await HubtelSandbox.start({ checkout: { chargeRate: 0.02 } });
        const urls = sandbox.baseUrls();
        const start = async () => {
          const registry = new Registry();
          registries.push(registry);
          const options: CheckoutModuleOptions = {
            ...sandbox.credentials.api,
            baseUrls: { checkout: urls.checkout, status: urls.status },
            posSalesId: sandbox.posSalesId,
            returnUrl: 'https://shop.example.test/return',
            cancellationUrl: 'https://shop.example.test/cancel',
            retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
            handlers: { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 } },
            reconciliation: { enabled: false },
            verification: { recheck: { attempts: 1, delayMs: 20, maxDelayMs: 20 } },
            store: await stores.create(),
          };
          return startCheckoutApp(adapter, options, {}, undefined, false, [
            HubtelMetricsModule.forRoot({ registry }),
            ...stores.jobRunnerImports(),
          ]);
        };
        a = await start();
        b = kind === 'memory' ? a : await start();
      });
      afterEach(() => sandbox.setChargeBearer('merchant'));
      afterAll(async () => {
        if (b !== a) await b?.close();
        await a?.close();
        await stores.dispose();
        await sandbox?.stop();
      });

      const replicas = () => (a === b ? [a] : [a, b]);
      const events = <K extends 'paid' | 'attention' | 'rejected'>(kind: K, ref: string) =>
        replicas()
          .flatMap((r) => r.handlers.events[kind] as Array<{ clientReference: string }>)
          .filter((e) => e.clientReference === ref);
      const drain = async () => {
        for (const r of replicas()) await r.service.drain();
      };
      /** `payments_attention_total` (and resolved) of both replicas' registries. */
      async function metric(name: string, labels: Record<string, string>): Promise<number> {
        let total = 0;
        for (const registry of registries) {
          const values = (await registry.getSingleMetric(`hubtel_${name}`)?.get())?.values ?? [];
          for (const v of values)
            if (Object.entries(labels).every(([k, value]) => v.labels[k] === value)) total += v.value;
        }
        return total;
      }

      async function invoice(amount = 1) {
        const ref = `chg-${kind}-${adapter}-${++seq}`;
        await a.service.createInvoice({
          totalAmount: amount,
          description: 'Airtime',
          clientReference: ref,
          callbackUrl: b.callbackUrl,
        });
        return ref;
      }

      it.each([
        ['payer', { gross: 1.02, charges: 0.02, net: 1, chargesBorneBy: 'payer' }],
        ['merchant', { gross: 1, charges: 0.02, net: 0.98, chargesBorneBy: 'merchant' }],
      ] as const)(
        'a %s-borne charge: paid once, with the verified gross, charges and net',
        async (bearer, amounts) => {
          sandbox.setChargeBearer(bearer);
          const ref = await invoice();
          await sandbox.pay(ref);
          await eventually(`${ref} paid`, () => events('paid', ref).length > 0 || undefined);
          await drain();
          await settle();
          const paid = events('paid', ref);
          expect(paid).toHaveLength(1);
          expect(paid[0]).toMatchObject({
            amount: 1,
            amountPaid: amounts.gross,
            confirmedByStatusCheck: true,
            amounts: { ...amounts, currency: 'GHS' },
          });
          expect(await a.service.getInvoice(ref)).toMatchObject({ status: 'paid', amounts });
          expect(events('attention', ref)).toEqual([]);
        },
      );

      it('an underpayment: kept "attention" with its event and metric once, never paid by itself; resolved as refunded', async () => {
        const ref = await invoice();
        // The payer paid 0.50 for the 1.00 invoice (payer-borne: 0.51 paid, 0.50 after charges).
        await sandbox.pay(ref, { amount: 0.5, chargeBearer: 'payer' });
        // The callback's claim is refused at once; the status check (here the merchant's own
        // reconcile, the reconciler's on its schedule) finds the money and keeps it for a person.
        await eventually(`${ref} rejected`, () => events('rejected', ref).length > 0 || undefined);
        const result = await a.service.reconcile(ref);
        expect(result.outcome).toBe('rejected');
        await eventually(`${ref} attention`, () => events('attention', ref).length > 0 || undefined);
        await drain();
        // Found again (the other replica): nothing new.
        expect((await b.service.reconcile(ref)).outcome).toBe('rejected');
        await drain();
        expect(events('attention', ref)).toHaveLength(1);
        expect(events('attention', ref)[0]).toMatchObject({
          reason: 'AMOUNT_MISMATCH',
          amount: 1,
          amounts: { gross: 0.51, charges: 0.01, net: 0.5 },
        });
        expect(await b.service.getInvoice(ref)).toMatchObject({
          status: 'attention',
          attention: { reason: 'AMOUNT_MISMATCH', amounts: { gross: 0.51, net: 0.5 } },
        });
        expect(
          await metric('payments_attention_total', { source: 'checkout', reason: 'AMOUNT_MISMATCH' }),
        ).toBe(1);
        expect(events('paid', ref)).toEqual([]);

        const refunded = await b.service.resolveAttention(ref, 'refund', 'refunded by MoMo');
        expect(refunded).toMatchObject({
          status: 'refunded',
          attention: { resolution: { action: 'refunded', note: 'refunded by MoMo' } },
        });
        // Resolving the same way again is a no-op; the other way is refused.
        await a.service.resolveAttention(ref, 'refund');
        await expect(a.service.resolveAttention(ref, 'deliver')).rejects.toMatchObject({
          code: 'HUBTEL_STORE_CONFLICT',
        });
        await drain();
        expect(events('paid', ref)).toEqual([]);
        expect(
          await metric('payments_attention_resolved_total', { source: 'checkout', resolution: 'refunded' }),
        ).toBe(1);
      });

      it('a payment in another currency: kept "attention" with its event and metric once; delivered anyway from code, paid once', async () => {
        const ref = await invoice();
        await sandbox.pay(ref, { currency: 'USD' });
        await eventually(`${ref} attention`, () => events('attention', ref).length > 0 || undefined);
        await drain();
        expect(events('attention', ref)).toHaveLength(1);
        expect(events('attention', ref)[0]).toMatchObject({
          reason: 'CURRENCY_MISMATCH',
          amounts: { gross: 1, currency: 'USD' },
        });
        expect(await a.service.getInvoice(ref)).toMatchObject({ status: 'attention' });
        expect(
          await metric('payments_attention_total', { source: 'checkout', reason: 'CURRENCY_MISMATCH' }),
        ).toBe(1);
        expect(events('paid', ref)).toEqual([]);

        await a.service.resolveAttention(ref, 'deliver');
        await eventually(`${ref} paid`, () => events('paid', ref).length > 0 || undefined);
        await b.service.resolveAttention(ref, 'deliver');
        await drain();
        await settle();
        expect(events('paid', ref)).toHaveLength(1);
        expect(events('paid', ref)[0]).toMatchObject({
          amounts: { gross: 1, currency: 'USD' },
          attention: { reason: 'CURRENCY_MISMATCH', resolution: { action: 'delivered' } },
        });
        expect(await b.service.getInvoice(ref)).toMatchObject({ status: 'paid' });
        expect(
          await metric('payments_attention_resolved_total', { source: 'checkout', resolution: 'delivered' }),
        ).toBe(1);
      });
    });
  }
}
