import { HubtelConfigError } from 'nestjs-hubtel';
import { smsAccountsFromEnv } from './sms.options.js';

const BASE = {
  HUBTEL_SMS_CLIENT_ID: 'main-id',
  HUBTEL_SMS_CLIENT_SECRET: 'main-secret',
  HUBTEL_SMS_SENDER_ID: 'MainShop',
  HUBTEL_TIMEOUT_MS: '3000',
};

/** The variable a HubtelConfigError names, and its message. */
function failure(env: Record<string, string>): { option: string; message: string } {
  try {
    smsAccountsFromEnv(env);
  } catch (e) {
    if (e instanceof HubtelConfigError) return { option: e.option, message: e.message };
    throw e;
  }
  return { option: 'no error', message: '' };
}

describe('smsAccountsFromEnv', () => {
  it('reads the default account and each account of HUBTEL_ACCOUNTS from its own variables (only what it sets)', () => {
    const env = {
      ...BASE,
      HUBTEL_ACCOUNTS: ' north , south-east,',
      HUBTEL_NORTH_SMS_CLIENT_ID: 'north-id',
      HUBTEL_NORTH_SMS_CLIENT_SECRET: 'north-secret',
      HUBTEL_NORTH_SMS_SENDER_ID: 'NorthShop',
      HUBTEL_NORTH_SMS_URL: 'http://127.0.0.1:9002',
      HUBTEL_NORTH_RETRY_MAX_ATTEMPTS: '2',
      HUBTEL_SOUTH_EAST_SMS_CLIENT_ID: 'se-id',
      HUBTEL_SOUTH_EAST_SMS_CLIENT_SECRET: 'se-secret',
      // Not an SMS variable of this module's accounts: ignored.
      HUBTEL_NORTH_CLIENT_ID: 'north-checkout-id',
    };
    const read = smsAccountsFromEnv(env);
    expect(read).toEqual({
      default: { clientId: 'main-id', clientSecret: 'main-secret', senderId: 'MainShop', timeoutMs: 3000 },
      accounts: [
        {
          name: 'north',
          clientId: 'north-id',
          clientSecret: 'north-secret',
          senderId: 'NorthShop',
          baseUrl: 'http://127.0.0.1:9002',
          retry: { maxAttempts: 2 },
        },
        { name: 'south-east', clientId: 'se-id', clientSecret: 'se-secret' },
      ],
    });
    // A ConfigService-like source reads the same.
    expect(smsAccountsFromEnv({ get: (key: string) => (env as Record<string, string>)[key] })).toEqual(read);
  });

  it('without HUBTEL_ACCOUNTS there is only the default account', () => {
    expect(smsAccountsFromEnv(BASE).accounts).toEqual([]);
    expect(smsAccountsFromEnv({ ...BASE, HUBTEL_ACCOUNTS: ' ' }).accounts).toEqual([]);
  });

  it.each([
    // Blank is unset (an empty .env line).
    [{ HUBTEL_NORTH_SMS_CLIENT_ID: ' ' }, 'HUBTEL_NORTH_SMS_CLIENT_ID', 'sms[north].clientId'],
    [{ HUBTEL_NORTH_SMS_CLIENT_SECRET: '' }, 'HUBTEL_NORTH_SMS_CLIENT_SECRET', 'sms[north].clientSecret'],
    [{ HUBTEL_NORTH_SMS_URL: 'sms.hubtel.com' }, 'HUBTEL_NORTH_SMS_URL', 'sms[north].baseUrl'],
    [{ HUBTEL_NORTH_SMS_SENDER_ID: 'x'.repeat(20) }, 'HUBTEL_NORTH_SMS_SENDER_ID', 'sms[north].senderId'],
    [{ HUBTEL_NORTH_TIMEOUT_MS: '0' }, 'HUBTEL_NORTH_TIMEOUT_MS', 'sms[north].timeoutMs'],
    [
      { HUBTEL_NORTH_RETRY_MAX_ATTEMPTS: '0' },
      'HUBTEL_NORTH_RETRY_MAX_ATTEMPTS',
      'sms[north].retry.maxAttempts',
    ],
  ])('%j fails naming %s and the option it feeds', (vars, variable, option) => {
    const pair = {
      HUBTEL_NORTH_SMS_CLIENT_ID: 'north-id',
      HUBTEL_NORTH_SMS_CLIENT_SECRET: 'north-secret-value',
    };
    const { option: named, message } = failure({ ...BASE, HUBTEL_ACCOUNTS: 'north', ...pair, ...vars });
    expect(named).toBe(variable);
    expect(message).toContain(`option ${option})`);
    expect(message).not.toContain('north-secret-value');
    expect(message).not.toContain('main-secret');
  });

  it("a value that is not a number names the account's variable", () => {
    expect(
      failure({
        ...BASE,
        HUBTEL_ACCOUNTS: 'north',
        HUBTEL_NORTH_SMS_CLIENT_ID: 'i',
        HUBTEL_NORTH_SMS_CLIENT_SECRET: 's',
        HUBTEL_NORTH_TIMEOUT_MS: 'soon',
      }).option,
    ).toBe('HUBTEL_NORTH_TIMEOUT_MS');
  });

  it.each([
    ['North', /"North" is not an account name/],
    ['default', /"default" is the account each module.s forRoot configures/],
    ['sms', /"sms" cannot name an account in the environment/],
    ['retry', /"retry" cannot name an account/],
    ['north,north', /"north" is listed twice/],
    ['a-b,a_b', /"a_b" is listed twice, or its variables \(HUBTEL_A_B_\.\.\.\)/],
  ])('HUBTEL_ACCOUNTS=%s fails naming HUBTEL_ACCOUNTS', (list, problem) => {
    const { option, message } = failure({ ...BASE, HUBTEL_ACCOUNTS: list });
    expect(option).toBe('HUBTEL_ACCOUNTS');
    expect(message).toMatch(problem);
  });

  it("an account's error is reported only once the default account reads well", () => {
    expect(failure({ HUBTEL_ACCOUNTS: 'north' }).option).toBe('HUBTEL_SMS_CLIENT_ID');
  });
});
