import { HubtelConfigError, MemoryStore } from 'nestjs-hubtel';
import { SERVICE_APP_DEFAULT_MESSAGES, SERVICE_APP_DEFAULTS } from './service-app.constants.js';
import { serviceAppOptionsFromEnv } from './service-app.options.js';
import { SERVICE_APP_OPTIONS_RECIPE, type ServiceAppModuleOptions } from './service-app.options.js';

const resolveServiceAppOptions = (options?: ServiceAppModuleOptions) =>
  SERVICE_APP_OPTIONS_RECIPE.resolve(options);

function problem(options: unknown): string {
  try {
    resolveServiceAppOptions(options as never);
  } catch (error) {
    expect(error).toBeInstanceOf(HubtelConfigError);
    return (error as HubtelConfigError).option;
  }
  throw new Error('expected a HubtelConfigError');
}

describe('resolveServiceAppOptions', () => {
  it('fills the defaults: platform callback URL, 1 h callback deadline, 4 s step budget, back "0", cart required', () => {
    const resolved = resolveServiceAppOptions({});
    expect(resolved).toMatchObject({
      callbackUrl: 'https://gs-callback.hubtel.com:9055',
      callbackRetry: { deadlineMs: 3_600_000 },
      stepBudgetMs: 4_000,
      backInputs: ['0'],
      requireCart: true,
      sessionTtlMs: SERVICE_APP_DEFAULTS.sessionTtlMs,
      defaultCountryCode: '233',
      flows: [],
    });
    expect(resolved).not.toHaveProperty('shutdownGraceMs');
    expect(resolved.stepBudgetMs).toBeLessThan(5_000);
    expect(resolveServiceAppOptions(undefined).callbackUrl).toBe(resolved.callbackUrl);
  });

  it('takes overrides', () => {
    const store = new MemoryStore({ sweepIntervalMs: 0 });
    const resolved = resolveServiceAppOptions({
      callbackUrl: 'http://127.0.0.1:9/',
      callbackCredentials: { clientId: 'id', clientSecret: 'secret' },
      backInput: ['#', ' * '],
      requireCart: false,
      store,
      messages: { busy: 'Hold on' },
      fulfillmentRetry: { maxAttempts: 2 },
    });
    expect(resolved).toMatchObject({
      callbackUrl: 'http://127.0.0.1:9',
      backInputs: ['#', '*'],
      requireCart: false,
      store,
      fulfillmentRetry: { maxAttempts: 2 },
    });
    expect(resolved.messages.busy).toBe('Hold on');
    expect(resolved.messages.sessionExpired).toBe(
      'Your session has expired. Please dial again to start over.',
    );
  });

  it('names the bad option', () => {
    expect(problem('x')).toBe('serviceApp');
    expect(problem({ callbackUrl: 'ftp://x' })).toBe('serviceApp.callbackUrl');
    expect(problem({ callbackUrl: 'https://user:pw@x' })).toBe('serviceApp.callbackUrl');
    expect(problem({ callbackCredentials: { clientId: 'a' } })).toBe(
      'serviceApp.callbackCredentials.clientSecret',
    );
    expect(problem({ stepBudgetMs: 0 })).toBe('serviceApp.stepBudgetMs');
    expect(problem({ stepBudgetMs: '4000' })).toBe('serviceApp.stepBudgetMs');
    expect(problem({ sessionTtlMs: -1 })).toBe('serviceApp.sessionTtlMs');
    expect(problem({ callbackRetry: { baseDelayMs: 100, maxDelayMs: 10 } })).toBe(
      'serviceApp.callbackRetry.maxDelayMs',
    );
    expect(problem({ callbackRetry: { deadlineMs: 0 } })).toBe('serviceApp.callbackRetry.deadlineMs');
    expect(problem({ fulfillmentRetry: { maxAttempts: 0 } })).toBe('serviceApp.fulfillmentRetry.maxAttempts');
    expect(problem({ backInput: '' })).toBe('serviceApp.backInput');
    expect(problem({ backInput: [1] })).toBe('serviceApp.backInput');
    expect(problem({ requireCart: 'yes' })).toBe('serviceApp.requireCart');
    expect(problem({ store: {} })).toBe('serviceApp.store');
    expect(problem({ messages: { nope: 'x' } })).toBe('serviceApp.messages.nope');
    expect(problem({ messages: { busy: 3 } })).toBe('serviceApp.messages.busy');
    expect(problem({ flows: 'x' })).toBe('serviceApp.flows');
    expect(problem({ defaultCountryCode: '+233' })).toBe('serviceApp.defaultCountryCode');
  });

  it('reads the callback URL and country code from the environment', () => {
    expect(
      serviceAppOptionsFromEnv({
        HUBTEL_CALLBACK_URL: 'http://localhost:4010',
        HUBTEL_DEFAULT_COUNTRY_CODE: '234',
      }),
    ).toEqual({
      callbackUrl: 'http://localhost:4010',
      defaultCountryCode: '234',
    });
    expect(serviceAppOptionsFromEnv({})).toEqual({});
  });

  it('turns verification on with a status check, and reads one from the environment when all three variables are set', () => {
    const statusCheck = { clientId: 'id', clientSecret: 'secret', posSalesId: '11684' };
    expect(resolveServiceAppOptions({}).verification.enabled).toBe(false);
    expect(resolveServiceAppOptions({ statusCheck })).toMatchObject({
      statusCheck: {
        credentials: { clientId: 'id', clientSecret: 'secret' },
        posSalesId: '11684',
        url: 'https://api-txnstatus.hubtel.com',
      },
      verification: {
        enabled: true,
        recheckForMs: 600_000,
        recheckDelay: { baseDelayMs: 2_000, maxDelayMs: 60_000 },
        amountTolerance: 0,
      },
      sessionStartTtlMs: 120_000,
      maxPendingSessions: 50_000,
    });
    expect(
      resolveServiceAppOptions({ statusCheck, verification: { enabled: false } }).verification.enabled,
    ).toBe(false);
    // The start TTL never outlives the session TTL.
    expect(resolveServiceAppOptions({ sessionTtlMs: 60_000 }).sessionStartTtlMs).toBe(60_000);
    const env = {
      HUBTEL_CLIENT_ID: 'id',
      HUBTEL_CLIENT_SECRET: 'secret',
      HUBTEL_POS_SALES_ID: '11684',
      HUBTEL_STATUS_URL: 'http://127.0.0.1:9',
    };
    expect(serviceAppOptionsFromEnv(env)).toEqual({
      statusCheck: { ...statusCheck, url: 'http://127.0.0.1:9' },
    });
    expect(serviceAppOptionsFromEnv({ ...env, HUBTEL_POS_SALES_ID: '' })).toEqual({});
  });

  it('serviceAppOptionsFromEnv names the variable of a bad value, and the option it feeds', () => {
    const env = {
      HUBTEL_CLIENT_ID: 'id',
      HUBTEL_CLIENT_SECRET: 'secret-value',
      HUBTEL_POS_SALES_ID: '11684',
    };
    for (const [key, value, path] of [
      ['HUBTEL_CALLBACK_URL', 'gs-callback.hubtel.com', 'serviceApp.callbackUrl'],
      ['HUBTEL_POS_SALES_ID', '116 84', 'serviceApp.statusCheck.posSalesId'],
      ['HUBTEL_STATUS_URL', 'ftp://status.test', 'serviceApp.statusCheck.url'],
      ['HUBTEL_DEFAULT_COUNTRY_CODE', 'GH!', 'serviceApp.defaultCountryCode'],
    ] as const) {
      let error: unknown;
      try {
        serviceAppOptionsFromEnv({ ...env, [key]: value });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(HubtelConfigError);
      expect((error as HubtelConfigError).option).toBe(key);
      expect((error as Error).message).toContain(`option ${path})`);
      expect((error as Error).message).not.toContain('secret-value');
    }
  });

  it('names a bad status-check, verification or session-bound option', () => {
    const statusCheck = { clientId: 'id', clientSecret: 'secret', posSalesId: '11684' };
    expect(problem({ statusCheck: 'x' })).toBe('serviceApp.statusCheck');
    expect(problem({ statusCheck: { ...statusCheck, posSalesId: undefined } })).toBe(
      'serviceApp.statusCheck.posSalesId',
    );
    expect(problem({ statusCheck: { ...statusCheck, posSalesId: 'a/b' } })).toBe(
      'serviceApp.statusCheck.posSalesId',
    );
    expect(problem({ statusCheck: { ...statusCheck, clientSecret: '' } })).toBe(
      'serviceApp.statusCheck.clientSecret',
    );
    expect(problem({ statusCheck: { ...statusCheck, url: 'ftp://x' } })).toBe('serviceApp.statusCheck.url');
    expect(problem({ verification: { enabled: true } })).toBe('serviceApp.verification.enabled');
    expect(problem({ statusCheck, verification: { recheckForMs: 3_600_001 } })).toBe(
      'serviceApp.verification.recheckForMs',
    );
    expect(
      problem({ statusCheck, verification: { recheckDelay: { baseDelayMs: 100, maxDelayMs: 10 } } }),
    ).toBe('serviceApp.verification.recheckDelay.maxDelayMs');
    expect(problem({ statusCheck, verification: { amountTolerance: -1 } })).toBe(
      'serviceApp.verification.amountTolerance',
    );
    expect(problem({ sessionStartTtlMs: 0 })).toBe('serviceApp.sessionStartTtlMs');
    expect(problem({ sessionTtlMs: 60_000, sessionStartTtlMs: 120_000 })).toBe(
      'serviceApp.sessionStartTtlMs',
    );
    expect(problem({ maxPendingSessions: 0 })).toBe('serviceApp.maxPendingSessions');
    // Declared on the field (atMost), applied by core: a Unicode screen never holds more.
    expect(problem({ ussd: { screenSize: 100, unicodeScreenSize: 120 } })).toBe(
      'serviceApp.ussd.unicodeScreenSize',
    );
    expect(
      resolveServiceAppOptions({ ussd: { screenSize: 100, unicodeScreenSize: 100 } }).ussd.unicodeScreenSize,
    ).toBe(100);
  });

  it('takes every known message, keeps the default of one given as null or undefined, and names an unknown one', () => {
    const all = Object.fromEntries(
      Object.keys(SERVICE_APP_DEFAULT_MESSAGES).map((key) => [key, `mine ${key}`]),
    );
    expect(resolveServiceAppOptions({ messages: all }).messages).toEqual(all);
    const kept = resolveServiceAppOptions({ messages: { busy: null, error: undefined } as never }).messages;
    expect(kept).toEqual(SERVICE_APP_DEFAULT_MESSAGES);
    let unknown: unknown;
    try {
      resolveServiceAppOptions({ messages: { bussy: 'x' } as never });
    } catch (error) {
      unknown = error;
    }
    expect((unknown as HubtelConfigError).option).toBe('serviceApp.messages.bussy');
    expect((unknown as Error).message).toMatch(/is not a known field \(sessionExpired, busy, .*pattern\)$/);
    expect(problem({ messages: 'x' })).toBe('serviceApp.messages');
  });

  it('takes the retry, status-check and verification sections, defaults filled in', () => {
    const resolved = resolveServiceAppOptions({
      callbackRetry: { baseDelayMs: 10, deadlineMs: 60_000 },
      fulfillmentRetry: { maxAttempts: 100, maxDelayMs: 5_000 },
      statusCheck: {
        clientId: 'id',
        clientSecret: 's',
        posSalesId: 'P-1',
        timeoutMs: 600_000,
        url: 'http://s.test/',
      },
      verification: { recheckForMs: 0, recheckDelay: { baseDelayMs: 5 }, amountTolerance: 0.5 },
      callbackCredentials: { clientId: 'cb', clientSecret: 'pw', extra: 1 } as never,
      defaultCountryCode: '1',
      shutdownGraceMs: 0,
    });
    expect(resolved).toMatchObject({
      callbackRetry: { baseDelayMs: 10, maxDelayMs: 300_000, deadlineMs: 60_000 },
      fulfillmentRetry: { maxAttempts: 100, baseDelayMs: 1_000, maxDelayMs: 5_000 },
      statusCheck: {
        credentials: { clientId: 'id', clientSecret: 's' },
        posSalesId: 'P-1',
        timeoutMs: 600_000,
        url: 'http://s.test',
      },
      verification: {
        enabled: true,
        recheckForMs: 0,
        recheckDelay: { baseDelayMs: 5, maxDelayMs: 60_000 },
        amountTolerance: 0.5,
      },
      defaultCountryCode: '1',
      shutdownGraceMs: 0,
    });
    expect(resolved.callbackCredentials).toEqual({ clientId: 'cb', clientSecret: 'pw' });
    // A base above the default cap raises the cap to it.
    const slow = resolveServiceAppOptions({ fulfillmentRetry: { baseDelayMs: 90_000 } }).fulfillmentRetry;
    expect([slow.baseDelayMs, slow.maxDelayMs]).toEqual([90_000, 90_000]);
  });

  it('names each bad field of the sections, never echoing a secret', () => {
    const statusCheck = { clientId: 'id', clientSecret: 'secret', posSalesId: '11684' };
    expect(problem({ callbackRetry: 'x' })).toBe('serviceApp.callbackRetry');
    expect(problem({ callbackRetry: { baseDelayMs: 0 } })).toBe('serviceApp.callbackRetry.baseDelayMs');
    expect(problem({ fulfillmentRetry: { maxAttempts: 101 } })).toBe(
      'serviceApp.fulfillmentRetry.maxAttempts',
    );
    expect(problem({ fulfillmentRetry: { baseDelayMs: 100, maxDelayMs: 10 } })).toBe(
      'serviceApp.fulfillmentRetry.maxDelayMs',
    );
    expect(problem({ statusCheck: { ...statusCheck, posSalesId: 'p'.repeat(65) } })).toBe(
      'serviceApp.statusCheck.posSalesId',
    );
    expect(problem({ statusCheck: { ...statusCheck, timeoutMs: 600_001 } })).toBe(
      'serviceApp.statusCheck.timeoutMs',
    );
    expect(problem({ statusCheck: { ...statusCheck, clientId: undefined } })).toBe(
      'serviceApp.statusCheck.clientId',
    );
    expect(problem({ callbackCredentials: 'x' })).toBe('serviceApp.callbackCredentials');
    expect(problem({ verification: 'x' })).toBe('serviceApp.verification');
    expect(problem({ statusCheck, verification: { enabled: 'yes' } })).toBe(
      'serviceApp.verification.enabled',
    );
    expect(problem({ statusCheck, verification: { recheckForMs: 1.5 } })).toBe(
      'serviceApp.verification.recheckForMs',
    );
    expect(problem({ statusCheck, verification: { recheckDelay: { maxDelayMs: 0 } } })).toBe(
      'serviceApp.verification.recheckDelay.maxDelayMs',
    );
    expect(problem({ statusCheck, verification: { amountTolerance: '1' } })).toBe(
      'serviceApp.verification.amountTolerance',
    );
    expect(problem({ shutdownGraceMs: 600_001 })).toBe('serviceApp.shutdownGraceMs');
    expect(() =>
      resolveServiceAppOptions({ statusCheck: { ...statusCheck, clientSecret: 42 as never } }),
    ).toThrow(
      'Invalid nestjs-hubtel option "serviceApp.statusCheck.clientSecret": must be a string, got a number',
    );
  });

  it("takes statusCheckBudget.perMinute with core's rules, and leaves the instance's budget alone without it", () => {
    expect(resolveServiceAppOptions({}).statusCheckBudget).toEqual({});
    expect(resolveServiceAppOptions({ statusCheckBudget: {} }).statusCheckBudget).toEqual({});
    expect(resolveServiceAppOptions({ statusCheckBudget: { perMinute: 120 } }).statusCheckBudget).toEqual({
      perMinute: 120,
    });
    expect(problem({ statusCheckBudget: { perMinute: 0 } })).toBe('serviceApp.statusCheckBudget.perMinute');
    expect(problem({ statusCheckBudget: { perMinute: 1.5 } })).toBe('serviceApp.statusCheckBudget.perMinute');
    expect(problem({ statusCheckBudget: { perMinute: 100_001 } })).toBe(
      'serviceApp.statusCheckBudget.perMinute',
    );
    expect(problem({ statusCheckBudget: 600 })).toBe('serviceApp.statusCheckBudget');
  });

  it.each([
    [
      'leaseMs',
      30_000,
      /BullMQ's stalled-job check \(HubtelBullmqModule lockDurationMs \/ stalledIntervalMs\)/,
    ],
    [
      'sweepIntervalMs',
      500,
      /BullMQ's stalled-job check \(HubtelBullmqModule lockDurationMs \/ stalledIntervalMs\)/,
    ],
    ['recoverOnBootstrap', false, /jobs on Redis run on BullMQ, which keeps unfinished jobs in Redis/],
  ])('refuses %s (removed in 0.2.0), saying what replaced it', (option, value, replacement) => {
    const refused = () => resolveServiceAppOptions({ shutdownGraceMs: 0, [option]: value } as never);
    expect(problem({ [option]: value })).toBe(`serviceApp.${option}`);
    expect(refused).toThrow(
      new RegExp(`^Invalid nestjs-hubtel option "serviceApp\\.${option}": was removed in 0\\.2\\.0: `),
    );
    expect(refused).toThrow(replacement);
  });
});
