import { Global, Injectable, Module, type ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HUBTEL_TELEMETRY, HubtelConfigError, type HubtelSignal, type HubtelTelemetry } from 'nestjs-hubtel';
import { FakeHttpServer } from '../../../test/support/fake-http-server.js';
import { SmsAccounts } from './sms.accounts.js';
import { SMS_ACCOUNTS } from './sms.constants.js';
import { InjectSms } from './sms.decorators.js';
import { SmsUnknownAccountError } from './sms.errors.js';
import { SmsModule } from './sms.module.js';
import { SMS_OPTIONS_RECIPE, type SmsAccountOverrides, type SmsModuleOptions } from './sms.options.js';

const resolveSmsOptions = (options: SmsModuleOptions) => SMS_OPTIONS_RECIPE.resolve(options);
import { SmsService } from './sms.service.js';
import type { SmsSender } from './sms.client.js';

const MAIN = { clientId: 'main-id', clientSecret: 'main-secret' };
const NORTH = { clientId: 'north-id', clientSecret: 'north-secret' };
const basic = (pair: { clientId: string; clientSecret: string }) =>
  `Basic ${Buffer.from(`${pair.clientId}:${pair.clientSecret}`).toString('base64')}`;

function configOption(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    if (e instanceof HubtelConfigError) return e.option;
    throw e;
  }
  return 'no error';
}

describe('SMS_OPTIONS_RECIPE.resolveAccount (a named account over the default one)', () => {
  const defaults: SmsModuleOptions = {
    ...MAIN,
    baseUrl: 'http://127.0.0.1:9001',
    senderId: 'MainShop',
    batchSize: 50,
    concurrency: 2,
    maxContentLength: 300,
    timeoutMs: 3_000,
    retry: { maxAttempts: 5, baseDelayMs: 7 },
    defaultCountryCode: '234',
    accounts: { resolve: () => undefined },
  };

  it('inherits every option it does not set, retry field by field; never the credentials nor the resolver', () => {
    const north = SMS_OPTIONS_RECIPE.resolveAccount('north', defaults, {
      ...NORTH,
      senderId: 'NorthShop',
      retry: { maxAttempts: 2 },
      batchSize: undefined,
    });
    expect(north).toEqual({
      credentials: NORTH,
      baseUrl: 'http://127.0.0.1:9001',
      senderId: 'NorthShop',
      maxSenderLength: 11,
      maxContentLength: 300,
      batchSize: 50,
      concurrency: 2,
      http: {
        timeoutMs: 3_000,
        retry: { maxAttempts: 2, baseDelayMs: 7, maxDelayMs: 5_000 },
        defaultCountryCode: '234',
      },
    });
    expect(north.accounts).toBeUndefined();
    // The default's own resolution is untouched by the account's.
    expect(resolveSmsOptions(defaults).credentials).toEqual(MAIN);
  });

  it('inherits the sender id when it sets none, and takes its own base URL', () => {
    const north = SMS_OPTIONS_RECIPE.resolveAccount('north', defaults, {
      ...NORTH,
      baseUrl: 'http://127.0.0.1:9002/',
    });
    expect(north.senderId).toBe('MainShop');
    expect(north.baseUrl).toBe('http://127.0.0.1:9002');
  });

  it.each([
    [{ clientId: 'north-id' }, 'sms[north].clientSecret'],
    [{ clientSecret: 'north-secret' }, 'sms[north].clientId'],
    [{ ...NORTH, batchSize: 0 }, 'sms[north].batchSize'],
    [{ ...NORTH, senderId: 'TwelveChars!' }, 'sms[north].senderId'],
    [{ ...NORTH, retry: { maxAttempts: 0 } }, 'sms[north].retry.maxAttempts'],
    [{ ...NORTH, accounts: { resolve: () => undefined } }, 'sms[north].accounts'],
    ['north', 'sms[north]'],
  ])('%j fails naming %s', (overrides, option) => {
    expect(configOption(() => SMS_OPTIONS_RECIPE.resolveAccount('north', defaults, overrides))).toBe(option);
  });

  it.each([
    [{ resolve: 'not a function' }, 'sms.accounts.resolve'],
    [{ resolve: () => undefined, cacheTtlMs: -1 }, 'sms.accounts.cacheTtlMs'],
    [{ resolve: () => undefined, cacheTtlMs: 1.5 }, 'sms.accounts.cacheTtlMs'],
    [[], 'sms.accounts'],
  ])('the resolver option %j fails naming %s', (accounts, option) => {
    expect(configOption(() => resolveSmsOptions({ ...MAIN, accounts } as unknown as SmsModuleOptions))).toBe(
      option,
    );
  });

  it('the resolver cache lasts 5 minutes unless told', () => {
    const resolve = () => undefined;
    expect(resolveSmsOptions({ ...MAIN, accounts: { resolve } }).accounts).toEqual({
      resolve,
      cacheTtlMs: 300_000,
      // Limits of look-ups from callback paths (SMS has none; the resolver's check is shared).
      unknownTtlMs: 60_000,
      requestLookupsPerMinute: 600,
    });
  });
});

/** A resolver that counts its calls and answers when told. */
class ScriptedResolver {
  readonly calls: string[] = [];
  private readonly waiting: (() => void)[] = [];
  held = false;
  constructor(private readonly known: Record<string, SmsAccountOverrides>) {}

  readonly resolve = async (name: string): Promise<SmsAccountOverrides | undefined> => {
    this.calls.push(name);
    if (this.held) await new Promise<void>((release) => this.waiting.push(release));
    if (name === 'broken') throw new Error('merchant database unavailable');
    return this.known[name];
  };

  release(): void {
    this.held = false;
    for (const go of this.waiting.splice(0)) go();
  }
}

describe('SmsModule accounts (registered, resolved, unknown)', () => {
  let fake: FakeHttpServer;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    fake = await FakeHttpServer.start();
    fake.route('POST', '/v1/messages/send', () => ({ status: 200, body: { messageId: 'm-1', status: 0 } }));
  });
  afterAll(() => fake.close());
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
    fake.requests.length = 0;
  });

  const FAST = { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } };

  @Injectable()
  class NorthNotifier {
    constructor(
      @InjectSms('north') readonly north: SmsSender,
      @InjectSms() readonly main: SmsService,
    ) {}
  }

  async function start(
    defaults: Partial<SmsModuleOptions> = {},
    imports: NonNullable<ModuleMetadata['imports']> = [
      SmsModule.registerAccount({ name: 'north', ...NORTH, senderId: 'NorthShop' }),
    ],
  ) {
    @Module({ imports, providers: [NorthNotifier] })
    class FeatureModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        SmsModule.forRoot({
          ...MAIN,
          baseUrl: fake.url,
          senderId: 'MainShop',
          ...FAST,
          ...defaults,
          isGlobal: true,
        }),
        FeatureModule,
      ],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    closers.push(() => app.close());
    return {
      sms: app.get(SmsService),
      accounts: app.get<SmsAccounts>(SMS_ACCOUNTS),
      notifier: app.get(NorthNotifier),
    };
  }

  it('sends each account with its own credentials and sender; @InjectSms and forAccount reach the same account', async () => {
    const { sms, notifier } = await start();
    await sms.send({ to: '0241234567', content: 'main' });
    await sms.forAccount('north').send({ to: '0241234567', content: 'north 1' });
    await notifier.north.send({ to: '0241234567', content: 'north 2' });
    expect(notifier.main).toBe(sms);
    expect(notifier.north.account).toBe('north');
    expect(sms.forAccount('default')).toBe(sms);
    expect(
      fake.requests.map((r) => [r.headers.authorization, (JSON.parse(r.rawBody) as { From: string }).From]),
    ).toEqual([
      [basic(MAIN), 'MainShop'],
      [basic(NORTH), 'NorthShop'],
      [basic(NORTH), 'NorthShop'],
    ]);
  });

  it('an unknown name is a typed error naming the accounts there are; nothing is sent', async () => {
    const { sms } = await start();
    const error = await sms
      .forAccount('west')
      .send({ to: '0241234567', content: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SmsUnknownAccountError);
    expect(error).toMatchObject({
      code: 'HUBTEL_UNKNOWN_ACCOUNT',
      account: '"west"',
      knownAccounts: ['default', 'north'],
    });
    expect((error as Error).message).toBe('No SMS account named "west": the accounts are default, north');
    for (const bad of ['North', '', 'a'.repeat(65), 42])
      await expect(sms.forAccount(bad as string).getMessageStatus('m-1')).rejects.toBeInstanceOf(
        SmsUnknownAccountError,
      );
    expect(fake.requests).toHaveLength(0);
  });

  it('resolves a run-time account once for concurrent first uses, then from the cache', async () => {
    const resolver = new ScriptedResolver({ 'm-1042': { ...NORTH, senderId: 'Merchant42' } });
    const { sms, accounts } = await start({ accounts: { resolve: resolver.resolve } });
    resolver.held = true;
    const first = Promise.all([accounts.get('m-1042'), accounts.get('m-1042'), accounts.get('m-1042')]);
    await new Promise((r) => setImmediate(r));
    resolver.release();
    const [a, b, c] = await first;
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(await accounts.get('m-1042')).toBe(a);
    expect(resolver.calls).toEqual(['m-1042']);
    // A registered name never asks the resolver.
    await sms.forAccount('north').send({ to: '0241234567', content: 'n' });
    await sms.forAccount('m-1042').send({ to: '0241234567', content: 'm' });
    expect(resolver.calls).toEqual(['m-1042']);
    expect(fake.requests.map((r) => (JSON.parse(r.rawBody) as { From: string }).From)).toEqual([
      'NorthShop',
      'Merchant42',
    ]);
  });

  it('asks again once the cache time is over (cacheTtlMs: 0 keeps nothing)', async () => {
    const resolver = new ScriptedResolver({ 'm-1': { ...NORTH } });
    const { accounts } = await start({ accounts: { resolve: resolver.resolve, cacheTtlMs: 0 } });
    await accounts.get('m-1');
    await new Promise((r) => setTimeout(r, 2));
    await accounts.get('m-1');
    expect(resolver.calls).toEqual(['m-1', 'm-1']);
  });

  it('an unknown name, a failed look-up or bad options from the resolver are errors, and not cached', async () => {
    const resolver = new ScriptedResolver({ 'm-bad': { clientId: 'x' } as SmsAccountOverrides });
    const { sms } = await start({ accounts: { resolve: resolver.resolve } });
    const unknown = await sms
      .forAccount('m-404')
      .send({ to: '0241234567', content: 'x' })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(SmsUnknownAccountError);
    expect((unknown as Error).message).toBe(
      'No SMS account named "m-404": the accounts are default, north, and those accounts.resolve finds (it knows none by that name)',
    );
    await expect(sms.forAccount('m-404').send({ to: '0241234567', content: 'x' })).rejects.toBeInstanceOf(
      SmsUnknownAccountError,
    );
    await expect(sms.forAccount('broken').send({ to: '0241234567', content: 'x' })).rejects.toThrow(
      'merchant database unavailable',
    );
    const bad = await sms
      .forAccount('m-bad')
      .send({ to: '0241234567', content: 'x' })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(HubtelConfigError);
    expect((bad as HubtelConfigError).option).toBe('sms[m-bad].clientSecret');
    await sms
      .forAccount('broken')
      .getBatchStatus('b')
      .catch(() => undefined);
    expect(resolver.calls).toEqual(['m-404', 'm-404', 'broken', 'm-bad', 'broken']);
    expect(fake.requests).toHaveLength(0);
  });

  it('a registered account with a bad option stops the application at bootstrap, naming it', async () => {
    const error = await start({}, [
      SmsModule.registerAccount({ name: 'north', ...NORTH, batchSize: 0 }),
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as HubtelConfigError).option).toBe('sms[north].batchSize');
  });

  it('registerAccountAsync takes the options from a factory with its injections', async () => {
    @Global()
    @Module({ providers: [{ provide: 'NORTH_KEYS', useValue: NORTH }], exports: ['NORTH_KEYS'] })
    class KeysModule {}
    const { sms } = await start({}, [
      KeysModule,
      SmsModule.registerAccountAsync({
        name: 'north',
        inject: ['NORTH_KEYS'],
        useFactory: async (keys: typeof NORTH) => ({ ...keys, senderId: 'NorthAsync' }),
      }),
    ]);
    await sms.forAccount('north').send({ to: '0241234567', content: 'x' });
    expect(fake.requests[0]!.headers.authorization).toBe(basic(NORTH));
    expect(JSON.parse(fake.requests[0]!.rawBody)).toMatchObject({ From: 'NorthAsync' });
  });

  it('refuses a bad name, "default", a registration without forRoot, and two different registrations of one name', async () => {
    for (const name of ['North', 'default', '', 'a b'])
      expect(configOption(() => SmsModule.registerAccount({ name, ...NORTH }))).toBe(
        'sms.registerAccount.name',
      );

    const alone = await Test.createTestingModule({
      imports: [SmsModule.registerAccount({ name: 'north', ...NORTH })],
    })
      .compile()
      .then((ref) => ref.createNestApplication({ logger: false }).init())
      .catch((e: unknown) => e);
    expect(alone).toBeInstanceOf(HubtelConfigError);
    expect((alone as HubtelConfigError).option).toBe('sms[north]');

    // The same registration imported by two modules is one account.
    await start({}, [
      SmsModule.registerAccount({ name: 'north', ...NORTH }),
      SmsModule.registerAccount({ name: 'north', ...NORTH }),
    ]);
    const twice = await start({}, [
      SmsModule.registerAccount({ name: 'north', ...NORTH }),
      SmsModule.registerAccount({ name: 'north', ...NORTH, senderId: 'Other' }),
    ]).catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(HubtelConfigError);
    expect((twice as HubtelConfigError).message).toContain('registered twice');
  });
});

describe('SMS telemetry of named accounts', () => {
  const recorded: HubtelSignal[] = [];
  const recorder: HubtelTelemetry = { record: (signal) => void recorded.push(signal) };

  @Global()
  @Module({ providers: [{ provide: HUBTEL_TELEMETRY, useValue: recorder }], exports: [HUBTEL_TELEMETRY] })
  class TelemetryModule {}

  it("carries the account's name on a named account's SMS signals (none on the default's)", async () => {
    const fake = await FakeHttpServer.start();
    fake.route('POST', '/v1/messages/send', () => ({ status: 200, body: { messageId: 'm-1', status: 0 } }));
    const moduleRef = await Test.createTestingModule({
      imports: [
        TelemetryModule,
        SmsModule.forRoot({ ...MAIN, baseUrl: fake.url, senderId: 'Main' }),
        SmsModule.registerAccount({ name: 'north', ...NORTH }),
      ],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      const sms = app.get(SmsService);
      await sms.send({ to: '0241234567', content: 'a' });
      await sms.forAccount('north').send({ to: '0241234567', content: 'b' });
    } finally {
      await app.close();
      await fake.close();
    }
    expect(recorded.filter((s) => s.kind === 'sms')).toStrictEqual([
      { kind: 'sms', sent: 1, failed: 0, unknownOutcome: 0 },
      { kind: 'sms', sent: 1, failed: 0, unknownOutcome: 0, account: 'north' },
    ]);
    // Each exchange with the platform is still reported, whichever account made it.
    expect(recorded.filter((s) => s.kind === 'outbound')).toHaveLength(2);
  });
});
