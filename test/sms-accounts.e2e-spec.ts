import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { HubtelAuthenticationError } from 'nestjs-hubtel';
import { HubtelMetricsModule } from 'nestjs-hubtel/metrics';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import {
  InjectSms,
  SmsModule,
  SmsService,
  SmsUnknownAccountError,
  smsAccountsFromEnv,
  type SmsAccountOverrides,
  type SmsModuleOptions,
  type SmsSender,
} from 'nestjs-hubtel/sms';
import { CaptureLogger } from './support/capture-logger.js';

/**
 * Several SMS accounts in one app, over real HTTP: each account is its own sandbox instance started
 * with its own SMS keys (three Hubtel SMS accounts: the default one, `north` registered in code,
 * `m-1042` found by the app's resolver). What each sandbox records proves where a message went,
 * with which sender; each sandbox refuses the other accounts' keys, as the platform does.
 */
const KEYS = {
  main: { clientId: 'main-sms-id', clientSecret: 'main-SECRET-1111' },
  north: { clientId: 'north-sms-id', clientSecret: 'north-SECRET-2222' },
  merchant: { clientId: 'm1042-sms-id', clientSecret: 'm1042-SECRET-3333' },
};
const FAST = { timeoutMs: 5_000, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } };

@Injectable()
class Notifier {
  constructor(
    @InjectSms('north') readonly north: SmsSender,
    @InjectSms() readonly main: SmsService,
  ) {}
}

describe('Several SMS accounts (e2e, one sandbox per account)', () => {
  let main: HubtelSandbox;
  let north: HubtelSandbox;
  let merchant: HubtelSandbox;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    [main, north, merchant] = await Promise.all([
      HubtelSandbox.start({ credentials: { sms: KEYS.main } }),
      HubtelSandbox.start({ credentials: { sms: KEYS.north } }),
      HubtelSandbox.start({ credentials: { sms: KEYS.merchant } }),
    ]);
  });
  afterAll(() => Promise.all([main, north, merchant].map((s) => s.stop())));
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    for (const sandbox of [main, north, merchant]) sandbox.reset();
  });

  /** The merchant database of the app: what `accounts.resolve` looks names up in. */
  const merchants = (): Record<string, SmsAccountOverrides> => ({
    'm-1042': { ...KEYS.merchant, baseUrl: merchant.baseUrls().sms, senderId: 'Merchant42' },
  });

  interface Setup {
    defaults?: Partial<SmsModuleOptions>;
    northAccount?: SmsAccountOverrides;
    resolve?: (name: string) => Promise<SmsAccountOverrides | undefined>;
    logger?: CaptureLogger;
    registry?: Registry;
  }

  async function boot(setup: Setup = {}) {
    const lookups: string[] = [];
    const resolve =
      setup.resolve ??
      (async (name: string) => {
        lookups.push(name);
        return merchants()[name];
      });
    @Module({
      imports: [
        SmsModule.registerAccount({
          name: 'north',
          ...(setup.northAccount ?? { ...KEYS.north, baseUrl: north.baseUrls().sms, senderId: 'NorthShop' }),
        }),
      ],
      providers: [Notifier],
    })
    class ShopModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        HubtelMetricsModule.forRoot({ registry: setup.registry ?? new Registry() }),
        SmsModule.forRoot({
          ...KEYS.main,
          baseUrl: main.baseUrls().sms,
          senderId: 'MainShop',
          ...FAST,
          accounts: { resolve },
          ...setup.defaults,
          isGlobal: true,
        }),
        ShopModule,
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: setup.logger ?? false });
    await app.init();
    apps.push(app);
    return { sms: app.get(SmsService), notifier: app.get(Notifier), lookups };
  }

  const sent = (sandbox: HubtelSandbox) =>
    sandbox.messages().map((m) => ({ from: m.from, to: m.msisdn, content: m.content }));

  it('forAccount, @InjectSms and a resolved account each send at their own account, with their own sender', async () => {
    const { sms, notifier, lookups } = await boot();
    await sms.send({ to: '0241234567', content: 'default account' });
    await sms.forAccount('north').send({ to: '0241234567', content: 'north by forAccount' });
    const batch = await notifier.north.sendBatch({
      recipients: ['0201000001', '0201000002'],
      content: 'north by @InjectSms',
    });
    expect(batch.counts).toMatchObject({ sent: 2, failed: 0 });
    await sms.forAccount('m-1042').send({ to: '0241234567', content: 'merchant by resolver' });
    await sms.forAccount('m-1042').send({ to: '0241234568', content: 'merchant again' });

    expect(sent(main)).toEqual([{ from: 'MainShop', to: '233241234567', content: 'default account' }]);
    expect(sent(north)).toEqual([
      { from: 'NorthShop', to: '233241234567', content: 'north by forAccount' },
      { from: 'NorthShop', to: '233201000001', content: 'north by @InjectSms' },
      { from: 'NorthShop', to: '233201000002', content: 'north by @InjectSms' },
    ]);
    expect(sent(merchant)).toEqual([
      { from: 'Merchant42', to: '233241234567', content: 'merchant by resolver' },
      { from: 'Merchant42', to: '233241234568', content: 'merchant again' },
    ]);
    // The resolver was asked once (cached), and never for a name registered in code.
    expect(lookups).toEqual(['m-1042']);
    // Status look-ups go to the account's own platform too.
    const northId = north.messages()[0]!.messageId;
    expect(await sms.forAccount('north').getMessageStatus(northId)).toMatchObject({ messageId: northId });
    await expect(sms.getMessageStatus(northId)).rejects.toMatchObject({ httpStatus: 404 });
  });

  it("a named account inherits the default account's options it does not set (batch size, sender id)", async () => {
    const { sms } = await boot({
      defaults: { batchSize: 2 },
      northAccount: { ...KEYS.north, baseUrl: north.baseUrls().sms },
    });
    const result = await sms.forAccount('north').sendBatch({
      recipients: ['0201000001', '0201000002', '0201000003', '0201000004', '0201000005'],
      content: 'inherited',
    });
    expect(result.counts).toMatchObject({ sent: 5, batches: 3 });
    const messages = north.messages();
    expect(new Set(messages.map((m) => m.batchId)).size).toBe(3);
    expect(new Set(messages.map((m) => m.from))).toEqual(new Set(['MainShop']));
    expect(main.messages()).toHaveLength(0);
  });

  it("each account's platform refuses another account's keys: nothing is sent", async () => {
    const { sms } = await boot({
      // Misconfigured on purpose: north's address with the default account's keys...
      northAccount: { ...KEYS.main, baseUrl: north.baseUrls().sms, senderId: 'NorthShop' },
      // ...and the merchant's address with north's keys.
      resolve: async () => ({ ...KEYS.north, baseUrl: merchant.baseUrls().sms }),
    });
    await expect(sms.forAccount('north').send({ to: '0241234567', content: 'x' })).rejects.toBeInstanceOf(
      HubtelAuthenticationError,
    );
    const batch = await sms
      .forAccount('m-1042')
      .sendBatch({ recipients: ['0241234567'], content: 'x' })
      .catch((e: unknown) => e);
    expect(batch).toMatchObject({ code: 'HUBTEL_AUTHENTICATION_FAILED' });
    expect(north.messages()).toHaveLength(0);
    expect(merchant.messages()).toHaveLength(0);
    // The default account, with its own keys at its own platform, is not affected.
    await sms.send({ to: '0241234567', content: 'still fine' });
    expect(main.messages()).toHaveLength(1);
  });

  it('an unknown account is a typed error naming the configured ones; nothing is sent anywhere', async () => {
    const { sms, lookups } = await boot();
    const error = await sms
      .forAccount('west')
      .send({ to: '0241234567', content: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SmsUnknownAccountError);
    expect(error).toMatchObject({ code: 'HUBTEL_UNKNOWN_ACCOUNT', knownAccounts: ['default', 'north'] });
    expect((error as Error).message).toContain('the accounts are default, north');
    expect(lookups).toEqual(['west']);
    for (const sandbox of [main, north, merchant]) expect(sandbox.messages()).toHaveLength(0);
  });

  it('logs name the account and never a key; the SMS metric counts recipients per account', async () => {
    const logger = new CaptureLogger();
    const registry = new Registry();
    const { sms } = await boot({ logger, registry });
    await sms.sendBatch({ recipients: ['0241234567'], content: 'a' });
    await sms.forAccount('north').sendBatch({ recipients: ['0241234567', '0241234568'], content: 'b' });
    await sms.forAccount('m-1042').sendBatch({ recipients: ['0241234567'], content: 'c' });

    const done = logger.lines.filter((line) => line.message.startsWith('sendBatch done'));
    expect(done.map((line) => line.context)).toEqual([
      'SmsService',
      'SmsService[north]',
      'SmsService[m-1042]',
    ]);
    const text = logger.text();
    for (const pair of Object.values(KEYS)) {
      expect(text).not.toContain(pair.clientSecret);
      expect(text).not.toContain(Buffer.from(`${pair.clientId}:${pair.clientSecret}`).toString('base64'));
    }

    const metric = registry.getSingleMetric('hubtel_sms_recipients_total')!;
    const values = (await metric.get()).values.filter((v) => v.labels.outcome === 'sent');
    const byAccount = Object.fromEntries(values.map((v) => [v.labels.account, v.value]));
    expect(byAccount).toEqual({ default: 1, north: 2, 'm-1042': 1 });
  });

  it('accounts from the environment: HUBTEL_ACCOUNTS and HUBTEL_<NAME>_SMS_* feed forRoot and registerAccount', async () => {
    const config = smsAccountsFromEnv({
      HUBTEL_SMS_CLIENT_ID: KEYS.main.clientId,
      HUBTEL_SMS_CLIENT_SECRET: KEYS.main.clientSecret,
      HUBTEL_SMS_URL: main.baseUrls().sms,
      HUBTEL_SMS_SENDER_ID: 'MainEnv',
      HUBTEL_RETRY_MAX_ATTEMPTS: '1',
      HUBTEL_ACCOUNTS: 'north',
      HUBTEL_NORTH_SMS_CLIENT_ID: KEYS.north.clientId,
      HUBTEL_NORTH_SMS_CLIENT_SECRET: KEYS.north.clientSecret,
      HUBTEL_NORTH_SMS_URL: north.baseUrls().sms,
      HUBTEL_NORTH_SMS_SENDER_ID: 'NorthEnv',
    });
    const moduleRef = await Test.createTestingModule({
      imports: [
        SmsModule.forRoot(config.default),
        ...config.accounts.map((account) => SmsModule.registerAccount(account)),
      ],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    apps.push(app);
    const sms = app.get(SmsService);
    await sms.send({ to: '0241234567', content: 'from env, default' });
    await sms.forAccount('north').send({ to: '0241234567', content: 'from env, north' });
    expect(sent(main)).toEqual([{ from: 'MainEnv', to: '233241234567', content: 'from env, default' }]);
    expect(sent(north)).toEqual([{ from: 'NorthEnv', to: '233241234567', content: 'from env, north' }]);
  });
});
