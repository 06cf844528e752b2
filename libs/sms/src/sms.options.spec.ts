import { HubtelConfigError } from 'nestjs-hubtel';
import { smsOptionsFromEnv } from './sms.options.js';
import { SMS_OPTIONS_RECIPE, smsTransportConfig, type SmsModuleOptions } from './sms.options.js';

const resolveSmsOptions = (options: SmsModuleOptions) => SMS_OPTIONS_RECIPE.resolve(options);

const option = (options: unknown): string => {
  try {
    resolveSmsOptions(options as SmsModuleOptions);
  } catch (e) {
    if (e instanceof HubtelConfigError) return e.option;
    throw e;
  }
  return 'no error';
};

describe('resolveSmsOptions', () => {
  it('fills the defaults', () => {
    expect(resolveSmsOptions({ clientId: 'id', clientSecret: 'secret' })).toEqual({
      credentials: { clientId: 'id', clientSecret: 'secret' },
      baseUrl: 'https://sms.hubtel.com',
      senderId: undefined,
      maxSenderLength: 11,
      maxContentLength: undefined,
      batchSize: 100,
      concurrency: 4,
      http: {
        timeoutMs: 15000,
        retry: { maxAttempts: 3, baseDelayMs: 250, maxDelayMs: 5000 },
        defaultCountryCode: '233',
      },
    });
  });

  it.each([
    [undefined, 'sms'],
    [{ clientSecret: 's' }, 'sms.clientId'],
    [{ clientId: 'i', clientSecret: '  ' }, 'sms.clientSecret'],
    [{ clientId: 'i', clientSecret: 's', baseUrl: 'not a url' }, 'sms.baseUrl'],
    [{ clientId: 'i', clientSecret: 's', senderId: 'TwelveChars!' }, 'sms.senderId'],
    [{ clientId: 'i', clientSecret: 's', batchSize: 0 }, 'sms.batchSize'],
    [{ clientId: 'i', clientSecret: 's', batchSize: 100_000 }, 'sms.batchSize'],
    [{ clientId: 'i', clientSecret: 's', concurrency: 2.5 }, 'sms.concurrency'],
    [{ clientId: 'i', clientSecret: 's', timeoutMs: -1 }, 'sms.timeoutMs'],
    [{ clientId: 'i', clientSecret: 's', retry: { maxAttempts: '3' } }, 'sms.retry.maxAttempts'],
    [
      { clientId: 'i', clientSecret: 's', retry: { baseDelayMs: 100, maxDelayMs: 10 } },
      'sms.retry.maxDelayMs',
    ],
    [{ clientId: 'i', clientSecret: 's', maxContentLength: 0 }, 'sms.maxContentLength'],
    [{ clientId: 'i', clientSecret: 's', defaultCountryCode: 233 }, 'sms.defaultCountryCode'],
  ])('%j fails naming %s', (options, name) => {
    expect(option(options)).toBe(name);
  });

  it('a longer maxSenderLength allows a longer default senderId', () => {
    expect(
      resolveSmsOptions({ clientId: 'i', clientSecret: 's', senderId: '233241234567', maxSenderLength: 15 })
        .senderId,
    ).toBe('233241234567');
  });

  it('the transport gets the SMS base URL and the SMS pair only', () => {
    const config = smsTransportConfig(
      resolveSmsOptions({ clientId: 'i', clientSecret: 's', baseUrl: 'http://127.0.0.1:9/' }),
    );
    expect(config.baseUrls).toEqual({ sms: 'http://127.0.0.1:9' });
    expect(config.credentials).toEqual({ sms: { clientId: 'i', clientSecret: 's' } });
  });
});

describe('smsOptionsFromEnv', () => {
  const env = {
    HUBTEL_SMS_CLIENT_ID: 'sms-id',
    HUBTEL_SMS_CLIENT_SECRET: 'sms-secret',
    HUBTEL_CLIENT_ID: 'pay-id',
    HUBTEL_CLIENT_SECRET: 'pay-secret',
    HUBTEL_SMS_URL: 'http://127.0.0.1:1234',
    HUBTEL_SMS_SENDER_ID: 'Shop',
    HUBTEL_TIMEOUT_MS: '3000',
  };

  it('uses the SMS pair (never the checkout pair), the SMS URL and transport settings; overrides win', () => {
    expect(smsOptionsFromEnv(env, { batchSize: 50, senderId: undefined })).toEqual({
      clientId: 'sms-id',
      clientSecret: 'sms-secret',
      baseUrl: 'http://127.0.0.1:1234',
      senderId: 'Shop',
      timeoutMs: 3000,
      batchSize: 50,
    });
    expect(smsOptionsFromEnv((key) => (env as Record<string, string>)[key]).clientId).toBe('sms-id');
  });

  it('names the missing variable', () => {
    expect(() => smsOptionsFromEnv({ HUBTEL_CLIENT_ID: 'x', HUBTEL_CLIENT_SECRET: 'y' })).toThrow(
      /HUBTEL_SMS_CLIENT_ID/,
    );
    expect(() => smsOptionsFromEnv({ HUBTEL_SMS_CLIENT_ID: 'x' })).toThrow(/HUBTEL_SMS_CLIENT_SECRET/);
    expect(smsOptionsFromEnv({}, { clientId: 'a', clientSecret: 'b' }).clientId).toBe('a');
  });

  it('names the variable of a bad value, and the option it feeds', () => {
    const pair = { HUBTEL_SMS_CLIENT_ID: 'sms-id', HUBTEL_SMS_CLIENT_SECRET: 'sms-secret-value' };
    for (const [key, value, path] of [
      ['HUBTEL_SMS_CLIENT_SECRET', '', 'sms.clientSecret'],
      ['HUBTEL_SMS_URL', 'sms.hubtel.com', 'sms.baseUrl'],
      ['HUBTEL_SMS_SENDER_ID', 'x'.repeat(40), 'sms.senderId'],
      ['HUBTEL_TIMEOUT_MS', '0', 'sms.timeoutMs'],
    ] as const) {
      let error: unknown;
      try {
        smsOptionsFromEnv({ ...pair, [key]: value });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(HubtelConfigError);
      expect((error as HubtelConfigError).option).toBe(key);
      expect((error as Error).message).toContain(`option ${path})`);
      expect((error as Error).message).not.toContain('sms-secret-value');
    }
    // A bad override is the override's problem: left to the module's check, which names the option.
    expect(smsOptionsFromEnv(pair, { baseUrl: 'nope' }).baseUrl).toBe('nope');
  });
});
