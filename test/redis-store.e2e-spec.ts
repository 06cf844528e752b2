import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { HUBTEL_STORE, type HubtelStore } from 'nestjs-hubtel';
import { CHECKOUT_STORE } from '../libs/checkout/src/checkout.constants.js';
import { CheckoutModule } from 'nestjs-hubtel/checkout';
import { SERVICE_APP_STORE } from '../libs/service-app/src/service-app.constants.js';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { HubtelRedisModule, RedisStore } from 'nestjs-hubtel/redis';
import {
  ADAPTERS,
  FakeCheckoutApi,
  baseOptions,
  callbackBody,
  settle,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';
import { RedisServer, redisBinary } from './support/redis-server.js';
import { checkoutSettled, untilRunnerUp } from './support/job-settle.js';
import { CHECKOUT_PIPELINE } from '../libs/checkout/src/checkout.constants.js';
import { describeEachStore } from './support/test-stores.js';

const UNAVAILABLE = {
  statusCode: 503,
  error: 'Service Unavailable',
  code: 'HUBTEL_UNAVAILABLE',
  message: 'The checkout callback could not be recorded; send it again later',
};

/** Polls until Redis answers the store again (it reconnects on its own, with backoff). */
async function untilReachable(store: HubtelStore): Promise<void> {
  for (;;) {
    try {
      await store.get('probe');
      return;
    } catch {
      await settle(20);
    }
  }
}

/** Duplicate callbacks: however many copies arrive at once, one outcome, on every store. */
describeEachStore(ADAPTERS, 'checkout callback duplicates', (adapter, stores) => {
  let api: FakeCheckoutApi;
  let t: CheckoutTestApp;
  beforeAll(async () => {
    api = await FakeCheckoutApi.start();
    const store = await stores.create();
    t = await startCheckoutApp(
      adapter,
      baseOptions(api, { store }),
      {},
      undefined,
      false,
      stores.jobRunnerImports(),
    );
  });
  afterAll(async () => {
    await t.close();
    await api.close();
    await stores.dispose();
  });

  it('runs the paid handler once for 10 concurrent copies of a callback, and for a later copy', async () => {
    const created = await t.service.createInvoice({
      totalAmount: 12,
      description: 'Bundle',
      clientReference: 'dup-10',
    });
    const body = callbackBody({ ref: 'dup-10', checkoutId: created.checkoutId, amount: 12 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => t.post(body)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    await checkoutSettled(t.app);
    expect((await t.post(body)).status).toBe(200);
    await checkoutSettled(t.app);
    await settle();
    expect(t.handlers.paidCalls).toBe(1);
    expect(t.handlers.events.paid.map((e) => e.clientReference)).toEqual(['dup-10']);
    expect(await t.service.getInvoice('dup-10')).toMatchObject({ status: 'paid' });
  });

  it('emits failed once for 10 concurrent copies of a failed-payment callback', async () => {
    const created = await t.service.createInvoice({
      totalAmount: 12,
      description: 'Bundle',
      clientReference: 'fail-10',
    });
    const body = callbackBody({ ref: 'fail-10', checkoutId: created.checkoutId, status: 'Failed' });
    const answers = await Promise.all(Array.from({ length: 10 }, () => t.post(body)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    await checkoutSettled(t.app);
    await settle();
    expect(t.handlers.events.failed.map((e) => e.clientReference)).toEqual(['fail-10']);
  });
});

redisBinary.describe('checkout on the Redis store', () => {
  let server: RedisServer;
  let api: FakeCheckoutApi;
  let admin: Redis;
  beforeAll(async () => {
    server = await RedisServer.start();
    api = await FakeCheckoutApi.start();
    admin = new Redis(server.url, { lazyConnect: true });
    await admin.connect();
  });
  afterAll(async () => {
    admin.disconnect();
    await api.close();
    await server.dispose();
  });
  beforeEach(() => admin.flushdb());
  /** A Redis store's jobs run on BullMQ, on the same Redis. */
  const bullmq = () => [HubtelBullmqModule.forRoot({ url: server.url })];

  it('two instances (Express and Fastify) on one Redis: 10 copies of a callback spread over both, one payment', async () => {
    const [one, two] = [new RedisStore({ url: server.url }), new RedisStore({ url: server.url })];
    await Promise.all([one.connect(), two.connect()]);
    const a = await startCheckoutApp(
      'express',
      baseOptions(api, { store: one }),
      {},
      undefined,
      false,
      bullmq(),
    );
    const b = await startCheckoutApp(
      'fastify',
      baseOptions(api, { store: two }),
      {},
      undefined,
      false,
      bullmq(),
    );
    try {
      const created = await a.service.createInvoice({
        totalAmount: 7,
        description: 'Bundle',
        clientReference: 'replicas',
      });
      expect(await b.service.getInvoice('replicas')).toMatchObject({ status: 'pending' }); // shared
      const body = callbackBody({ ref: 'replicas', checkoutId: created.checkoutId, amount: 7 });
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).post(body)));
      expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
      await Promise.all([checkoutSettled(a.app), checkoutSettled(b.app)]);
      await settle();
      expect(a.handlers.paidCalls + b.handlers.paidCalls).toBe(1);
      expect([...a.handlers.events.paid, ...b.handlers.events.paid]).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
      await one.close();
      await two.close();
    }
  });

  describe.each(ADAPTERS)('while Redis is down (%s)', (adapter) => {
    let store: RedisStore;
    let t: CheckoutTestApp;
    beforeEach(async () => {
      // A stall times commands out within a second; a loaded machine's late event loop alone does
      // not (at 300 ms, a read after the restart timed out with three Jest workers on two cores).
      store = new RedisStore({ url: server.url, commandTimeoutMs: 1_000 });
      await store.connect();
      t = await startCheckoutApp(adapter, baseOptions(api, { store }), {}, undefined, false, bullmq());
    });
    afterEach(async () => {
      server.resume();
      if (!server.running) await server.restart();
      await t.close();
      await store.close();
      admin.disconnect();
      admin = new Redis(server.url, { lazyConnect: true });
      await admin.connect();
    });

    // The response arrives while Redis is still down: a request waiting for Redis to come back
    // (an offline queue) would never answer, and the test would time out.
    it('answers a callback 503 at once while Redis is stopped, emits nothing, and handles it once Redis is back', async () => {
      const created = await t.service.createInvoice({
        totalAmount: 13,
        description: 'Bundle',
        clientReference: 'down',
      });
      const body = callbackBody({ ref: 'down', checkoutId: created.checkoutId, amount: 13 });
      await admin.save(); // Redis with persistence: what was written survives the restart
      await server.stop();
      const refused = await t.post(body);
      expect(refused.status).toBe(503);
      expect(refused.body).toStrictEqual(UNAVAILABLE);
      // Nothing was recorded nor queued (BullMQ's Redis is the one down): nothing runs here.
      await t.service.drain();
      await settle();
      expect(t.handlers.paidCalls).toBe(0);

      await server.restart();
      await untilReachable(store);
      await untilRunnerUp(t.app.get(CHECKOUT_PIPELINE));
      expect(await t.service.getInvoice('down')).toMatchObject({ status: 'pending' });
      expect((await t.post(body)).status).toBe(200);
      await t.handlers.waitFor('paid');
      await checkoutSettled(t.app);
      await settle();
      expect(t.handlers.paidCalls).toBe(1);
      expect(await t.service.getInvoice('down')).toMatchObject({ status: 'paid' });
    });

    it('answers 503 while Redis is stalled (commands time out), and handles the callback once it answers again', async () => {
      const created = await t.service.createInvoice({
        totalAmount: 14,
        description: 'Bundle',
        clientReference: 'stall',
      });
      const body = callbackBody({ ref: 'stall', checkoutId: created.checkoutId, amount: 14 });
      server.pause();
      const refused = await t.post(body);
      expect(refused.status).toBe(503);
      expect(refused.body).toStrictEqual(UNAVAILABLE);
      // Nothing was recorded nor queued (BullMQ's Redis is the one down): nothing runs here.
      await t.service.drain();
      expect(t.handlers.paidCalls).toBe(0);

      server.resume();
      await untilReachable(store);
      await untilRunnerUp(t.app.get(CHECKOUT_PIPELINE));
      expect((await t.post(body)).status).toBe(200);
      await t.handlers.waitFor('paid');
      await checkoutSettled(t.app);
      await settle();
      expect(t.handlers.paidCalls).toBe(1);
    });
  });

  it('HubtelRedisModule.forRoot: the store of every module that sets none, under its key prefix; closed with the app', async () => {
    const t = await startCheckoutApp('express', baseOptions(api), {}, undefined, false, [
      HubtelRedisModule.forRoot({ url: server.url, keyPrefix: 'shop:' }),
      ...bullmq(),
    ]);
    const store = t.app.get<RedisStore>(HUBTEL_STORE);
    try {
      expect(store).toBeInstanceOf(RedisStore);
      expect(t.app.get(CHECKOUT_STORE)).toBe(store);
      await t.service.createInvoice({ totalAmount: 3, description: 'Bundle', clientReference: 'global' });
      expect(await admin.keys('shop:hubtel:checkout:invoice:*')).toEqual([
        'shop:hubtel:checkout:invoice:global',
      ]);
    } finally {
      await t.close();
    }
    expect(store.client.status).toBe('end');
  });

  it('HubtelRedisModule.forRootAsync, with a module that names the store by token and one given its own', async () => {
    const own = new RedisStore({ url: server.url, keyPrefix: 'own:' });
    await own.connect();
    const redis = HubtelRedisModule.forRootAsync({
      useFactory: () => ({ url: server.url, keyPrefix: 'app:' }),
    });
    const byToken = await startCheckoutApp(
      'fastify',
      baseOptions(api, { store: HUBTEL_STORE }),
      {},
      undefined,
      false,
      [redis, ...bullmq()],
    );
    const byInstance = await startCheckoutApp(
      'express',
      baseOptions(api, { store: own }),
      {},
      undefined,
      false,
      [
        HubtelRedisModule.forRootAsync({ useFactory: () => ({ url: server.url, keyPrefix: 'app:' }) }),
        ...bullmq(),
      ],
    );
    try {
      expect(byToken.app.get(CHECKOUT_STORE)).toBe(byToken.app.get(HUBTEL_STORE));
      expect(byInstance.app.get(CHECKOUT_STORE)).toBe(own);
      await byToken.service.createInvoice({
        totalAmount: 3,
        description: 'Bundle',
        clientReference: 'token',
      });
      await byInstance.service.createInvoice({
        totalAmount: 3,
        description: 'Bundle',
        clientReference: 'mine',
      });
      // Every key is a store's, under its prefix, or BullMQ's (the job runner's, under its own).
      const keys = await admin.keys('*');
      expect(keys.filter((key) => !key.startsWith('{hubtel}:bull:')).sort()).toEqual([
        'app:hubtel:checkout:invoice:token',
        'app:hubtel:store:marker', // each store's loss marker, under its own prefix
        'own:hubtel:checkout:invoice:mine',
        'own:hubtel:store:marker',
      ]);
    } finally {
      await byToken.close();
      await byInstance.close();
    }
    // Not the module's to close.
    expect(own.client.status).toBe('ready');
    await own.close();
  });

  it('one HubtelRedisModule for CheckoutModule and ServiceAppModule: both on the same store, by default or by token', async () => {
    for (const serviceAppStore of [undefined, HUBTEL_STORE]) {
      const moduleRef = await Test.createTestingModule({
        imports: [
          EventEmitterModule.forRoot(),
          HubtelRedisModule.forRootAsync({ useFactory: () => ({ url: server.url }) }),
          ...bullmq(),
          CheckoutModule.forRoot(baseOptions(api)),
          ServiceAppModule.forRoot({ routes: { disabled: true }, store: serviceAppStore }),
        ],
      }).compile();
      const app = await moduleRef.createNestApplication({ logger: false }).init();
      try {
        const store = app.get(HUBTEL_STORE);
        expect(store).toBeInstanceOf(RedisStore);
        expect(app.get(CHECKOUT_STORE)).toBe(store);
        expect(app.get(SERVICE_APP_STORE)).toBe(store);
      } finally {
        await app.close();
      }
    }
  });

  it('refuses to start when Redis cannot be reached', async () => {
    await expect(
      startCheckoutApp('express', baseOptions(api), {}, undefined, false, [
        HubtelRedisModule.forRoot({ url: 'redis://127.0.0.1:1', options: { retryStrategy: () => null } }),
      ]),
    ).rejects.toMatchObject({ code: 'HUBTEL_STORE_UNAVAILABLE' });
  });
});
