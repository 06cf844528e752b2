/**
 * Several checkout accounts in one app (issue 24), over real HTTP through real Nest apps against
 * one sandbox serving two Hubtel accounts (`default` and `north`, each with its own API keys and
 * POS Sales ID). What the sandbox records proves which keys created and checked each invoice (it
 * files an invoice under the account whose keys created it, and the status check's path names the
 * POS Sales ID); it refuses one account's keys on the other's POS Sales ID (4101), as the platform
 * does. Callbacks are routed by path: one for account A's invoice on account B's path is refused
 * and nothing is emitted.
 */
import { Global, Injectable, Module, type INestApplication } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import {
  HUBTEL_TELEMETRY,
  HubtelConfigError,
  type HubtelInboundSignal,
  type HubtelSignal,
  type HubtelStore,
} from 'nestjs-hubtel';
import {
  CheckoutModule,
  CheckoutReconciler,
  CheckoutService,
  CheckoutUnknownAccountError,
  InjectCheckout,
  OnCheckoutDeadLetter,
  OnCheckoutPaid,
  OnCheckoutRejected,
  checkoutAccountsFromEnv,
  type CheckoutAccountOverrides,
  type CheckoutAccountService,
  type CheckoutDeadLetterEvent,
  type CheckoutModuleOptions,
  type CheckoutPaidEvent,
  type CheckoutRejectedEvent,
} from 'nestjs-hubtel/checkout';
import {
  buildCheckoutCallback,
  createTestSandbox,
  sendCheckoutCallback,
  type TestSandbox,
} from 'nestjs-hubtel/testing';
import { CHECKOUT_STORE } from '../libs/checkout/src/checkout.constants.js';
import { CaptureLogger } from './support/capture-logger.js';
import { eventually } from './support/multi-process.js';
import { freePort } from './support/redis-server.js';

const CALLBACK = 'hubtel/checkout/callback';

@Injectable()
class Handlers {
  readonly paid: CheckoutPaidEvent[] = [];
  readonly northPaid: string[] = [];
  readonly rejected: CheckoutRejectedEvent[] = [];
  readonly dead: string[] = [];
  /** Each dead letter's key and `account`. */
  readonly deadAccounts: Array<[string, string]> = [];
  readonly northDead: string[] = [];
  /** References whose handlers throw (to dead-letter them). */
  readonly failing = new Set<string>();

  @OnCheckoutPaid()
  onPaid(event: CheckoutPaidEvent) {
    this.paid.push(event);
    if (this.failing.has(event.clientReference)) throw new Error('the warehouse is down');
  }

  /** Runs for the north account's invoices only. */
  @OnCheckoutPaid({ account: 'north' })
  onNorthPaid(event: CheckoutPaidEvent) {
    if (this.failing.has(event.clientReference)) throw new Error('the north warehouse is down');
    this.northPaid.push(event.clientReference);
  }

  @OnCheckoutRejected()
  onRejected(event: CheckoutRejectedEvent) {
    this.rejected.push(event);
  }

  @OnCheckoutDeadLetter()
  onDead(event: CheckoutDeadLetterEvent) {
    this.dead.push(event.key);
    this.deadAccounts.push([event.key, event.account]);
  }

  @OnCheckoutDeadLetter({ account: 'north' })
  onNorthDead(event: CheckoutDeadLetterEvent) {
    this.northDead.push(event.key);
  }
}

@Injectable()
class Shops {
  constructor(
    readonly checkout: CheckoutService,
    @InjectCheckout('north') readonly north: CheckoutAccountService,
    @InjectCheckout() readonly main: CheckoutService,
  ) {}
}

/** The app's inbound telemetry, as a metrics module would receive it. */
const signals: HubtelSignal[] = [];
@Global()
@Module({
  providers: [{ provide: HUBTEL_TELEMETRY, useValue: { record: (s: HubtelSignal) => signals.push(s) } }],
  exports: [HUBTEL_TELEMETRY],
})
class TelemetryModule {}

interface Shop {
  app: INestApplication;
  url: string;
  checkout: CheckoutService;
  handlers: Handlers;
  logger: CaptureLogger;
}

describe('Several checkout accounts (e2e, one sandbox serving two accounts)', () => {
  let hubtel: TestSandbox;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    hubtel = await createTestSandbox({ accounts: [{ name: 'north' }] });
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    hubtel.reset();
    signals.length = 0;
  });
  afterAll(() => hubtel.stop());

  const pos = () => ({ main: hubtel.posSalesId, north: hubtel.forAccount('north').account.posSalesId });
  /** North's options as registerAccount takes them: its keys and POS Sales ID. */
  const northAccount = (): CheckoutAccountOverrides => {
    const { clientId, clientSecret, posSalesId } = hubtel.forAccount('north').checkoutOptions();
    return { clientId, clientSecret, posSalesId, merchantAccountNumber: posSalesId };
  };
  /** Status checks the sandbox answered, as `<POS Sales ID> <HTTP status>`. */
  const statusChecks = () =>
    hubtel
      .requests()
      .filter((r) => r.api === 'status')
      .map((r) => `${r.path.split('/')[2]} ${r.statusCode}`);

  async function startShop(
    setup: {
      defaults?: Partial<CheckoutModuleOptions>;
      imports?: NonNullable<Parameters<typeof Test.createTestingModule>[0]['imports']>;
    } = {},
  ): Promise<Shop> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const logger = new CaptureLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TelemetryModule,
        EventEmitterModule.forRoot(),
        CheckoutModule.forRoot({
          ...hubtel.checkoutOptions({ appUrl: url }),
          verification: { recheck: { attempts: 1, delayMs: 50, maxDelayMs: 50, minIntervalMs: 50 } },
          ...setup.defaults,
          isGlobal: true,
        }),
        ...(setup.imports ?? [CheckoutModule.registerAccount({ name: 'north', ...northAccount() })]),
      ],
      providers: [Handlers],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    apps.push(app);
    await app.listen(port, '127.0.0.1');
    return { app, url, checkout: app.get(CheckoutService), handlers: app.get(Handlers), logger };
  }

  it("creates, pays and confirms both accounts' invoices, each with its own keys and POS Sales ID", async () => {
    const shop = await startShop({
      imports: [
        {
          module: class ShopsModule {},
          imports: [CheckoutModule.registerAccount({ name: 'north', ...northAccount() })],
          providers: [Shops],
        },
      ],
    });
    const shops = shop.app.get(Shops);
    expect(shops.main).toBe(shop.checkout);
    expect(shops.north.account).toBe('north');
    const a = await shops.checkout.createInvoice({ totalAmount: 10, description: 'Main bundle' });
    const b = await shops.north.createInvoice({ totalAmount: 20, description: 'North bundle' });
    const c = await shop.checkout.forAccount('north').createInvoice({ totalAmount: 30, description: 'More' });

    // The sandbox files each invoice under the account whose keys created it.
    expect(hubtel.invoice(a.clientReference)).toMatchObject({
      account: 'default',
      merchantAccountNumber: null,
    });
    expect(hubtel.invoice(b.clientReference)).toMatchObject({
      account: 'north',
      merchantAccountNumber: pos().north,
      callbackUrl: `${shop.url}/${CALLBACK}/north`,
    });
    expect(hubtel.invoice(c.clientReference)!.account).toBe('north');
    expect(hubtel.invoice(a.clientReference)!.callbackUrl).toBe(`${shop.url}/${CALLBACK}`);

    for (const invoice of [a, b, c]) await hubtel.pay(invoice.clientReference);
    await shop.checkout.drain();
    expect(shop.handlers.paid.map((e) => [e.clientReference, e.account, e.confirmedByStatusCheck])).toEqual([
      [a.clientReference, 'default', true],
      [b.clientReference, 'north', true],
      [c.clientReference, 'north', true],
    ]);
    expect(shop.handlers.northPaid).toEqual([b.clientReference, c.clientReference]);
    // Each confirmed on its own POS Sales ID (the sandbox answers a POS Sales ID for its own keys only).
    expect(statusChecks().sort()).toEqual(
      [`${pos().main} 200`, `${pos().north} 200`, `${pos().north} 200`].sort(),
    );
    expect(await shop.checkout.getInvoice(b.clientReference)).toMatchObject({
      account: 'north',
      status: 'paid',
    });

    // getStatus per account: north's keys see north's invoice; the default's keys do not (404).
    await expect(shop.checkout.forAccount('north').getStatus(b.clientReference)).resolves.toMatchObject({
      paid: true,
    });
    await expect(shop.checkout.getStatus(b.clientReference)).rejects.toMatchObject({
      code: 'HUBTEL_NOT_FOUND',
    });

    // Same store key as a single-account app's: the reference is unique across the app's accounts.
    const store = shop.app.get<HubtelStore>(CHECKOUT_STORE);
    expect((await store.get(`hubtel:checkout:invoice:${a.clientReference}`))?.value).toMatchObject({
      account: 'default',
    });
    await expect(
      shop.checkout.forAccount('north').createInvoice({
        totalAmount: 1,
        description: 'Taken',
        clientReference: a.clientReference,
      }),
    ).rejects.toMatchObject({ code: 'HUBTEL_STORE_CONFLICT' });
  });

  it("the sandbox refuses one account's keys on the other's POS Sales ID (4101): at creation and at the status check", async () => {
    const north = northAccount();
    const shop = await startShop({
      imports: [
        CheckoutModule.registerAccount({ name: 'north', ...north }),
        // North's keys, the default account's POS Sales ID: a misconfiguration the platform refuses.
        CheckoutModule.registerAccount({
          name: 'crossed',
          clientId: north.clientId,
          clientSecret: north.clientSecret,
          posSalesId: pos().main,
          merchantAccountNumber: pos().main,
        }),
      ],
    });
    await expect(
      shop.checkout.forAccount('crossed').createInvoice({ totalAmount: 5, description: 'Crossed' }),
    ).rejects.toMatchObject({ httpStatus: 403, responseCode: '4101' });
    expect(hubtel.invoices()).toEqual([]);
    const a = await shop.checkout.createInvoice({ totalAmount: 5, description: 'Main' });
    await expect(shop.checkout.forAccount('crossed').getStatus(a.clientReference)).rejects.toMatchObject({
      httpStatus: 403,
      responseCode: '4101',
    });
    expect(statusChecks()).toEqual([`${pos().main} 403`]);
  });

  it("refuses a callback for one account's invoice on another account's path: 200, nothing emitted, logged and counted", async () => {
    const shop = await startShop();
    const a = await shop.checkout.createInvoice({ totalAmount: 10, description: 'Main' });
    const b = await shop.checkout
      .forAccount('north')
      .createInvoice({ totalAmount: 20, description: 'North' });
    // Paid at the sandbox, no callback sent: the test delivers genuine bodies on the wrong paths.
    await hubtel.pay(a.clientReference, { deliver: false });
    await hubtel.pay(b.clientReference, { deliver: false });
    const body = (ref: string) => buildCheckoutCallback({ invoice: hubtel.invoice(ref)! });

    const onNorth = await sendCheckoutCallback(shop.url, body(a.clientReference), {
      path: `${CALLBACK}/north`,
    });
    const onDefault = await sendCheckoutCallback(shop.url, body(b.clientReference));
    expect([onNorth.status, onNorth.body]).toEqual([200, { received: true }]);
    expect([onDefault.status, onDefault.body]).toEqual([200, { received: true }]);
    await shop.checkout.drain();
    expect(shop.handlers.paid).toEqual([]);
    expect(shop.handlers.rejected).toEqual([]);
    expect(statusChecks()).toEqual([]);
    expect((await shop.checkout.getInvoice(a.clientReference))!.status).toBe('pending');
    const inbound = signals.filter((s) => s.kind === 'inbound');
    expect(inbound).toEqual([
      { kind: 'inbound', source: 'checkout', outcome: 'rejected', reason: 'WRONG_ACCOUNT', account: 'north' },
      {
        kind: 'inbound',
        source: 'checkout',
        outcome: 'rejected',
        reason: 'WRONG_ACCOUNT',
        account: 'default',
      },
    ]);
    const warnings = shop.logger.lines.filter(
      (l) => l.level === 'warn' && l.message.includes('WRONG_ACCOUNT'),
    );
    expect(warnings).toHaveLength(2);
    expect(warnings[0]!.message).toContain(`invoice ${a.clientReference} of account "default"`);

    // An account no one has: 404, as a wrong path secret; nothing processed.
    signals.length = 0;
    const unknown = await sendCheckoutCallback(shop.url, body(a.clientReference), {
      path: `${CALLBACK}/west`,
    });
    expect([unknown.status, (unknown.body as { code: string }).code]).toEqual([404, 'HUBTEL_NOT_FOUND']);
    expect(signals).toEqual([
      { kind: 'inbound', source: 'checkout', outcome: 'rejected', reason: 'HUBTEL_NOT_FOUND' },
    ]);

    // On their own paths the same bodies are paid, each confirmed with its own account.
    signals.length = 0;
    expect((await sendCheckoutCallback(shop.url, body(a.clientReference))).status).toBe(200);
    expect(
      (await sendCheckoutCallback(shop.url, body(b.clientReference), { path: `${CALLBACK}/north` })).status,
    ).toBe(200);
    await shop.checkout.drain();
    expect(shop.handlers.paid.map((e) => [e.clientReference, e.account])).toEqual([
      [a.clientReference, 'default'],
      [b.clientReference, 'north'],
    ]);
    expect(
      signals.filter((s) => s.kind === 'inbound').map((s) => (s as { account?: string }).account),
    ).toEqual(['default', 'north']);
  });

  it("warns at start-up when the default account's route has a path secret and a named account's has none", async () => {
    const secret = 'default-secret-0123456789';
    const open = await startShop({ defaults: { access: { pathSecret: secret } } });
    const warnings = open.logger.lines.filter((l) => l.level === 'warn' && /no path secret/.test(l.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('Account "north"');
    expect(warnings[0]!.message).toContain('POST /hubtel/checkout/callback/north');
    expect(warnings[0]!.message).toContain('HUBTEL_NORTH_CHECKOUT_PATH_SECRET');
    expect(warnings[0]!.message).not.toContain(secret);
    const guarded = await startShop({
      defaults: { access: { pathSecret: secret } },
      imports: [
        CheckoutModule.registerAccount({
          name: 'north',
          ...northAccount(),
          access: { pathSecret: 'north-secret-0123456789' },
        }),
      ],
    });
    expect(guarded.logger.text()).not.toMatch(/no path secret/);
    const unguarded = await startShop();
    expect(unguarded.logger.text()).not.toMatch(/no path secret/);
  });

  it("a north handler that keeps failing: its dead letter carries the account, filtered handlers see north's only", async () => {
    const shop = await startShop({
      defaults: { handlers: { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } } },
    });
    const b = await shop.checkout
      .forAccount('north')
      .createInvoice({ totalAmount: 20, description: 'North' });
    const a = await shop.checkout.createInvoice({ totalAmount: 10, description: 'Main' });
    shop.handlers.failing.add(b.clientReference);
    shop.handlers.failing.add(a.clientReference);
    await hubtel.pay(b.clientReference);
    await hubtel.pay(a.clientReference);
    await shop.checkout.drain();
    // One rule on every event: `account` is present, `default` for the default account.
    expect(shop.handlers.deadAccounts.sort()).toEqual(
      [
        [a.clientReference, 'default'],
        [b.clientReference, 'north'],
      ].sort(),
    );
    expect(shop.handlers.northDead).toEqual([b.clientReference]);
    const letters = await shop.checkout.listDeadLetters();
    expect(letters.find((l) => l.key === b.clientReference)).toMatchObject({ payload: { account: 'north' } });
  });

  it('reconciliation checks each pending invoice with its own account', async () => {
    const shop = await startShop({
      defaults: { reconciliation: { enabled: true, delayMs: 0, intervalMs: 3_600_000 } },
    });
    const a = await shop.checkout.createInvoice({ totalAmount: 10, description: 'Main' });
    const b = await shop.checkout
      .forAccount('north')
      .createInvoice({ totalAmount: 20, description: 'North' });
    await hubtel.pay(a.clientReference, { deliver: false });
    await hubtel.pay(b.clientReference, { deliver: false });
    const report = await shop.app.get(CheckoutReconciler).runOnce();
    expect(report).toMatchObject({ checked: 2, paid: 2, errors: 0 });
    expect(statusChecks().sort()).toEqual([`${pos().main} 200`, `${pos().north} 200`].sort());
    await shop.checkout.drain();
    expect(shop.handlers.paid.map((e) => [e.clientReference, e.account, e.source]).sort()).toEqual(
      [
        [a.clientReference, 'default', 'status-check'],
        [b.clientReference, 'north', 'status-check'],
      ].sort(),
    );
    // And on demand, for one invoice: with its own account too.
    const c = await shop.checkout.forAccount('north').createInvoice({ totalAmount: 5, description: 'Later' });
    await hubtel.pay(c.clientReference, { deliver: false });
    await expect(shop.checkout.reconcile(c.clientReference)).resolves.toMatchObject({ outcome: 'paid' });
  });

  it("registerAccountAsync: options from a factory; the account's own path secret guards its own route", async () => {
    const secret = 'north-path-secret-0123456789';
    @Module({
      providers: [{ provide: 'NORTH_KEYS', useFactory: () => northAccount() }],
      exports: ['NORTH_KEYS'],
    })
    class VaultModule {}
    const shop = await startShop({
      defaults: { access: { allowedIps: ['127.0.0.1', '::1'] } },
      imports: [
        CheckoutModule.registerAccountAsync({
          name: 'north',
          imports: [VaultModule],
          inject: ['NORTH_KEYS'],
          useFactory: (keys: CheckoutAccountOverrides) => ({ ...keys, access: { pathSecret: secret } }),
        }),
      ],
    });
    const b = await shop.checkout
      .forAccount('north')
      .createInvoice({ totalAmount: 20, description: 'North' });
    expect(hubtel.invoice(b.clientReference)!.callbackUrl).toBe(`${shop.url}/${CALLBACK}/north/${secret}`);
    await hubtel.pay(b.clientReference, { deliver: false });
    const body = buildCheckoutCallback({ invoice: hubtel.invoice(b.clientReference)! });
    for (const path of [`${CALLBACK}/north`, `${CALLBACK}/north/wrong-secret-0123456789`])
      expect((await sendCheckoutCallback(shop.url, body, { path })).status).toBe(404);
    await shop.checkout.drain();
    expect(shop.handlers.paid).toEqual([]);
    expect((await sendCheckoutCallback(shop.url, body, { path: `${CALLBACK}/north/${secret}` })).status).toBe(
      200,
    );
    await shop.checkout.drain();
    expect(shop.handlers.paid.map((e) => e.account)).toEqual(['north']);
  });

  it('accounts from a resolver: cached, routed by name; an unknown name is a typed error and nothing is sent', async () => {
    const lookups: string[] = [];
    const shop = await startShop({
      defaults: {
        accounts: {
          resolve: async (name) => {
            lookups.push(name);
            return name === 'm-1042' ? northAccount() : undefined;
          },
          cacheTtlMs: 60_000,
        },
      },
      imports: [],
    });
    const merchant = shop.checkout.forAccount('m-1042');
    const b = await merchant.createInvoice({ totalAmount: 20, description: 'Merchant order' });
    const c = await merchant.createInvoice({ totalAmount: 21, description: 'Another' });
    expect(lookups).toEqual(['m-1042']);
    expect(hubtel.invoice(b.clientReference)).toMatchObject({
      account: 'north',
      callbackUrl: `${shop.url}/${CALLBACK}/m-1042`,
    });
    await hubtel.pay(b.clientReference);
    await hubtel.pay(c.clientReference);
    await shop.checkout.drain();
    expect(shop.handlers.paid.map((e) => e.account)).toEqual(['m-1042', 'm-1042']);
    expect(lookups).toEqual(['m-1042']);

    const before = hubtel.requests().length;
    const error = await shop.checkout
      .forAccount('west')
      .createInvoice({ totalAmount: 1, description: 'Nobody' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckoutUnknownAccountError);
    expect(error).toMatchObject({ code: 'HUBTEL_UNKNOWN_ACCOUNT', account: '"west"' });
    expect((error as Error).message).toContain('the accounts are default, and those accounts.resolve finds');
    expect(hubtel.requests()).toHaveLength(before);
    const routed = await sendCheckoutCallback(
      shop.url,
      buildCheckoutCallback({ clientReference: 'x', amount: 1 }),
      {
        path: `${CALLBACK}/west`,
      },
    );
    expect(routed.status).toBe(404);
    // Unknown names are not cached: asked each time.
    expect(lookups).toEqual(['m-1042', 'west', 'west']);
  });

  it('made-up names on the callback path: one query per name a minute, and a bounded number of queries; found accounts still route', async () => {
    const lookups: string[] = [];
    const shop = await startShop({
      defaults: {
        accounts: {
          resolve: (name) => {
            lookups.push(name);
            return name === 'm-1042' ? northAccount() : undefined;
          },
          requestLookupsPerMinute: 3,
        },
      },
      imports: [],
    });
    const forge = (name: string) =>
      sendCheckoutCallback(shop.url, buildCheckoutCallback({ clientReference: 'x', amount: 1 }), {
        path: `${CALLBACK}/${name}`,
      });
    expect((await forge('forged-1')).status).toBe(404);
    expect((await forge('forged-1')).status).toBe(404);
    expect((await forge('forged-2')).status).toBe(404);
    expect(lookups).toEqual(['forged-1', 'forged-2']); // the repeated name cost nothing
    // The app's own call finds a merchant (and caches it) whatever the requests spent.
    const invoice = await shop.checkout
      .forAccount('m-1042')
      .createInvoice({ totalAmount: 12, description: 'Merchant order' });
    expect((await forge('forged-3')).status).toBe(404); // the third request look-up: the last one
    const limited = await forge('forged-4');
    expect(limited.status).toBe(503);
    expect(limited.body).toMatchObject({ code: 'HUBTEL_ACCOUNT_LOOKUPS_LIMITED' });
    expect(lookups).toEqual(['forged-1', 'forged-2', 'm-1042', 'forged-3']);
    // A cached account is still routed: its paid callback is confirmed and emitted.
    await hubtel.pay(invoice.clientReference);
    await shop.checkout.drain();
    expect(shop.handlers.paid.map((e) => [e.account, e.clientReference])).toEqual([
      ['m-1042', invoice.clientReference],
    ]);
    expect(shop.handlers.rejected).toEqual([]);
  });

  it("a flood of made-up names on the callback path: a found account's expired entry keeps being served, the refusal is logged once and counted under the path's known account", async () => {
    const lookups: string[] = [];
    const secret = 'm-1042-path-secret-0123456789';
    const shop = await startShop({
      defaults: {
        accounts: {
          resolve: (name) => {
            lookups.push(name);
            return name === 'm-1042' ? { ...northAccount(), access: { pathSecret: secret } } : undefined;
          },
          cacheTtlMs: 200,
          requestLookupsPerMinute: 10,
        },
      },
      imports: [],
    });
    const invoice = await shop.checkout
      .forAccount('m-1042')
      .createInvoice({ totalAmount: 12, description: 'Merchant order' });
    await new Promise((resolve) => setTimeout(resolve, 300)); // m-1042's entry has expired
    const forge = (path: string) =>
      sendCheckoutCallback(shop.url, buildCheckoutCallback({ clientReference: 'x', amount: 1 }), { path });
    const statuses: number[] = [];
    let flooding = true;
    const flood = (async () => {
      // Bounded: at most 400 made-up names, 4 at a time, while the payment goes through.
      for (let i = 0; flooding && i < 400; i += 4)
        for (const answer of await Promise.all(
          [0, 1, 2, 3].map((k) => forge(`${CALLBACK}/made-up-${i + k}`)),
        ))
          statuses.push(answer.status);
    })();
    await eventually(
      'the budget spent',
      () => (statuses.filter((s) => s === 503).length > 20 ? true : undefined),
      {
        timeoutMs: 15_000,
        intervalMs: 20,
      },
    );
    const paid = await hubtel.pay(invoice.clientReference);
    const wrongSecret = await forge(`${CALLBACK}/m-1042/${'x'.repeat(24)}`);
    flooding = false;
    await flood;
    expect(paid.deliveries.map((d) => [d.url, d.state])).toEqual([
      [`${shop.url}/${CALLBACK}/m-1042/${secret}`, 'delivered'],
    ]);
    await shop.checkout.drain();
    expect(shop.handlers.paid.map((e) => [e.account, e.clientReference])).toEqual([
      ['m-1042', invoice.clientReference],
    ]);
    expect(wrongSecret.status).toBe(404);
    // The made-up names cost 10 queries; m-1042 was asked by the app, then again in the background.
    expect(lookups.filter((name) => name.startsWith('made-up'))).toHaveLength(10);
    expect(lookups.filter((name) => name === 'm-1042').length).toBeGreaterThanOrEqual(2);
    // One line for the episode, however many requests it refused.
    const told = shop.logger.lines.filter((l) => l.message.includes('accounts.requestLookupsPerMinute'));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 'warn', context: 'HubtelCheckout' });
    // Counted: the made-up names' refusals under no account, the known account's under its name.
    const refused = signals.filter(
      (s): s is HubtelInboundSignal => s.kind === 'inbound' && s.outcome === 'rejected',
    );
    expect(refused.filter((s) => s.reason === 'HUBTEL_ACCOUNT_LOOKUPS_LIMITED' && !s.account)).toHaveLength(
      statuses.filter((s) => s === 503).length,
    );
    expect(refused.filter((s) => s.account !== undefined)).toEqual([
      {
        kind: 'inbound',
        source: 'checkout',
        outcome: 'rejected',
        reason: 'HUBTEL_NOT_FOUND',
        account: 'm-1042',
      },
    ]);
  });

  it.each([
    ['a missing secret', { clientId: 'north-id' }, 'checkout[north].clientSecret'],
    ['a module-wide option', { clientId: 'id', clientSecret: 'secret', store: {} }, 'checkout[north].store'],
    [
      'a bad POS Sales ID',
      { clientId: 'id', clientSecret: 'secret', posSalesId: 'no such' },
      'checkout[north].posSalesId',
    ],
  ])(
    'a registered account with %s stops the bootstrap, naming the option',
    async (_what, options, option) => {
      const error = await startShop({
        imports: [
          CheckoutModule.registerAccount({ name: 'north', ...(options as CheckoutAccountOverrides) }),
        ],
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HubtelConfigError);
      expect(error).toMatchObject({ option });
    },
  );

  it('registerAccount needs forRoot (the account inherits from it)', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        CheckoutModule.registerAccount({ name: 'north', ...northAccount() }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await expect(app.init()).rejects.toThrow(/CheckoutModule\.forRoot/);
    await app.close();
  });

  it('accounts from the environment: HUBTEL_ACCOUNTS and HUBTEL_<NAME>_* feed forRoot and registerAccount', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { ...hubtel.env(), ...hubtel.forAccount('north').env() };
    expect(env.HUBTEL_ACCOUNTS).toBe('north');
    const checkout = checkoutAccountsFromEnv(env, {
      publicBaseUrl: url,
      returnUrl: `${url}/return`,
      cancellationUrl: `${url}/cancel`,
    });
    expect(checkout.accounts.map((a) => [a.name, a.posSalesId])).toEqual([['north', pos().north]]);
    const moduleRef = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        CheckoutModule.forRoot(checkout.default),
        ...checkout.accounts.map((account) => CheckoutModule.registerAccount(account)),
      ],
      providers: [Handlers],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.listen(port, '127.0.0.1');
    const service = app.get(CheckoutService);
    const b = await service.forAccount('north').createInvoice({ totalAmount: 20, description: 'North' });
    expect(hubtel.invoice(b.clientReference)!.account).toBe('north');
    await hubtel.pay(b.clientReference);
    await service.drain();
    expect(app.get(Handlers).paid.map((e) => [e.account, e.confirmedByStatusCheck])).toEqual([
      ['north', true],
    ]);
    expect(statusChecks()).toEqual([`${pos().north} 200`]);
  });
});
