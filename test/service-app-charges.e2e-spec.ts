/*
 * Charges borne by either side, and payments that match on neither count (issue 31), on the
 * service app: the sandbox as the platform (client-app driver, status check with `amount`,
 * `charges`, `amountAfterCharges` as the bearer makes them, OrderInfo in its 2026 shape, callback
 * receiver), over real HTTP, on Express and Fastify; on the memory store (one instance) and on
 * Redis with two replicas (jobs on BullMQ: either replica runs them; the merchant's code runs on B).
 */
import { jest } from '@jest/globals';
import { Registry } from 'prom-client';
import { HubtelStoreUnavailableError } from 'nestjs-hubtel';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import type { ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import { HubtelMetricsModule } from 'nestjs-hubtel/metrics';
import { type InboundPipeline } from '#internal';
import { SERVICE_APP_JOBS, SERVICE_APP_PIPELINE } from '../libs/service-app/src/service-app.constants.js';
import { eventually } from './support/multi-process.js';
import { startMerchant, onAppChannel, type Adapter, type Merchant } from './support/service-app.harness.js';
import { RecordingLogger } from './support/service-app.fixtures.js';
import { STORE_KINDS, storeFixture } from './support/test-stores.js';

/**
 * The callback deadline of these merchants: an order nobody resolves is reported at 3/4 of it
 * (1.8 s after its callback came). The test of that waits that long, so it is short; it still leaves
 * the tests that resolve an order over 1.5 s between the attention event and their resolveAttention()
 * (a few store reads), and the platform's first "failed" callback goes out whatever is left.
 */
const DEADLINE_MS = 2_400;

for (const adapter of ['express', 'fastify'] as Adapter[]) {
  for (const kind of STORE_KINDS) {
    const stores = storeFixture(kind);
    stores.describe(`service-app charges and orders needing attention (${adapter}, ${kind} store)`, () => {
      let sandbox: HubtelSandbox;
      /** The replica the platform calls. */
      let a: Merchant;
      /** The replica the merchant's code runs on (the same one on the memory store). */
      let b: Merchant;
      const registries: Registry[] = [];
      const logger = new RecordingLogger();

      beforeAll(async () => {
        // A 2% charge: the 5.00 bundle is 5.10 paid (payer) or 4.90 received (merchant).
        sandbox = onAppChannel(await HubtelSandbox.start({ checkout: { chargeRate: 0.02 } }));
        const start = async () => {
          const registry = new Registry();
          registries.push(registry);
          return startMerchant(
            adapter,
            await merchantOptions(DEADLINE_MS),
            {},
            { logger, imports: [HubtelMetricsModule.forRoot({ registry }), ...stores.jobRunnerImports()] },
          );
        };
        a = await start();
        b = kind === 'memory' ? a : await start();
      });
      afterEach(async () => {
        sandbox.setChargeBearer('merchant');
        for (const m of replicas()) await m.app.get<InboundPipeline>(SERVICE_APP_PIPELINE).drain();
      });
      afterAll(async () => {
        if (b !== a) await b?.close();
        await a?.close();
        await stores.dispose();
        await sandbox?.stop();
      });

      const merchantOptions = async (deadlineMs: number): Promise<ServiceAppModuleOptions> => ({
        store: await stores.create(),
        callbackUrl: sandbox.baseUrls().fulfillmentCallback,
        callbackTimeoutMs: 2_500,
        callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs },
        fulfillmentRetry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
        statusCheck: {
          ...sandbox.credentials.api,
          posSalesId: sandbox.posSalesId,
          url: sandbox.baseUrls().status,
        },
        verification: { recheckForMs: 400, recheckDelay: { baseDelayMs: 10, maxDelayMs: 20 } },
      });
      const replicas = () => (a === b ? [a] : [a, b]);
      const runs = (orderId: string) =>
        replicas().reduce((n, m) => n + (m.fulfiller.calls.get(orderId) ?? 0), 0);
      const seen = (orderId: string) =>
        replicas().flatMap((m) => m.fulfiller.seen.filter((e) => e.orderId === orderId));
      const attention = (orderId: string) =>
        replicas().flatMap((m) => m.fulfiller.attention.filter((e) => e.orderId === orderId));
      const callbacks = (orderId: string) =>
        sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId);
      async function metric(name: string, labels: Record<string, string>): Promise<number> {
        let total = 0;
        for (const registry of registries) {
          const values = (await registry.getSingleMetric(`hubtel_${name}`)?.get())?.values ?? [];
          for (const v of values)
            if (Object.entries(labels).every(([k, value]) => v.labels[k] === value)) total += v.value;
        }
        return total;
      }

      /** The contract's three service-flow calls on replica A: a cart of 1GB for GHS 5.00. */
      async function toCart(merchant = a) {
        const session = sandbox.serviceApp(merchant.url);
        await session.start();
        await session.reply('0241234567');
        await session.choose('1gb');
        return session;
      }

      it.each([
        ['payer', { gross: 5.1, charges: 0.1, net: 5, chargesBorneBy: 'payer' }],
        ['merchant', { gross: 5, charges: 0.1, net: 4.9, chargesBorneBy: 'merchant' }],
      ] as const)(
        'a %s-borne charge: delivered once, with the verified figures and OrderInfo as typed claims',
        async (bearer, amounts) => {
          sandbox.setChargeBearer(bearer);
          const session = await toCart();
          const { order } = await session.pay({ orderInfo: true });
          await eventually('the success callback', () => callbacks(order.orderId)[0]);
          expect(runs(order.orderId)).toBe(1);
          expect(callbacks(order.orderId).map((c) => c.serviceStatus)).toEqual(['success']);
          expect(seen(order.orderId)[0]).toMatchObject({
            payment: {
              confirmedByStatusCheck: true,
              amount: amounts.gross,
              amounts: { ...amounts, currency: 'GHS' },
            },
            claims: {
              status: 'Paid',
              currency: 'GHS',
              subtotal: amounts.gross,
              items: [{ name: '1GB for GHS 5.00', quantity: 1, unitPrice: 5 }],
              payment: { amountPaid: amounts.gross, amountAfterCharges: amounts.net, isSuccessful: true },
            },
          });
          expect(attention(order.orderId)).toEqual([]);
        },
      );

      it('an underpayment: kept "attention" with its event and metric once, nothing delivered; refunded from code, the platform told "failed"', async () => {
        const session = await toCart();
        const { order } = await session.pay({ amount: 2.5 });
        await eventually('the attention event', () => attention(order.orderId)[0]);
        const order1 = await b.fulfillment.getOrder(order.orderId);
        expect(order1).toMatchObject({
          payment: {
            status: 'attention',
            attention: { reason: 'AMOUNT_MISMATCH', amountExpected: 5, amounts: { gross: 2.5, net: 2.45 } },
          },
        });
        expect(attention(order.orderId)).toHaveLength(1);
        expect(attention(order.orderId)[0]).toMatchObject({
          attention: { reason: 'AMOUNT_MISMATCH', decideBy: expect.any(String) },
          payment: { amount: 2.5 },
        });
        expect(
          await metric('payments_attention_total', { source: 'fulfillment', reason: 'AMOUNT_MISMATCH' }),
        ).toBe(1);
        expect(runs(order.orderId)).toBe(0);
        expect(callbacks(order.orderId)).toEqual([]);

        await b.fulfillment.resolveAttention(order.orderId, 'refund');
        await eventually('the failed callback', () => callbacks(order.orderId)[0]);
        expect(callbacks(order.orderId).map((c) => c.serviceStatus)).toEqual(['failed']);
        await expect(b.fulfillment.resolveAttention(order.orderId, 'deliver')).rejects.toMatchObject({
          code: 'HUBTEL_STORE_CONFLICT',
        });
        expect(runs(order.orderId)).toBe(0);
        expect(
          await metric('payments_attention_resolved_total', {
            source: 'fulfillment',
            resolution: 'refunded',
          }),
        ).toBe(1);
      });

      it('a payment in another currency: kept "attention" with its event and metric; delivered anyway from code, once, the platform told "success"', async () => {
        const session = await toCart();
        const { order } = await session.pay({ currency: 'USD' });
        await eventually('the attention event', () => attention(order.orderId)[0]);
        expect(attention(order.orderId)[0]).toMatchObject({ attention: { reason: 'CURRENCY_MISMATCH' } });
        expect(
          await metric('payments_attention_total', { source: 'fulfillment', reason: 'CURRENCY_MISMATCH' }),
        ).toBe(1);
        expect(runs(order.orderId)).toBe(0);

        await b.fulfillment.resolveAttention(order.orderId, 'deliver');
        await b.fulfillment.resolveAttention(order.orderId, 'deliver');
        await eventually('the success callback', () => callbacks(order.orderId)[0]);
        expect(runs(order.orderId)).toBe(1);
        expect(callbacks(order.orderId).map((c) => c.serviceStatus)).toEqual(['success']);
        expect(seen(order.orderId)[0]).toMatchObject({
          payment: { amounts: { currency: 'USD' } },
          attention: { reason: 'CURRENCY_MISMATCH', resolution: { action: 'delivered' } },
        });
        expect(
          await metric('payments_attention_resolved_total', {
            source: 'fulfillment',
            resolution: 'delivered',
          }),
        ).toBe(1);
      });

      // On the memory store only: a merchant of its own (on Redis, A and B's BullMQ workers would run its jobs).
      if (kind === 'memory')
        it('an order resolved from code settles its deadline run then, not at decideBy: drain() does not wait for it', async () => {
          const patient = await startMerchant(adapter, await merchantOptions(3600_000), {}, { logger });
          try {
            const session = await toCart(patient);
            const { order } = await session.pay({ amount: 2.5 });
            const held = await eventually('the attention event', () =>
              patient.fulfiller.attention.find((e) => e.orderId === order.orderId),
            );
            await patient.fulfillment.resolveAttention(order.orderId, 'refund');
            const pipeline = patient.app.get<InboundPipeline>(SERVICE_APP_PIPELINE);
            const settled = await eventually(
              'the payment check settled',
              async () => {
                const record = await pipeline.get(SERVICE_APP_JOBS.payment, order.orderId);
                return record?.status === 'done' ? record : undefined;
              },
              { timeoutMs: 10_000 },
            );
            // 45 minutes before its deadline: the resolution ended its wait.
            expect(settled.updatedAt).toBeLessThan(Date.parse(held.attention.decideBy));
            await pipeline.drain();
            expect(callbacks(order.orderId).map((c) => c.serviceStatus)).toEqual(['failed']);
          } finally {
            await patient.close();
          }
        });

      if (kind === 'memory')
        it('a resolution whose wake fails still succeeds: the outcome is reported, the run left to its deadline, a warning logged', async () => {
          const patient = await startMerchant(adapter, await merchantOptions(3600_000), {}, { logger });
          try {
            const session = await toCart(patient);
            const { order } = await session.pay({ amount: 2.5 });
            await eventually('the attention event', () =>
              patient.fulfiller.attention.find((e) => e.orderId === order.orderId),
            );
            const pipeline = patient.app.get<InboundPipeline>(SERVICE_APP_PIPELINE);
            const wake = pipeline.wake.bind(pipeline);
            // One fault on the real pipeline: the store away just after the resolution was recorded.
            jest
              .spyOn(pipeline, 'wake')
              .mockRejectedValueOnce(new HubtelStoreUnavailableError('Redis went away'));
            await expect(
              patient.fulfillment.resolveAttention(order.orderId, 'refund'),
            ).resolves.toMatchObject({
              orderId: order.orderId,
            });
            await eventually('the failed callback', () => callbacks(order.orderId)[0]);
            expect(
              logger.lines.some((l) => l.includes(`Order ${order.orderId} settles at its deadline`)),
            ).toBe(true);
            const record = await pipeline.get(SERVICE_APP_JOBS.payment, order.orderId);
            expect(record?.status).toBe('pending');
            // Asked again (as a caller retrying would not need to): the same answer, nothing twice.
            await patient.fulfillment.resolveAttention(order.orderId, 'refund');
            await wake(record!);
            await eventually('the payment check settled', async () =>
              (await pipeline.get(SERVICE_APP_JOBS.payment, order.orderId))?.status === 'done'
                ? true
                : undefined,
            );
            await pipeline.drain();
            expect(callbacks(order.orderId).map((c) => c.serviceStatus)).toEqual(['failed']);
          } finally {
            await patient.close();
          }
        });

      it('an order nobody resolves is reported "failed" to the platform within its deadline, never delivered', async () => {
        const session = await toCart();
        const { order } = await session.pay({ amount: 9 });
        const found = await eventually('the attention event', () => attention(order.orderId)[0]);
        const decideBy = Date.parse(found.attention.decideBy);
        const received = Date.parse(seen(order.orderId)[0]?.receivedAt ?? found.attention.at);
        expect(decideBy - received).toBeLessThanOrEqual(DEADLINE_MS);
        await eventually('the failed callback', () => callbacks(order.orderId)[0], {
          timeoutMs: DEADLINE_MS * 3,
        });
        expect(callbacks(order.orderId).map((c) => c.serviceStatus)).toEqual(['failed']);
        expect(runs(order.orderId)).toBe(0);
        await expect(b.fulfillment.resolveAttention(order.orderId, 'deliver')).rejects.toMatchObject({
          code: 'HUBTEL_STORE_CONFLICT',
        });
      });
    });
  }
}
