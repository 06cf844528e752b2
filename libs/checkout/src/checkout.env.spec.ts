import { HubtelConfigError } from 'nestjs-hubtel';
import { checkoutAccountsFromEnv } from './checkout.options.js';

const BASE = {
  HUBTEL_CLIENT_ID: 'main-id',
  HUBTEL_CLIENT_SECRET: 'main-secret',
  HUBTEL_POS_SALES_ID: '11684',
  HUBTEL_MERCHANT_ACCOUNT_NUMBER: '11684',
  HUBTEL_TIMEOUT_MS: '3000',
};
const NORTH = {
  HUBTEL_ACCOUNTS: 'north',
  HUBTEL_NORTH_CLIENT_ID: 'north-id',
  HUBTEL_NORTH_CLIENT_SECRET: 'north-secret',
};

/** The variable a HubtelConfigError names, and its message. */
function failure(env: Record<string, string>): { option: string; message: string } {
  try {
    checkoutAccountsFromEnv(env, { publicBaseUrl: 'https://shop.example.com' });
  } catch (e) {
    if (e instanceof HubtelConfigError) return { option: e.option, message: e.message };
    throw e;
  }
  return { option: 'no error', message: '' };
}

describe('checkoutAccountsFromEnv', () => {
  it('reads the default account and each account of HUBTEL_ACCOUNTS from its own variables (only what it sets)', () => {
    const env = {
      ...BASE,
      HUBTEL_ACCOUNTS: 'north, south-east',
      HUBTEL_NORTH_CLIENT_ID: 'north-id',
      HUBTEL_NORTH_CLIENT_SECRET: 'north-secret',
      HUBTEL_NORTH_POS_SALES_ID: '22795',
      HUBTEL_NORTH_MERCHANT_ACCOUNT_NUMBER: '22795',
      HUBTEL_NORTH_STATUS_URL: 'http://127.0.0.1:9003',
      HUBTEL_NORTH_RETRY_MAX_ATTEMPTS: '2',
      HUBTEL_SOUTH_EAST_CLIENT_ID: 'se-id',
      HUBTEL_SOUTH_EAST_CLIENT_SECRET: 'se-secret',
      // Not a checkout variable: ignored.
      HUBTEL_NORTH_SMS_CLIENT_ID: 'north-sms-id',
    };
    const read = checkoutAccountsFromEnv(env, { publicBaseUrl: 'https://shop.example.com' });
    expect(read).toEqual({
      default: {
        clientId: 'main-id',
        clientSecret: 'main-secret',
        posSalesId: '11684',
        merchantAccountNumber: '11684',
        timeoutMs: 3000,
        publicBaseUrl: 'https://shop.example.com',
      },
      accounts: [
        {
          name: 'north',
          clientId: 'north-id',
          clientSecret: 'north-secret',
          posSalesId: '22795',
          merchantAccountNumber: '22795',
          baseUrls: { status: 'http://127.0.0.1:9003' },
          retry: { maxAttempts: 2 },
        },
        // No POS Sales ID of its own: none (never the default's).
        { name: 'south-east', clientId: 'se-id', clientSecret: 'se-secret' },
      ],
    });
    // A ConfigService-like source reads the same.
    expect(
      checkoutAccountsFromEnv(
        { get: (key: string) => (env as Record<string, string>)[key] },
        { publicBaseUrl: 'https://shop.example.com' },
      ),
    ).toEqual(read);
  });

  it('without HUBTEL_ACCOUNTS there is only the default account', () => {
    expect(checkoutAccountsFromEnv(BASE).accounts).toEqual([]);
  });

  it.each([
    [{ HUBTEL_NORTH_CLIENT_ID: ' ' }, 'HUBTEL_NORTH_CLIENT_ID', 'checkout[north].clientId'],
    [{ HUBTEL_NORTH_CLIENT_SECRET: '' }, 'HUBTEL_NORTH_CLIENT_SECRET', 'checkout[north].clientSecret'],
    [{ HUBTEL_NORTH_POS_SALES_ID: 'pos 1' }, 'HUBTEL_NORTH_POS_SALES_ID', 'checkout[north].posSalesId'],
    [
      { HUBTEL_NORTH_CHECKOUT_URL: 'checkout.test' },
      'HUBTEL_NORTH_CHECKOUT_URL',
      'checkout[north].baseUrls.checkout',
    ],
    [{ HUBTEL_NORTH_TIMEOUT_MS: '0' }, 'HUBTEL_NORTH_TIMEOUT_MS', 'checkout[north].timeoutMs'],
  ])('%j fails naming %s and the option it feeds', (vars, variable, option) => {
    const { option: named, message } = failure({ ...BASE, ...NORTH, ...vars });
    expect(named).toBe(variable);
    expect(message).toContain(`option ${option})`);
  });

  it("reads each account's path secret from its own variable (never the default's)", () => {
    const read = checkoutAccountsFromEnv({
      ...BASE,
      ...NORTH,
      HUBTEL_ACCOUNTS: 'north,south',
      HUBTEL_CHECKOUT_PATH_SECRET: 'main-path-secret-0123456789',
      HUBTEL_NORTH_CHECKOUT_PATH_SECRET: 'north-path-secret-0123456789',
      HUBTEL_SOUTH_CLIENT_ID: 'south-id',
      HUBTEL_SOUTH_CLIENT_SECRET: 'south-secret',
    });
    expect(read.default.access).toEqual({ pathSecret: 'main-path-secret-0123456789' });
    expect(read.accounts.map((account) => [account.name, account.access])).toEqual([
      ['north', { pathSecret: 'north-path-secret-0123456789' }],
      ['south', undefined],
    ]);
    expect(failure({ ...BASE, HUBTEL_CHECKOUT_PATH_SECRET: 'short' })).toMatchObject({
      option: 'HUBTEL_CHECKOUT_PATH_SECRET',
      message: expect.stringContaining('option checkout.access.pathSecret)'),
    });
    expect(failure({ ...BASE, ...NORTH, HUBTEL_NORTH_CHECKOUT_PATH_SECRET: 'a/b' }).option).toBe(
      'HUBTEL_NORTH_CHECKOUT_PATH_SECRET',
    );
  });

  it('refuses a bad HUBTEL_ACCOUNTS, naming it', () => {
    expect(failure({ ...BASE, ...NORTH, HUBTEL_ACCOUNTS: 'North' }).option).toBe('HUBTEL_ACCOUNTS');
    expect(failure({ ...BASE, ...NORTH, HUBTEL_ACCOUNTS: 'default' }).option).toBe('HUBTEL_ACCOUNTS');
  });
});
