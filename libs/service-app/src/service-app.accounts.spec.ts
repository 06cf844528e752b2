import { HubtelConfigError } from 'nestjs-hubtel';
import { serviceAppAccountsFromEnv, serviceAppOptionsFromEnv } from './service-app.options.js';
import { SERVICE_APP_OPTIONS_RECIPE, type ServiceAppModuleOptions } from './service-app.options.js';

const NORTH_CHECK = { clientId: 'north-id', clientSecret: 'north-secret', posSalesId: '2000001' };

const DEFAULTS: ServiceAppModuleOptions = {
  callbackUrl: 'http://127.0.0.1:9055',
  callbackCredentials: { clientId: 'cb-id', clientSecret: 'cb-secret' },
  callbackTimeoutMs: 4_000,
  statusCheck: {
    clientId: 'main-id',
    clientSecret: 'main-secret',
    posSalesId: '2000000',
    url: 'http://127.0.0.1:9100',
    timeoutMs: 3_000,
  },
  verification: { recheckForMs: 60_000, amountTolerance: 0.5 },
  sessionTtlMs: 120_000,
  messages: { busy: 'Busy, try again' },
  ussd: { moreLabel: 'Next' },
  access: { pathSecret: 'main-path-secret-0123456789', allowedIps: ['52.50.116.54'] },
  maxPendingSessions: 10,
};

/** The option a HubtelConfigError names. */
function failure(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    if (e instanceof HubtelConfigError) return e.option;
    throw e;
  }
  return 'no error';
}

describe('SERVICE_APP_OPTIONS_RECIPE.resolveAccount: what a named account inherits', () => {
  it('inherits time-outs, TTLs, verification, messages, USSD, the callback URL and the allow-list; never the credentials or the path secret', () => {
    const north = SERVICE_APP_OPTIONS_RECIPE.resolveAccount('north', DEFAULTS, {
      statusCheck: NORTH_CHECK,
      callbackCredentials: { clientId: 'north-cb', clientSecret: 'north-cb-secret' },
      verification: { amountTolerance: 0 },
      messages: { error: 'North failed' },
    });
    expect(north.statusCheck).toEqual({
      credentials: { clientId: 'north-id', clientSecret: 'north-secret' },
      posSalesId: '2000001',
      // Address and time-out are no credentials: the default's.
      url: 'http://127.0.0.1:9100',
      timeoutMs: 3_000,
    });
    expect(north.callbackCredentials).toEqual({ clientId: 'north-cb', clientSecret: 'north-cb-secret' });
    expect(north.callbackUrl).toBe('http://127.0.0.1:9055');
    expect(north.callbackTimeoutMs).toBe(4_000);
    expect(north.sessionTtlMs).toBe(120_000);
    expect(north.verification).toMatchObject({ enabled: true, recheckForMs: 60_000, amountTolerance: 0 });
    expect(north.messages).toMatchObject({ busy: 'Busy, try again', error: 'North failed' });
    expect(north.ussd.moreLabel).toBe('Next');
    expect(north.access).toEqual({ allowedIps: ['52.50.116.54'] });
  });

  it('requires its own status check and callback credentials where the default account has them', () => {
    expect(failure(() => SERVICE_APP_OPTIONS_RECIPE.resolveAccount('north', DEFAULTS, {}))).toBe(
      'serviceApp[north].statusCheck',
    );
    expect(
      failure(() =>
        SERVICE_APP_OPTIONS_RECIPE.resolveAccount('north', DEFAULTS, { statusCheck: NORTH_CHECK }),
      ),
    ).toBe('serviceApp[north].callbackCredentials');
    // Where the default has none, neither is needed, nor inherited.
    const plain = SERVICE_APP_OPTIONS_RECIPE.resolveAccount(
      'north',
      { callbackUrl: 'http://127.0.0.1:9055' },
      {},
    );
    expect(plain.statusCheck).toBeUndefined();
    expect(plain.verification.enabled).toBe(false);
  });

  it("refuses the module's options on a named account, and names bad ones under serviceApp[name]", () => {
    const own = { statusCheck: NORTH_CHECK, callbackCredentials: { clientId: 'a', clientSecret: 'b' } };
    for (const option of [
      'store',
      'flows',
      'shutdownGraceMs',
      'statusCheckBudget',
      'maxPendingSessions',
      'accounts',
      'callbackRetry',
      'fulfillmentRetry',
    ])
      expect(
        failure(() => SERVICE_APP_OPTIONS_RECIPE.resolveAccount('north', DEFAULTS, { ...own, [option]: {} })),
      ).toBe(`serviceApp[north].${option}`);
    expect(
      failure(() =>
        SERVICE_APP_OPTIONS_RECIPE.resolveAccount('north', DEFAULTS, { ...own, sessionTtlMs: -1 }),
      ),
    ).toBe('serviceApp[north].sessionTtlMs');
    expect(
      failure(() =>
        SERVICE_APP_OPTIONS_RECIPE.resolveAccount('north', DEFAULTS, {
          ...own,
          statusCheck: { ...NORTH_CHECK, url: 'not a url' },
        }),
      ),
    ).toBe('serviceApp[north].statusCheck.url');
  });
  it("takes the default status check's URL and time-out only with the account's own key pair, never the callback credentials' fields", () => {
    const north = SERVICE_APP_OPTIONS_RECIPE.resolveAccount('north', DEFAULTS, {
      statusCheck: { ...NORTH_CHECK, timeoutMs: 1_000 },
      callbackCredentials: { clientId: 'north-cb', clientSecret: 'north-cb-secret' },
    });
    expect(north.statusCheck).toMatchObject({ url: 'http://127.0.0.1:9100', timeoutMs: 1_000 });
    expect(
      failure(() =>
        SERVICE_APP_OPTIONS_RECIPE.resolveAccount('north', DEFAULTS, {
          statusCheck: NORTH_CHECK,
          callbackCredentials: { clientId: 'north-cb' },
        }),
      ),
    ).toBe('serviceApp[north].callbackCredentials.clientSecret');
  });
});

describe('serviceAppAccountsFromEnv', () => {
  const BASE = {
    HUBTEL_CLIENT_ID: 'main-id',
    HUBTEL_CLIENT_SECRET: 'main-secret',
    HUBTEL_POS_SALES_ID: '2000000',
    HUBTEL_STATUS_URL: 'http://127.0.0.1:9100',
  };

  it('reads the default account and each account of HUBTEL_ACCOUNTS from its own variables', () => {
    const env = {
      ...BASE,
      HUBTEL_ACCOUNTS: 'north,south-east',
      HUBTEL_NORTH_CLIENT_ID: 'north-id',
      HUBTEL_NORTH_CLIENT_SECRET: 'north-secret',
      HUBTEL_NORTH_POS_SALES_ID: '2000001',
      HUBTEL_NORTH_CALLBACK_URL: 'http://127.0.0.1:9056',
      HUBTEL_SOUTH_EAST_CLIENT_ID: 'se-id',
      HUBTEL_SOUTH_EAST_CLIENT_SECRET: 'se-secret',
      HUBTEL_SOUTH_EAST_POS_SALES_ID: '2000002',
      HUBTEL_SOUTH_EAST_STATUS_URL: 'http://127.0.0.1:9101',
    };
    const read = serviceAppAccountsFromEnv(env);
    expect(read).toEqual({
      default: {
        statusCheck: {
          clientId: 'main-id',
          clientSecret: 'main-secret',
          posSalesId: '2000000',
          url: 'http://127.0.0.1:9100',
        },
      },
      accounts: [
        { name: 'north', callbackUrl: 'http://127.0.0.1:9056', statusCheck: NORTH_CHECK },
        {
          name: 'south-east',
          statusCheck: {
            clientId: 'se-id',
            clientSecret: 'se-secret',
            posSalesId: '2000002',
            url: 'http://127.0.0.1:9101',
          },
        },
      ],
    });
    expect(serviceAppAccountsFromEnv({ get: (key: string) => (env as Record<string, string>)[key] })).toEqual(
      read,
    );
    expect(serviceAppAccountsFromEnv(BASE).accounts).toEqual([]);
  });

  it("reads the callback credentials and the path secret, each account's from its own variables", () => {
    const read = serviceAppAccountsFromEnv({
      ...BASE,
      HUBTEL_CALLBACK_CLIENT_ID: 'main-cb',
      HUBTEL_CALLBACK_CLIENT_SECRET: 'main-cb-secret',
      HUBTEL_SERVICE_APP_PATH_SECRET: 'main-path-secret-0123456789',
      HUBTEL_ACCOUNTS: 'north',
      HUBTEL_NORTH_CLIENT_ID: 'north-id',
      HUBTEL_NORTH_CLIENT_SECRET: 'north-secret',
      HUBTEL_NORTH_POS_SALES_ID: '2000001',
      HUBTEL_NORTH_CALLBACK_CLIENT_ID: 'north-cb',
      HUBTEL_NORTH_CALLBACK_CLIENT_SECRET: 'north-cb-secret',
      HUBTEL_NORTH_SERVICE_APP_PATH_SECRET: 'north-path-secret-0123456789',
    });
    expect(read.default).toMatchObject({
      callbackCredentials: { clientId: 'main-cb', clientSecret: 'main-cb-secret' },
      access: { pathSecret: 'main-path-secret-0123456789' },
    });
    expect(read.accounts[0]).toMatchObject({
      callbackCredentials: { clientId: 'north-cb', clientSecret: 'north-cb-secret' },
      access: { pathSecret: 'north-path-secret-0123456789' },
    });
    // Overrides join the section read from the environment field by field.
    expect(
      serviceAppOptionsFromEnv(
        { HUBTEL_SERVICE_APP_PATH_SECRET: 'main-path-secret-0123456789' },
        { access: { allowedIps: ['10.0.0.0/8'] } },
      ).access,
    ).toEqual({ pathSecret: 'main-path-secret-0123456789', allowedIps: ['10.0.0.0/8'] });
    // The default has callback credentials: an account without its own is refused, naming its variable.
    expect(
      failure(() =>
        serviceAppAccountsFromEnv({
          ...BASE,
          HUBTEL_CALLBACK_CLIENT_ID: 'main-cb',
          HUBTEL_CALLBACK_CLIENT_SECRET: 'main-cb-secret',
          HUBTEL_ACCOUNTS: 'north',
          HUBTEL_NORTH_CLIENT_ID: 'north-id',
          HUBTEL_NORTH_CLIENT_SECRET: 'north-secret',
          HUBTEL_NORTH_POS_SALES_ID: '2000001',
          HUBTEL_NORTH_CALLBACK_CLIENT_ID: 'north-cb',
        }),
      ),
    ).toBe('HUBTEL_NORTH_CALLBACK_CLIENT_SECRET');
  });

  it("names the account's variable that is missing or bad", () => {
    const north = {
      ...BASE,
      HUBTEL_ACCOUNTS: 'north',
      HUBTEL_NORTH_CLIENT_ID: 'n',
      HUBTEL_NORTH_CLIENT_SECRET: 's',
    };
    expect(failure(() => serviceAppAccountsFromEnv(north))).toBe('HUBTEL_NORTH_POS_SALES_ID');
    // No status check on the default account: none needed, but one started must be complete.
    expect(
      failure(() => serviceAppAccountsFromEnv({ HUBTEL_ACCOUNTS: 'north', HUBTEL_NORTH_CLIENT_ID: 'n' })),
    ).toBe('HUBTEL_NORTH_CLIENT_SECRET');
    expect(serviceAppAccountsFromEnv({ HUBTEL_ACCOUNTS: 'north' }).accounts).toEqual([{ name: 'north' }]);
    // A URL alone starts no status check.
    expect(
      serviceAppAccountsFromEnv({
        HUBTEL_ACCOUNTS: 'north',
        HUBTEL_NORTH_STATUS_URL: 'http://127.0.0.1:9101',
      }).accounts,
    ).toEqual([{ name: 'north' }]);
    expect(
      failure(() =>
        serviceAppAccountsFromEnv({
          ...north,
          HUBTEL_NORTH_POS_SALES_ID: '1',
          HUBTEL_NORTH_CALLBACK_URL: 'nope',
        }),
      ),
    ).toBe('HUBTEL_NORTH_CALLBACK_URL');
    expect(failure(() => serviceAppAccountsFromEnv({ ...BASE, HUBTEL_ACCOUNTS: 'North' }))).toBe(
      'HUBTEL_ACCOUNTS',
    );
  });
});
