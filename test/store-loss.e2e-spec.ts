import { Controller, Get, Module, type DynamicModule } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { HubtelHealthIndicator, HubtelHealthModule } from 'nestjs-hubtel/health';
import { HubtelRedisModule, RedisStore } from 'nestjs-hubtel/redis';
import { CaptureLogger } from './support/capture-logger.js';
import {
  FakeCheckoutApi,
  POS_SALES_ID,
  baseOptions,
  callbackBody,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';
import { checkoutSettled, eventually } from './support/job-settle.js';
import { RedisServer, redisBinary } from './support/redis-server.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly hubtel: HubtelHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.hubtel.store()]);
  }
}

@Module({})
class HealthRoutes {
  static forRoot(): DynamicModule {
    return {
      module: HealthRoutes,
      imports: [TerminusModule, HubtelHealthModule.forRoot()],
      controllers: [HealthController],
    };
  }
}

/**
 * Redis losing its data (a restart without persistence, a flush) while two replicas of a checkout
 * app run on it: it is said, by both, until an operator acknowledges it, and the orders it forgot
 * can still be found from the app's own records.
 */
redisBinary.describe('a Redis store that lost its data, two replicas', () => {
  let server: RedisServer;
  let api: FakeCheckoutApi;
  let admin: Redis;
  let replicas: Array<{ t: CheckoutTestApp }>;
  /** Both replicas' lines: Nest's logger is one per process, so they share it. */
  let logs: CaptureLogger;

  beforeAll(async () => {
    server = await RedisServer.start();
    api = await FakeCheckoutApi.start();
  });
  afterAll(async () => {
    await api.close();
    await server.dispose();
  });
  beforeEach(async () => {
    admin = new Redis(server.url);
    await admin.flushall();
    replicas = [];
    logs = new CaptureLogger();
    for (const adapter of ['express', 'fastify'] as const) {
      const t = await startCheckoutApp(
        adapter,
        // The reconciler's passes are out of the way: these tests ask for checks themselves.
        baseOptions(api, { posSalesId: POS_SALES_ID, reconciliation: { delayMs: 3_600_000 } }),
        {},
        undefined,
        logs,
        [
          // No periodic check: what is seen here is seen on reconnecting, probes and callbacks.
          HubtelRedisModule.forRoot({ url: server.url, lossCheckIntervalMs: 0 }),
          HubtelBullmqModule.forRoot({ url: server.url }),
          HealthRoutes.forRoot(),
        ],
      );
      replicas.push({ t });
    }
  });
  afterEach(async () => {
    for (const { t } of replicas) await t.close();
    admin.disconnect();
    api.server.reset();
    api.transactions.clear();
  });

  async function health(t: CheckoutTestApp): Promise<{ status: number; body: any }> {
    const res = await fetch(`${t.url}/health`);
    return { status: res.status, body: await res.json() };
  }

  const lossLines = () =>
    logs.lines.filter(
      (line) =>
        line.level === 'error' &&
        line.context === 'HubtelRedisStore' &&
        /Redis store LOST ITS DATA/.test(line.message),
    );

  it('after a FLUSHALL, both replicas answer /health 503 naming the loss until one acknowledges it, and each logs it once as an error', async () => {
    const [a, b] = replicas;
    await a!.t.service.createInvoice({ totalAmount: 20, description: 'Bundle', clientReference: 'before-1' });
    expect((await health(a!.t)).status).toBe(200);
    expect((await health(b!.t)).status).toBe(200);

    await admin.flushall();

    for (const { t } of replicas) {
      const answer = await health(t);
      expect(answer.status).toBe(503);
      expect(answer.body.error.hubtel_store).toMatchObject({
        status: 'down',
        stores: ['RedisStore'],
        lost: [{ where: [`127.0.0.1:${server.port}`] }],
      });
      expect(answer.body.error.hubtel_store.message).toMatch(/LOST ITS DATA.*acknowledged/);
      // Asked again: still down.
      expect((await health(t)).status).toBe(503);
    }
    // One error line per replica, however often it was asked.
    expect(lossLines()).toHaveLength(2);
    for (const line of lossLines()) {
      expect(line.message).toContain(`on 127.0.0.1:${server.port}`);
      expect(line.message).toMatch(
        /Lost: checkout invoices and their reconciliation watch list, callback records and dead letters, service-app sessions and orders/,
      );
    }

    const acknowledged = await b!.t.app.get(RedisStore).acknowledgeLoss();
    expect(acknowledged).toMatchObject({ where: [`127.0.0.1:${server.port}`] });
    expect(acknowledged!.acknowledgedAt).toEqual(expect.any(String));
    for (const { t } of replicas) expect((await health(t)).status).toBe(200);
    expect(logs.lines.filter((line) => /was acknowledged at/.test(line.message))).toHaveLength(2);
    // Nothing left to acknowledge.
    await expect(a!.t.app.get(RedisStore).acknowledgeLoss()).resolves.toBeUndefined();
  });

  it('a restart without persistence is noticed by both replicas on reconnecting, with no probe and no request', async () => {
    await server.restart();
    await eventually(
      () => lossLines().length === 2,
      'the loss logged by both replicas on reconnecting',
      10_000,
    );
    const answer = await health(replicas[0]!.t);
    expect(answer.status).toBe(503);
  });

  it("a paid callback for an invoice the store forgot is logged as forgotten, not as UNKNOWN_REFERENCE; reconcile() from the app's own record finds the payment once", async () => {
    const [a, b] = replicas;
    const created = await a!.t.service.createInvoice({
      totalAmount: 25,
      description: 'Bundle',
      clientReference: 'forgot-1',
    });
    // Before the loss, a reference this app never created is what it always was: a forgery.
    await b!.t.post(callbackBody({ ref: 'never-made', checkoutId: 'chk-x', amount: 5 }));
    await b!.t.service.drain();
    expect(b!.t.handlers.events.rejected.map((event) => event.reason)).toEqual(['UNKNOWN_REFERENCE']);
    b!.t.handlers.events.rejected.length = 0;
    logs.lines.length = 0;
    await admin.flushall();

    const answer = await b!.t.post(
      callbackBody({ ref: 'forgot-1', checkoutId: created.checkoutId, amount: 25 }),
    );
    expect(answer.status).toBe(200);
    await b!.t.service.drain();
    const lines = logs.lines.map((line) => line.message);
    expect(lines.filter((line) => /UNKNOWN_REFERENCE/.test(line))).toEqual([]);
    const forgotten = logs.lines.filter((line) => /The store forgot this order/.test(line.message));
    expect(forgotten).toHaveLength(1);
    expect(forgotten[0]!.level).toBe('error');
    expect(forgotten[0]!.message).toContain('"forgot-1"');
    expect(b!.t.handlers.events.rejected.map((event) => event.reason)).toEqual(['FORGOTTEN_REFERENCE']);
    expect(a!.t.handlers.paidCalls + b!.t.handlers.paidCalls).toBe(0);

    // The app's own records (its database) still hold the order: 25.00, default account.
    api.transactions.set('forgot-1', { status: 'Paid', amount: 25 });
    await expect(b!.t.service.reconcile('forgot-1')).rejects.toMatchObject({ code: 'HUBTEL_NOT_FOUND' });
    const found = await b!.t.service.reconcile('forgot-1', { amount: 25 });
    expect(found).toMatchObject({ outcome: 'paid', invoice: { status: 'paid', amountPaid: 25 } });
    await Promise.all(replicas.map(({ t }) => checkoutSettled(t.app)));
    expect(a!.t.handlers.paidCalls + b!.t.handlers.paidCalls).toBe(1);
    // Once again, from the other replica: already paid, nothing runs twice.
    await expect(a!.t.service.reconcile('forgot-1', { amount: 25 })).resolves.toMatchObject({
      outcome: 'already-paid',
    });
    // The genuine callback, re-sent, is a duplicate now: the invoice is known again.
    await a!.t.post(callbackBody({ ref: 'forgot-1', checkoutId: created.checkoutId, amount: 25 }));
    await Promise.all(replicas.map(({ t }) => checkoutSettled(t.app)));
    expect(a!.t.handlers.paidCalls + b!.t.handlers.paidCalls).toBe(1);

    // An amount the app's record does not match is not a payment of that order.
    api.transactions.set('forgot-2', { status: 'Paid', amount: 5 });
    await expect(a!.t.service.reconcile('forgot-2', { amount: 25 })).resolves.toMatchObject({
      outcome: 'rejected',
    });
    await expect(a!.t.service.reconcile('forgot-3', { amount: -1 })).rejects.toMatchObject({
      code: 'HUBTEL_VALIDATION_FAILED',
    });
  });
});
