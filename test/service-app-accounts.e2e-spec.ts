/**
 * The service app with several Hubtel accounts (issue 24), over real HTTP through real Nest apps
 * against one sandbox serving the accounts: one controller routes `/api/service-flow[/<account>]`
 * and `/api/fulfillment[/<account>]`; each session sees its account (one app, one menu per
 * account); a named account's order is verified with its own keys on its own POS Sales ID and
 * called back with its own credentials; a session or order reached on another account's path is
 * refused 409 HUBTEL_WRONG_ACCOUNT, nothing emitted, and counted; registerAccountAsync, the
 * resolver, per-account path secrets and bad options.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Global, Injectable, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import {
  HUBTEL_TELEMETRY,
  HubtelConfigError,
  type HubtelInboundSignal,
  type HubtelSignal,
} from 'nestjs-hubtel';
import {
  FlowContext,
  FlowStep,
  FulfillmentAccount,
  FulfillmentService,
  InjectFulfillment,
  OnFulfillment,
  OnFulfillmentCallbackSent,
  OnFulfillmentRejected,
  ServiceAppModule,
  ServiceFlow,
  ServiceFlowService,
  type FulfillmentCallbackSentEvent,
  type FulfillmentRejectedEvent,
  type FulfillmentRequestedEvent,
  type ServiceAppAccountOverrides,
  type ServiceAppModuleOptions,
} from 'nestjs-hubtel/service-app';
import { createTestSandbox, runSimulateCli, type TestSandbox } from 'nestjs-hubtel/testing';
import { parseSimulateCliArgs } from '../libs/testing/src/cli/simulate.cli.js';
import { type InboundPipeline } from '#internal';
import { SERVICE_APP_PIPELINE } from '../libs/service-app/src/service-app.constants.js';
import { CaptureLogger } from './support/capture-logger.js';
import { APP_OPERATOR, flowRequest, postJson } from './support/service-app.harness.js';

const MENUS: Record<string, Array<{ Display: string; Value: string; Amount: number }>> = {
  default: [{ Display: 'Main 1GB', Value: 'main-1gb', Amount: 5 }],
  north: [{ Display: 'North 2GB', Value: 'north-2gb', Amount: 7 }],
  south: [{ Display: 'South 3GB', Value: 'south-3gb', Amount: 9 }],
  west: [{ Display: 'West 4GB', Value: 'west-4gb', Amount: 11 }],
};

/** One app, one menu per account: the step reads `ctx.account`. */
@ServiceFlow()
class ShopFlow {
  @FlowStep({ start: true })
  menu(ctx: FlowContext) {
    return ctx.select({ message: `${ctx.account} shop`, name: 'item', options: MENUS[ctx.account] ?? [] });
  }

  @FlowStep()
  cart(ctx: FlowContext) {
    const option = ctx.selected()!;
    return ctx.addToCart({
      message: `Buy ${option.Display}`,
      item: { ItemName: option.Display, Qty: 1, Price: option.Amount, ServiceData: { shop: ctx.account } },
    });
  }
}

@Injectable()
class Orders {
  readonly all: FulfillmentRequestedEvent[] = [];
  readonly north: FulfillmentRequestedEvent[] = [];
  readonly rejected: FulfillmentRejectedEvent[] = [];
  readonly sent: FulfillmentCallbackSentEvent[] = [];

  @OnFulfillment()
  deliver(order: FulfillmentRequestedEvent) {
    this.all.push(order);
    return { deliveredFor: order.account };
  }

  @OnFulfillment(undefined, { account: 'north', id: 'north-only' })
  northOnly(order: FulfillmentRequestedEvent) {
    this.north.push(order);
  }

  @OnFulfillmentRejected()
  onRejected(event: FulfillmentRejectedEvent) {
    this.rejected.push(event);
  }

  @OnFulfillmentCallbackSent()
  onSent(event: FulfillmentCallbackSentEvent) {
    this.sent.push(event);
  }
}

/** Injects north's orders by name, and the default account's service. */
@Injectable()
class NorthDesk {
  constructor(
    @InjectFulfillment('north') readonly north: FulfillmentAccount,
    @InjectFulfillment() readonly main: FulfillmentService,
  ) {}
}

const signals: HubtelSignal[] = [];

@Global()
@Module({
  providers: [{ provide: HUBTEL_TELEMETRY, useValue: { record: (s: HubtelSignal) => signals.push(s) } }],
  exports: [HUBTEL_TELEMETRY],
})
class TelemetryModule {}

/** Where `registerAccountAsync` reads an account's options from (a ConfigService, a vault...). */
const VAULT = 'VAULT';

@Module({})
class VaultModule {
  static holding(accounts: Record<string, ServiceAppAccountOverrides>): DynamicModule {
    return { module: VaultModule, providers: [{ provide: VAULT, useValue: accounts }], exports: [VAULT] };
  }
}

interface Shop {
  app: INestApplication;
  url: string;
  orders: Orders;
  fulfillment: FulfillmentService;
  flows: ServiceFlowService;
}

/** Waits (polling) until `test()` holds. */
async function until(test: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('until: timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('ServiceAppModule with several accounts, against a sandbox serving them', () => {
  let hubtel: TestSandbox;
  const shops: Shop[] = [];
  const northCallback = { clientId: 'north-callback', clientSecret: 'north-callback-secret' };
  const northSecret = 'north-path-secret-0123456789';

  /** Quick retries: nothing here waits for them. */
  const quick = {
    callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 6_000 },
    fulfillmentRetry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 },
    verification: { recheckForMs: 50, recheckDelay: { baseDelayMs: 5, maxDelayMs: 20 } },
  };

  /** An account's own options (credentials, POS Sales ID) as registerAccount takes them. */
  function accountOptions(name: string): ServiceAppAccountOverrides {
    const { statusCheck, callbackCredentials } = hubtel.forAccount(name).serviceAppOptions();
    return { statusCheck: statusCheck!, ...(callbackCredentials ? { callbackCredentials } : {}) };
  }

  async function startShop(
    imports: DynamicModule[],
    defaults: Partial<ServiceAppModuleOptions> = {},
    providers: Array<new (...args: never[]) => unknown> = [],
    logger: CaptureLogger | false = false,
  ): Promise<Shop> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        TelemetryModule,
        ServiceAppModule.forRoot({ ...hubtel.serviceAppOptions(), ...quick, ...defaults }),
        ...imports,
      ],
      providers: [ShopFlow, Orders, ...providers],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    const shop = {
      app,
      url: `http://127.0.0.1:${port}`,
      orders: app.get(Orders),
      fulfillment: app.get(FulfillmentService),
      flows: app.get(ServiceFlowService),
    };
    shops.push(shop);
    return shop;
  }

  /** The driver on one account's endpoints (the path with the account segment). */
  function driver(shop: Shop, account: string, sessionId?: string) {
    const segment = account === 'default' ? '' : `/${account}`;
    return hubtel.forAccount(account).serviceApp(shop.url, {
      operator: APP_OPERATOR,
      serviceFlowPath: `/api/service-flow${segment}`,
      fulfillmentPath: `/api/fulfillment${segment}`,
      ...(sessionId ? { sessionId } : {}),
    });
  }

  const drain = (shop: Shop) => shop.app.get<InboundPipeline>(SERVICE_APP_PIPELINE).drain();

  let shop: Shop;

  beforeAll(async () => {
    hubtel = await createTestSandbox({
      accounts: [
        { name: 'north', credentials: { callback: northCallback } },
        { name: 'south' },
        { name: 'west' },
      ],
    });
    shop = await startShop(
      [
        ServiceAppModule.registerAccount({ name: 'north', ...accountOptions('north'), isGlobal: true }),
        ServiceAppModule.registerAccountAsync({
          name: 'south',
          imports: [VaultModule.holding({ south: accountOptions('south') })],
          inject: [VAULT],
          useFactory: (vault: Record<string, ServiceAppAccountOverrides>) => vault.south!,
        }),
      ],
      {},
      [NorthDesk],
    );
  });
  afterEach(() => {
    hubtel.reset();
    signals.length = 0;
    for (const s of shops)
      for (const list of Object.values(s.orders)) if (Array.isArray(list)) list.length = 0;
  });
  afterAll(async () => {
    for (const s of shops) await s.app.close();
    await hubtel.stop();
  });

  it('serves each account its own menu on its own path; each session records its account', async () => {
    const main = driver(shop, 'default');
    expect(await main.start()).toMatchObject({ Message: 'default shop', Data: [{ Value: 'main-1gb' }] });
    const north = driver(shop, 'north');
    expect(await north.start()).toMatchObject({ Message: 'north shop', Data: [{ Value: 'north-2gb' }] });
    expect(await shop.flows.getSession(north.sessionId)).toMatchObject({ account: 'north' });
    expect(await shop.flows.getSession(main.sessionId)).not.toHaveProperty('account');
    await north.choose('north-2gb');
    expect((await shop.fulfillment.getCart(north.sessionId))?.account).toBe('north');
  });

  it("verifies north's order with north's keys on north's POS Sales ID, and calls back with north's credentials", async () => {
    const session = driver(shop, 'north');
    await session.start();
    await session.choose('north-2gb');
    const orderId = randomUUID();
    await session.pay({ orderId });
    const callback = await session.waitForCallback();
    // The sandbox takes north's sessions' callbacks with north's credentials only (401/403 otherwise).
    expect(callback).toMatchObject({ account: 'north', matched: true, serviceStatus: 'success' });
    expect(callback.body).toMatchObject({ OrderId: orderId, MetaData: { deliveredFor: 'north' } });
    expect(hubtel.session(session.sessionId)).toMatchObject({ account: 'north', state: 'fulfilled' });
    // Confirmed by a status check the sandbox answered on north's POS Sales ID (it answers only north's keys there).
    const northPos = hubtel.account('north').posSalesId;
    const checks = hubtel.requests().filter((r) => r.api === 'status');
    expect(checks.map((r) => [r.path.split('?')[0], r.statusCode])).toEqual([
      [`/transactions/${northPos}/status`, 200],
    ]);
    await drain(shop);
    expect(shop.orders.all.map((o) => [o.orderId, o.account, o.payment?.confirmedByStatusCheck])).toEqual([
      [orderId, 'north', true],
    ]);
    expect(shop.orders.north.map((o) => o.orderId)).toEqual([orderId]);
    await until(() => shop.orders.sent.length === 1);
    expect(shop.orders.sent[0]).toMatchObject({ orderId, account: 'north' });
    expect(await shop.fulfillment.getOrder(orderId)).toMatchObject({
      account: 'north',
      payment: { status: 'confirmed' },
    });
    expect(signals).toContainEqual({
      kind: 'inbound',
      source: 'fulfillment',
      outcome: 'accepted',
      account: 'north',
    });

    // The sandbox refuses the default account's keys for north's service: 4105 on north's POS
    // Sales ID, and not found on its own (north's payment is not the default account's).
    const main = hubtel.account('default').credentials.api;
    const auth = {
      Authorization: `Basic ${Buffer.from(`${main.clientId}:${main.clientSecret}`).toString('base64')}`,
    };
    const crossed = await fetch(
      `${hubtel.url}/transactions/${northPos}/status?clientReference=${session.sessionId}`,
      { headers: auth },
    );
    expect(crossed.status).toBe(403);
    expect(await crossed.json()).toMatchObject({ responseCode: '4105' });
    const own = await fetch(
      `${hubtel.url}/transactions/${hubtel.posSalesId}/status?clientReference=${session.sessionId}`,
      { headers: auth },
    );
    expect(own.status).toBe(404);
  });

  it("delivers the default account's and a registerAccountAsync account's orders each on its own path", async () => {
    const main = driver(shop, 'default');
    await main.start();
    await main.choose('main-1gb');
    await main.pay();
    expect(await main.waitForCallback()).toMatchObject({
      account: 'default',
      matched: true,
      serviceStatus: 'success',
    });
    const south = driver(shop, 'south');
    expect(await south.start()).toMatchObject({ Message: 'south shop' });
    await south.choose('south-3gb');
    await south.pay();
    expect(await south.waitForCallback()).toMatchObject({
      account: 'south',
      matched: true,
      serviceStatus: 'success',
    });
    await drain(shop);
    // One rule on every event: `account` is present, `default` for the default account.
    expect(shop.orders.all.map((o) => o.account)).toEqual(['default', 'south']);
    await until(() => shop.orders.sent.length === 2);
    expect(shop.orders.sent.map((e) => e.account).sort()).toEqual(['default', 'south']);
    // The north-only handler saw neither.
    expect(shop.orders.north).toEqual([]);
    // A refused request on the default account's path: its rejected event says `default` too.
    const refused = await fetch(`${shop.url}/api/fulfillment`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ OrderId: 'o-unknown', SessionId: 's-unknown', ExtraData: {}, OrderInfo: null }),
    });
    expect(refused.status).toBe(404);
    await until(() => shop.orders.rejected.length === 1);
    expect(shop.orders.rejected.map((e) => [e.reason, e.account])).toEqual([['UNKNOWN_SESSION', 'default']]);
  });

  it("refuses a session continued on another account's path: 409 HUBTEL_WRONG_ACCOUNT, the session unchanged, counted", async () => {
    const north = driver(shop, 'north');
    await north.start();
    const before = await shop.flows.getSession(north.sessionId);
    const crossed = await postJson(
      `${shop.url}/api/service-flow`,
      flowRequest('Response', north.sessionId, { Message: '1' }),
    );
    expect(crossed.status).toBe(409);
    expect(crossed.body).toMatchObject({ statusCode: 409, code: 'HUBTEL_WRONG_ACCOUNT' });
    const released = await postJson(
      `${shop.url}/api/service-flow/south`,
      flowRequest('Release', north.sessionId),
    );
    expect(released.body).toMatchObject({ code: 'HUBTEL_WRONG_ACCOUNT' });
    expect(await shop.flows.getSession(north.sessionId)).toEqual(before);
    expect(signals.filter((s) => s.kind === 'inbound')).toEqual([
      {
        kind: 'inbound',
        source: 'service-flow',
        outcome: 'rejected',
        reason: 'HUBTEL_WRONG_ACCOUNT',
        account: 'default',
      },
      {
        kind: 'inbound',
        source: 'service-flow',
        outcome: 'rejected',
        reason: 'HUBTEL_WRONG_ACCOUNT',
        account: 'south',
      },
    ]);
    // On its own path it goes on.
    expect(await north.choose('north-2gb')).toMatchObject({ Type: 'AddToCart' });
  });

  it("refuses a fulfillment for north's cart on the default path, and a known order on another path: nothing emitted", async () => {
    const north = driver(shop, 'north');
    await north.start();
    await north.choose('north-2gb');
    hubtel.forAccount('north').markServicePaid(north.sessionId);
    const order = { OrderId: randomUUID(), SessionId: north.sessionId, ExtraData: {}, OrderInfo: null };
    const crossed = await postJson(`${shop.url}/api/fulfillment`, order);
    expect(crossed.status).toBe(409);
    expect(crossed.body).toMatchObject({ code: 'HUBTEL_WRONG_ACCOUNT' });
    expect(await shop.fulfillment.getOrder(order.OrderId)).toBeUndefined();
    expect(signals).toContainEqual({
      kind: 'inbound',
      source: 'fulfillment',
      outcome: 'rejected',
      reason: 'HUBTEL_WRONG_ACCOUNT',
      account: 'default',
    });

    // A default-account order, delivered, then sent again on north's path.
    const main = driver(shop, 'default');
    await main.start();
    await main.choose('main-1gb');
    const { order: paid } = await main.pay();
    await main.waitForCallback();
    const again = await postJson(`${shop.url}/api/fulfillment/north`, {
      OrderId: paid.orderId,
      SessionId: main.sessionId,
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'HUBTEL_WRONG_ACCOUNT' });
    await drain(shop);
    await shop.fulfillment.drainRejections();
    // Only the default order ran; nothing was rejected (no alert for a wrong path) and north's cart is still orderable.
    expect(shop.orders.all.map((o) => o.orderId)).toEqual([paid.orderId]);
    expect(shop.orders.rejected).toEqual([]);
    const right = await postJson(`${shop.url}/api/fulfillment/north`, order);
    expect(right.body).toMatchObject({ OrderId: order.OrderId, Status: 'received' });
    await until(() => hubtel.fulfillmentCallbacks({ account: 'north' }).length === 1);
  });

  it('@InjectFulfillment(name) and forAccount(name): an account reads and reports its own orders only', async () => {
    const desk = shop.app.get(NorthDesk);
    expect(desk.main).toBe(shop.fulfillment);
    const main = driver(shop, 'default');
    await main.start();
    await main.choose('main-1gb');
    const { order: mainOrder } = await main.pay();
    await main.waitForCallback();
    const north = driver(shop, 'north');
    await north.start();
    await north.choose('north-2gb');
    const { order: northOrder } = await north.pay();
    await north.waitForCallback();

    expect(await desk.north.getOrder(northOrder.orderId)).toMatchObject({ account: 'north' });
    expect(await desk.north.getOrder(mainOrder.orderId)).toBeUndefined();
    expect(await shop.fulfillment.forAccount('default').getOrder(mainOrder.orderId)).toMatchObject({
      orderId: mainOrder.orderId,
    });
    expect(await desk.north.getCart(main.sessionId)).toBeUndefined();
    await expect(desk.north.complete(mainOrder.orderId, 'failed')).rejects.toMatchObject({
      code: 'HUBTEL_WRONG_ACCOUNT',
    });
    // Reported already (success): the same status again is a no-op for its own account.
    await expect(desk.north.complete(northOrder.orderId, 'success')).resolves.toBeUndefined();
    await expect(shop.fulfillment.forAccount('east').getOrder('x')).rejects.toMatchObject({
      code: 'HUBTEL_UNKNOWN_ACCOUNT',
      name: 'ServiceAppUnknownAccountError',
    });
  });

  it('handle(body, account) and receive(body, account): the services called directly (routes mounted by the app)', async () => {
    const sessionId = randomUUID();
    const start = flowRequest('Initiation', sessionId);
    expect(await shop.flows.handle(start, 'north')).toMatchObject({ Message: 'north shop' });
    await expect(
      shop.flows.handle(flowRequest('Response', sessionId, { Message: 'north-2gb' }), 'south'),
    ).rejects.toMatchObject({ code: 'HUBTEL_WRONG_ACCOUNT' });
    expect(
      await shop.flows.handle(flowRequest('Response', sessionId, { Message: 'north-2gb' }), 'north'),
    ).toMatchObject({ Type: 'AddToCart' });
    await expect(shop.flows.handle(start, 'east')).rejects.toMatchObject({ code: 'HUBTEL_UNKNOWN_ACCOUNT' });
    hubtel.forAccount('north').markServicePaid(sessionId, { amount: 7 });
    const order = { OrderId: randomUUID(), SessionId: sessionId, ExtraData: {}, OrderInfo: null };
    await expect(shop.fulfillment.receive(order)).rejects.toMatchObject({ code: 'HUBTEL_WRONG_ACCOUNT' });
    expect(await shop.fulfillment.receive(order, 'north')).toMatchObject({ Status: 'received' });
    await until(() => hubtel.fulfillmentCallbacks({ account: 'north' }).length === 1);
  });

  it('answers an unknown account, or a wrong or missing path secret of an account, 404 before anything runs', async () => {
    const guarded = await startShop([
      ServiceAppModule.registerAccount({
        name: 'north',
        ...accountOptions('north'),
        access: { pathSecret: northSecret },
      }),
    ]);
    const id = randomUUID();
    for (const path of ['east', 'north', `north/${'x'.repeat(20)}`, northSecret]) {
      const answer = await postJson(`${guarded.url}/api/service-flow/${path}`, flowRequest('Initiation', id));
      expect([path, answer.status, answer.body?.code]).toEqual([path, 404, 'HUBTEL_NOT_FOUND']);
    }
    expect(await guarded.flows.getSession(id)).toBeUndefined();
    const session = hubtel.forAccount('north').serviceApp(guarded.url, {
      operator: APP_OPERATOR,
      serviceFlowPath: `/api/service-flow/north/${northSecret}`,
      fulfillmentPath: `/api/fulfillment/north/${northSecret}`,
    });
    expect(await session.start()).toMatchObject({ Message: 'north shop' });
    await session.choose('north-2gb');
    await session.pay();
    expect(await session.waitForCallback()).toMatchObject({ account: 'north', matched: true });
    // The default account has no path secret: its own path stays open.
    expect(
      (await postJson(`${guarded.url}/api/service-flow`, flowRequest('Initiation', randomUUID()))).status,
    ).toBe(200);
  });

  it('finds run-time accounts with the resolver (cached; an unknown name is a 404)', async () => {
    const asked: string[] = [];
    const resolver = await startShop([], {
      accounts: {
        resolve: async (name: string) => {
          asked.push(name);
          return name === 'west' ? accountOptions('west') : undefined;
        },
        cacheTtlMs: 60_000,
      },
    });
    const session = driver(resolver, 'west');
    expect(await session.start()).toMatchObject({ Message: 'west shop' });
    await session.choose('west-4gb');
    await session.pay();
    expect(await session.waitForCallback()).toMatchObject({
      account: 'west',
      matched: true,
      serviceStatus: 'success',
    });
    expect(asked).toEqual(['west']);
    const unknown = await postJson(
      `${resolver.url}/api/service-flow/nobody`,
      flowRequest('Initiation', randomUUID()),
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'HUBTEL_NOT_FOUND' });
    expect(asked).toEqual(['west', 'nobody']);
  });

  it("a flood of made-up names: a found account's customers are served while its entry is refreshed; the refusal is logged once, counted under the path's known account", async () => {
    const asked: string[] = [];
    const logger = new CaptureLogger();
    const secret = 'west-path-secret-0123456789';
    const resolver = await startShop(
      [],
      {
        accounts: {
          resolve: (name: string) => {
            asked.push(name);
            return name === 'west'
              ? { ...accountOptions('west'), access: { pathSecret: secret } }
              : undefined;
          },
          cacheTtlMs: 200,
          requestLookupsPerMinute: 10,
        },
      },
      [],
      logger,
    );
    const dial = (path: string) =>
      postJson(`${resolver.url}/api/service-flow/${path}`, flowRequest('Initiation', randomUUID()));
    expect((await dial(`west/${secret}`)).body).toMatchObject({ Message: 'west shop' }); // found once
    await new Promise((resolve) => setTimeout(resolve, 300)); // its entry has expired
    const flood: number[] = [];
    const customers: Array<[number, unknown]> = [];
    // Bounded: 60 rounds of 4 made-up names and one of west's customers dialling.
    for (let i = 0; i < 240; i += 4) {
      const [west, ...forged] = await Promise.all([
        dial(`west/${secret}`),
        ...[0, 1, 2, 3].map((k) => dial(`made-up-${i + k}`)),
      ]);
      customers.push([west!.status, west!.body?.Message]);
      flood.push(...forged.map((answer) => answer.status));
    }
    const wrongSecret = await dial(`west/${'x'.repeat(24)}`);
    expect(wrongSecret.status).toBe(404);
    expect(flood.filter((status) => status === 503).length).toBeGreaterThan(200);
    expect(customers.filter(([status, message]) => status !== 200 || message !== 'west shop')).toEqual([]);
    // West's first dial (never found before) spent one of the 10 look-ups; its refreshes none.
    expect(asked.filter((name) => name.startsWith('made-up'))).toHaveLength(9);
    const told = logger.lines.filter((l) => l.message.includes('accounts.requestLookupsPerMinute'));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 'warn', context: 'HubtelServiceApp' });
    const refused = signals.filter(
      (s): s is HubtelInboundSignal => s.kind === 'inbound' && s.outcome === 'rejected',
    );
    expect(refused.filter((s) => s.reason === 'HUBTEL_ACCOUNT_LOOKUPS_LIMITED' && !s.account)).toHaveLength(
      flood.filter((status) => status === 503).length,
    );
    expect(refused.filter((s) => s.account !== undefined)).toEqual([
      {
        kind: 'inbound',
        source: 'service-flow',
        outcome: 'rejected',
        reason: 'HUBTEL_NOT_FOUND',
        account: 'west',
      },
    ]);
  });

  it('stops the bootstrap on a bad registered account, naming the option under serviceApp[north]', async () => {
    const boot = async (overrides: Record<string, unknown>) => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          EventEmitterModule.forRoot(),
          ServiceAppModule.forRoot(hubtel.serviceAppOptions()),
          ServiceAppModule.registerAccount({ name: 'north', ...overrides } as never),
        ],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      try {
        await app.init();
      } finally {
        await app.close();
      }
    };
    const { statusCheck } = accountOptions('north');
    // The default account verifies payments: a named account without its own status check would not.
    await expect(boot({})).rejects.toMatchObject({ option: 'serviceApp[north].statusCheck' });
    await expect(boot({ statusCheck, store: 'X' })).rejects.toMatchObject({
      option: 'serviceApp[north].store',
    });
    await expect(boot({ statusCheck, flows: [] })).rejects.toThrow(HubtelConfigError);
    await expect(boot({ statusCheck: { ...statusCheck, posSalesId: '' } })).rejects.toMatchObject({
      option: 'serviceApp[north].statusCheck.posSalesId',
    });
    await expect(boot({ statusCheck, access: { pathSecret: 'short' } })).rejects.toMatchObject({
      option: 'serviceApp[north].access.pathSecret',
    });
    expect(() => ServiceAppModule.registerAccount({ name: 'default', statusCheck })).toThrow(
      HubtelConfigError,
    );
  });

  it("hubtel-simulate --account north drives north's endpoint and gets its order confirmed by north's status check", async () => {
    let text = '';
    const stdout = new PassThrough();
    stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const stdin = new PassThrough();
    stdin.write('1\ny\n');
    const code = await runSimulateCli(
      [
        `${shop.url}/api/service-flow/north`,
        '--sandbox',
        hubtel.url,
        '--account',
        'north',
        '--operator',
        APP_OPERATOR,
        '--callback-timeout',
        '20',
      ],
      { stdin, stdout, stderr: stdout, env: {} },
    );
    expect([code, text]).toEqual([
      0,
      expect.stringContaining('Fulfillment callback received: ServiceStatus success'),
    ]);
    expect(text).toContain('north shop');
    expect(text).toContain(`Service Fulfillment URL   ${shop.url}/api/fulfillment/north`);
    expect(text).toContain('Sandbox account           north');
    await drain(shop);
    expect(shop.orders.all.map((o) => [o.account, o.payment?.confirmedByStatusCheck])).toEqual([
      ['north', true],
    ]);
    expect(hubtel.fulfillmentCallbacks({ account: 'north' })).toHaveLength(1);
    expect(() =>
      parseSimulateCliArgs(['http://127.0.0.1:1/api/service-flow/north', '--account', 'north']),
    ).toThrow('--account needs --sandbox');
  });
});
