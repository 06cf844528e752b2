import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { dropUndefined, hubtelHttpOptionsFromEnv, readHubtelEnv } from './hubtel-env.js';

describe('readHubtelEnv', () => {
  const vars = {
    HUBTEL_CLIENT_ID: 'pay-id',
    HUBTEL_CLIENT_SECRET: 'pay-secret',
    HUBTEL_SMS_CLIENT_ID: ' sms-id ',
    HUBTEL_SMS_CLIENT_SECRET: 'sms-secret',
    HUBTEL_SMS_URL: 'http://127.0.0.1:1234',
    HUBTEL_POS_SALES_ID: '11684',
    HUBTEL_TIMEOUT_MS: '2500',
    HUBTEL_RETRY_MAX_ATTEMPTS: '5',
    HUBTEL_DEFAULT_COUNTRY_CODE: '234',
    HUBTEL_CHECKOUT_URL: '',
    UNRELATED: 'x',
  };

  it('reads a record (process.env) and a getter (ConfigService.get) the same way', () => {
    const fromRecord = readHubtelEnv(vars);
    const fromGetter = readHubtelEnv((key) => (vars as Record<string, string | undefined>)[key]);
    expect(fromRecord).toEqual(fromGetter);
    // A ConfigService-like object (anything with get(key)) works as is.
    expect(
      readHubtelEnv({ get: (key: string) => (vars as Record<string, string | undefined>)[key] }),
    ).toEqual(fromRecord);
    expect(fromRecord).toEqual({
      clientId: 'pay-id',
      clientSecret: 'pay-secret',
      smsClientId: 'sms-id',
      smsClientSecret: 'sms-secret',
      smsUrl: 'http://127.0.0.1:1234',
      posSalesId: '11684',
      timeoutMs: 2500,
      retryMaxAttempts: 5,
      defaultCountryCode: '234',
    });
  });

  it('accepts numbers from a typed getter and fails on a non-number naming the variable', () => {
    expect(readHubtelEnv((k) => (k === 'HUBTEL_TIMEOUT_MS' ? 300 : undefined)).timeoutMs).toBe(300);
    let err: unknown;
    try {
      readHubtelEnv({ HUBTEL_TIMEOUT_MS: '15s' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HubtelConfigError);
    expect((err as HubtelConfigError).option).toBe('HUBTEL_TIMEOUT_MS');
  });

  it('hubtelHttpOptionsFromEnv picks the transport settings only', () => {
    expect(hubtelHttpOptionsFromEnv(readHubtelEnv(vars))).toEqual({
      timeoutMs: 2500,
      retry: { maxAttempts: 5 },
      defaultCountryCode: '234',
    });
    expect(hubtelHttpOptionsFromEnv({})).toEqual({});
  });

  it('dropUndefined keeps defined values only', () => {
    expect(dropUndefined({ a: 1, b: undefined, c: null })).toEqual({ a: 1, c: null });
  });
});
