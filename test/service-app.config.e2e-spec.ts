import { randomUUID } from 'node:crypto';
import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { MemoryStore, type StoreEntry, type StoreWriteOptions } from 'nestjs-hubtel';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { SERVICE_APP_DEFAULT_MESSAGES } from '../libs/service-app/src/service-app.constants.js';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import { FakeHttpServer } from './support/fake-http-server.js';
import { successCallback } from './support/service-app.fixtures.js';
import {
  flowRequest,
  postJson as post,
  startMerchant,
  type Adapter,
  type Merchant,
  onAppChannel,
} from './support/service-app.harness.js';
import { storeFixture } from './support/test-stores.js';

/*
 * How the host app places and protects the two endpoints (module extras and access options),
 * over real HTTP on both adapters.
 */

const SECRET = 'k3y-for-the-platform-only-123';

const initiation = (sessionId = randomUUID()) => flowRequest('initiation', sessionId);

/** A store that fails on demand, as a Redis outage would. */
class FailingStore extends MemoryStore {
  failing = false;

  override get<T>(key: string): Promise<StoreEntry<T> | undefined> {
    return this.unlessFailing(() => super.get<T>(key));
  }

  override setIfAbsent<T>(key: string, value: T, options?: StoreWriteOptions): Promise<boolean> {
    return this.unlessFailing(() => super.setIfAbsent(key, value, options));
  }

  override compareAndSet<T>(
    key: string,
    version: number,
    value: T,
    options?: StoreWriteOptions,
  ): Promise<StoreEntry<T> | undefined> {
    return this.unlessFailing(() => super.compareAndSet(key, version, value, options));
  }

  override set<T>(key: string, value: T, options?: StoreWriteOptions): Promise<StoreEntry<T>> {
    return this.unlessFailing(() => super.set(key, value, options));
  }

  override delete(key: string): Promise<boolean> {
    return this.unlessFailing(() => super.delete(key));
  }

  private async unlessFailing<R>(call: () => Promise<R>): Promise<R> {
    if (this.failing) throw new Error('store down: connection refused');
    return call();
  }
}

/** A host guard, as a user would add with `routes.guards`. */
@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return req.headers['x-host-guard'] === 'open';
  }
}

describe.each<Adapter>(['express', 'fastify'])('ServiceAppModule routes and access over %s', (adapter) => {
  let sandbox: HubtelSandbox;
  const redis = storeFixture('redis');
  const started: Merchant[] = [];
  const start = async (
    ...args: Parameters<typeof startMerchant> extends [Adapter, ...infer R] ? R : never
  ) => {
    const merchant = await startMerchant(adapter, ...args);
    started.push(merchant);
    return merchant;
  };

  beforeAll(async () => {
    sandbox = onAppChannel(await HubtelSandbox.start());
  });

  afterAll(async () => {
    for (const merchant of started) await merchant.close();
    await sandbox.stop();
  });

  it('serves the contract paths when configured with forRootAsync (the whole exchange)', async () => {
    const m = await start(
      {
        callbackUrl: sandbox.baseUrls().fulfillmentCallback,
        callbackRetry: { baseDelayMs: 5, maxDelayMs: 10 },
      },
      {},
      { async: true },
    );
    const session = sandbox.serviceApp(m.url);
    expect(await session.start()).toMatchObject({ Type: 'Response', DataType: 'input', FieldType: 'phone' });
    expect(await session.reply('0241234567')).toMatchObject({ DataType: 'select', FieldName: '' });
    expect(await session.choose('1gb')).toMatchObject({ Type: 'AddToCart', Data: [] });
    const { order } = await session.pay();
    expect((await session.waitForCallback()).body).toEqual(successCallback(session.sessionId, order.orderId));
  });

  it('mounts under a custom prefix and paths, behind a path secret (wrong or missing secret: 404, nothing processed)', async () => {
    const m = await start(
      { callbackUrl: sandbox.baseUrls().fulfillmentCallback, access: { pathSecret: SECRET } },
      {
        routes: { path: 'hubtel/programmable', serviceFlowPath: 'interaction', fulfillmentPath: '/fulfil/' },
      },
    );
    const base = `${m.url}/hubtel/programmable`;
    const id = randomUUID();
    expect((await post(`${base}/interaction`, initiation(id))).status).toBe(404);
    expect((await post(`${base}/interaction/not-the-secret-at-all`, initiation(id))).body).toMatchObject({
      statusCode: 404,
      code: 'HUBTEL_NOT_FOUND',
    });
    expect((await post(`${m.url}/api/service-flow`, initiation(id))).status).toBe(404);
    expect(await m.flows.getSession(id)).toBeUndefined();

    const ok = await post(`${base}/interaction/${SECRET}`, initiation(id));
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ SessionId: id, Type: 'Response', DataType: 'input' });

    // The whole exchange through the sandbox driver, on the registered (secret) URLs.
    const session = sandbox.serviceApp(m.url, {
      serviceFlowPath: `/hubtel/programmable/interaction/${SECRET}`,
      fulfillmentPath: `/hubtel/programmable/fulfil/${SECRET}`,
    });
    await session.start();
    await session.reply('0241234567');
    await session.choose('1gb');
    const { order } = await session.pay();
    expect((await session.waitForCallback()).body).toMatchObject({
      OrderId: order.orderId,
      ServiceStatus: 'success',
    });
    // A fulfillment request without the secret never reaches the handlers.
    expect(
      (await post(`${base}/fulfil`, { OrderId: randomUUID(), SessionId: session.sessionId })).status,
    ).toBe(404);
  });

  it('refuses sources outside the IP allow-list with a 403, and lets allowed ones through', async () => {
    const blocked = await start({
      access: { allowedIps: ['52.50.116.54', '18.202.122.131', '52.31.15.68'] },
    });
    const refused = await post(`${blocked.url}/api/service-flow`, initiation());
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      statusCode: 403,
      error: 'Forbidden',
      code: 'HUBTEL_SOURCE_NOT_ALLOWED',
    });
    const fulfillment = await post(`${blocked.url}/api/fulfillment`, { OrderId: 'o', SessionId: 's' });
    expect(fulfillment.status).toBe(403);
    expect(blocked.fulfiller.seen).toHaveLength(0);

    // Behind a trusted proxy, the forwarded address is the one checked.
    const proxied = await start({ access: { allowedIps: ['52.50.116.54'], trustedProxies: ['127.0.0.1'] } });
    expect(
      (await post(`${proxied.url}/api/service-flow`, initiation(), { 'X-Forwarded-For': '52.50.116.54' }))
        .status,
    ).toBe(200);
    expect(
      (await post(`${proxied.url}/api/service-flow`, initiation(), { 'X-Forwarded-For': '6.6.6.6' })).status,
    ).toBe(403);
  });

  it('applies host guards and decorators given in routes', async () => {
    const m = await start(
      {},
      { routes: { guards: [HeaderGuard], decorators: [SetMetadata('isPublic', true)] } },
    );
    expect((await post(`${m.url}/api/service-flow`, initiation())).status).toBe(403);
    expect((await post(`${m.url}/api/service-flow`, initiation(), { 'X-Host-Guard': 'open' })).status).toBe(
      200,
    );
    expect((await post(`${m.url}/api/fulfillment`, { OrderId: 'o', SessionId: 's' })).status).toBe(403);
    // The endpoints' controller carries the host's class decorators (e.g. `Public()`, `SkipThrottle()`).
    const decorated = m.app
      .get(DiscoveryService)
      .getControllers()
      .filter((wrapper) => wrapper.metatype && Reflect.getMetadata('isPublic', wrapper.metatype) === true)
      .map((wrapper) => wrapper.name);
    expect(decorated).toEqual(['ServiceAppController']);
  });

  it('mounts no access guard when no access option is set; a path token is still answered 404 and nothing is processed', async () => {
    const controller = ServiceAppModule.forRoot({ access: { trustedProxies: ['10.0.0.1'] } })
      .controllers![0]!;
    // Nest's guard path costs per request; with nothing to check there is no guard at all.
    expect(Reflect.getMetadata('__guards__', controller)).toBeUndefined();
    expect(Reflect.getMetadata('__guards__', controller.prototype.serviceFlow)).toBeUndefined();
    expect(Reflect.getMetadata('__guards__', controller.prototype.fulfill)).toBeUndefined();

    const m = await start({ callbackUrl: sandbox.baseUrls().fulfillmentCallback });
    const id = randomUUID();
    const tokened = await post(`${m.url}/api/service-flow/some-token-value-123`, initiation(id));
    expect(tokened.status).toBe(404);
    expect(tokened.body).toMatchObject({ statusCode: 404, code: 'HUBTEL_NOT_FOUND' });
    expect(await m.flows.getSession(id)).toBeUndefined();

    // A real cart, ordered through a tokened path: refused before anything is recorded or run.
    const session = sandbox.serviceApp(m.url);
    await session.start();
    await session.reply('0241234567');
    await session.choose('1gb');
    const order = { OrderId: randomUUID(), SessionId: session.sessionId, ExtraData: {}, OrderInfo: null };
    const refused = await post(`${m.url}/api/fulfillment/some-token-value-123`, order);
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ code: 'HUBTEL_NOT_FOUND' });
    expect(await m.fulfillment.getOrder(order.OrderId)).toBeUndefined();
    expect(await m.fulfillment.getCart(session.sessionId)).not.toHaveProperty('orderId');
    expect(m.fulfiller.seen).toHaveLength(0);

    expect((await post(`${m.url}/api/service-flow`, initiation())).status).toBe(200);
    const accepted = await post(`${m.url}/api/fulfillment`, order);
    expect(accepted.body).toMatchObject({ OrderId: order.OrderId, Status: 'received' });
    expect((await session.waitForCallback()).body).toEqual(successCallback(session.sessionId, order.OrderId));
  });

  it('keeps the access guard, after the host guards, when access options are set or resolved asynchronously', async () => {
    const secured = ServiceAppModule.forRoot({
      access: { allowedIps: ['52.50.116.54'] },
      routes: { guards: [HeaderGuard] },
    }).controllers![0]!;
    // Issue 24: the access check is each account's, made in the handlers after routing
    // (routeInbound), so the host guards are the only guards mounted, and they run first.
    const guards = Reflect.getMetadata('__guards__', secured) as unknown[];
    expect(guards).toEqual([HeaderGuard]);
    const async = ServiceAppModule.forRootAsync({ useFactory: () => ({}) }).controllers![0]!;
    expect(Reflect.getMetadata('__guards__', async)).toBeUndefined();

    // Over HTTP: the host guard answers first (Nest's plain 403), then the allow-list (its own 403).
    const blocked = await start(
      { access: { allowedIps: ['52.50.116.54'] } },
      { routes: { guards: [HeaderGuard] } },
    );
    const byHost = await post(`${blocked.url}/api/service-flow`, initiation());
    expect(byHost.status).toBe(403);
    expect(byHost.body.code).toBeUndefined();
    const byList = await post(
      `${blocked.url}/api/fulfillment`,
      { OrderId: 'o', SessionId: 's' },
      {
        'X-Host-Guard': 'open',
      },
    );
    expect(byList.status).toBe(403);
    expect(byList.body).toMatchObject({ code: 'HUBTEL_SOURCE_NOT_ALLOWED' });

    // forRootAsync with a path secret: enforced.
    const m = await start({ access: { pathSecret: SECRET } }, {}, { async: true });
    const id = randomUUID();
    const without = await post(`${m.url}/api/service-flow`, initiation(id));
    expect(without.status).toBe(404);
    expect(without.body).toMatchObject({ code: 'HUBTEL_NOT_FOUND' });
    expect(await m.flows.getSession(id)).toBeUndefined();
    expect((await post(`${m.url}/api/service-flow/${SECRET}`, initiation(id))).status).toBe(200);

    // forRootAsync without access: guarded, and the guard refuses a path token.
    const open = await start({}, {}, { async: true });
    expect((await post(`${open.url}/api/service-flow/anything-at-all`, initiation())).status).toBe(404);
    expect((await post(`${open.url}/api/service-flow`, initiation())).status).toBe(200);
  });

  it('mounts nothing with routes.disabled, the services still work for a hand-made endpoint', async () => {
    const m = await start({}, { routes: { disabled: true } });
    expect((await post(`${m.url}/api/service-flow`, initiation())).status).toBe(404);
    const id = randomUUID();
    expect(await m.flows.handle(initiation(id))).toMatchObject({
      SessionId: id,
      Type: 'Response',
      FieldName: 'destination',
    });
  });

  // A crash after the 200 leaves the record and its queued run: on Redis both outlive the process
  // (the memory store's jobs go with it: one process, nothing to pick up).
  redis.describe('from a persistent store (Redis, jobs on BullMQ)', () => {
    afterAll(() => redis.dispose());

    it('picks up, at startup, a fulfillment recorded but never run (a crash after the 200), from a persistent store', async () => {
      const store = await redis.create();
      const options = {
        store,
        callbackUrl: sandbox.baseUrls().fulfillmentCallback,
        callbackRetry: { baseDelayMs: 5, maxDelayMs: 10 },
      };
      // The instance that answers the platform: it records and queues the order, and dies before
      // running it (it runs no jobs: `work: false`, so nothing here can run it by chance).
      const crashed = await startMerchant(
        adapter,
        options,
        {},
        {
          imports: [HubtelBullmqModule.forRoot({ url: redis.redisUrl!, work: false })],
        },
      );
      let orderId: string;
      let sessionId: string;
      try {
        const session = sandbox.serviceApp(crashed.url, { serviceCode: '711' });
        sessionId = session.sessionId;
        await session.start();
        await session.reply('5');
        const { order, deliveries } = await session.pay();
        orderId = order.orderId;
        expect(deliveries[0]).toMatchObject({ statusCode: 200 });
        expect(JSON.parse(deliveries[0]!.responseBody!)).toMatchObject({
          OrderId: orderId,
          Status: 'received',
        });
      } finally {
        await crashed.close();
      }
      expect(crashed.fulfiller.calls.get(orderId)).toBeUndefined();
      expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toEqual([]);

      // The next instance to start takes the queued run over.
      const m = await startMerchant(adapter, options, {}, { imports: redis.jobRunnerImports() });
      try {
        const callback = await sandbox.waitForFulfillmentCallback((c) => c.orderId === orderId);
        expect(callback.body).toEqual(successCallback(sessionId, orderId));
        expect(m.fulfiller.seen711.map((e) => e.orderId)).toEqual([orderId]);
        expect(m.fulfiller.calls.get(orderId)).toBe(1);
      } finally {
        await m.close();
      }
    });
  });

  it('with requireCart: false, fulfils an order whose cart it never saw (catch-all handlers, no item)', async () => {
    const m = await start({
      callbackUrl: sandbox.baseUrls().fulfillmentCallback,
      requireCart: false,
      callbackRetry: { baseDelayMs: 5, maxDelayMs: 10 },
    });
    const orderId = randomUUID();
    const sessionId = randomUUID();
    const res = await post(`${m.url}/api/fulfillment`, {
      OrderId: orderId,
      SessionId: sessionId,
      ExtraData: { channel: 'web' },
      OrderInfo: { Status: 'Paid' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ OrderId: orderId, SessionId: sessionId, Status: 'received' });
    const callback = await sandbox.waitForFulfillmentCallback((c) => c.orderId === orderId);
    expect(callback.body).toEqual(successCallback(sessionId, orderId));
    expect(m.fulfiller.seen.find((e) => e.orderId === orderId)).toMatchObject({
      serviceCode: null,
      item: null,
      mobile: null,
      serviceData: {},
      extraData: { channel: 'web' },
      orderInfo: { Status: 'Paid' },
    });
  });

  it('answers a 503 (not a 500) when the store fails, so the platform sends the order again; the session ends politely', async () => {
    const store = new FailingStore({ sweepIntervalMs: 0 });
    const m = await start({
      store,
      callbackUrl: sandbox.baseUrls().fulfillmentCallback,
      callbackRetry: { baseDelayMs: 5, maxDelayMs: 10 },
    });
    const session = sandbox.serviceApp(m.url);
    await session.start();
    await session.reply('0241234567');
    await session.choose('1gb');
    const orderId = randomUUID();

    store.failing = true;
    const down = await post(`${m.url}/api/fulfillment`, { OrderId: orderId, SessionId: session.sessionId });
    expect(down).toMatchObject({
      status: 503,
      body: {
        statusCode: 503,
        error: 'Service Unavailable',
        code: 'HUBTEL_UNAVAILABLE',
        message: 'The fulfillment request could not be recorded; send it again later',
      },
    });
    const flow = await post(`${m.url}/api/service-flow`, initiation());
    expect(flow).toMatchObject({
      status: 200,
      body: { Type: 'release', Message: SERVICE_APP_DEFAULT_MESSAGES.error, DataType: 'display' },
    });
    expect(m.fulfiller.seen).toHaveLength(0);
    expect(m.logger.lines.some((l) => l.includes('store down'))).toBe(true);

    // The store is back: the platform's next attempt goes through, once.
    store.failing = false;
    const { order } = await session.pay({ orderId });
    expect((await session.waitForCallback()).body).toMatchObject({
      OrderId: order.orderId,
      ServiceStatus: 'success',
    });
    expect(m.fulfiller.calls.get(orderId)).toBe(1);
    store.close();
  });

  it('posts the callback with the contract headers and Basic auth when given, credentials never logged', async () => {
    const platform = await FakeHttpServer.start();
    try {
      platform.route('POST', '/callback', () => ({ status: 200 }));
      platform.enqueue('POST', '/callback', { status: 503, body: { message: 'busy' } });
      const credentials = { clientId: 'cb-client-id-42', clientSecret: 'cb-secret-value-do-not-log' };
      const m = await start({
        callbackUrl: `${platform.url}/`,
        callbackCredentials: credentials,
        requireCart: false,
        callbackRetry: { baseDelayMs: 5, maxDelayMs: 10 },
      });
      const orderId = randomUUID();
      const sessionId = randomUUID();
      expect(
        (await post(`${m.url}/api/fulfillment`, { OrderId: orderId, SessionId: sessionId })).status,
      ).toBe(200);
      await m.fulfiller.until(() => m.fulfiller.sent.some((e) => e.orderId === orderId));
      const calls = platform.requestsTo('POST', '/callback');
      expect(calls).toHaveLength(2); // the 503, then the one accepted
      const basic = Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`).toString('base64');
      for (const call of calls) {
        expect(call.headers['content-type']).toContain('application/json');
        expect(call.headers.accept).toContain('application/json');
        expect(call.headers.authorization).toBe(`Basic ${basic}`);
        expect(call.body).toEqual(successCallback(sessionId, orderId));
      }
      const logs = m.logger.lines.join('\n');
      expect(logs).toContain('503'); // the refused attempt was logged...
      expect(logs).not.toContain(credentials.clientSecret); // ...without the credentials
      expect(logs).not.toContain(basic);
    } finally {
      await platform.close();
    }
  });
});
