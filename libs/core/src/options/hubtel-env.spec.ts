import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { dropUndefined, readEnvNumber, readEnvValue } from './hubtel-env.js';

describe('reading settings', () => {
  const vars: Record<string, string | undefined> = {
    HUBTEL_SMS_CLIENT_ID: ' sms-id ',
    HUBTEL_TIMEOUT_MS: '2500',
    HUBTEL_CHECKOUT_URL: '',
  };

  it('reads a record (process.env), a getter and a ConfigService-like object the same way', () => {
    for (const source of [vars, (key: string) => vars[key], { get: (key: string) => vars[key] }]) {
      expect(readEnvValue(source, 'HUBTEL_SMS_CLIENT_ID')).toBe('sms-id'); // trimmed
      expect(readEnvValue(source, 'HUBTEL_CHECKOUT_URL')).toBeUndefined(); // blank is unset
      expect(readEnvValue(source, 'HUBTEL_NOTHING')).toBeUndefined();
      expect(readEnvNumber(source, 'HUBTEL_TIMEOUT_MS')).toBe(2500);
    }
  });

  it('accepts numbers from a typed getter and fails on a non-number naming the variable', () => {
    expect(readEnvNumber((k) => (k === 'HUBTEL_TIMEOUT_MS' ? 300 : undefined), 'HUBTEL_TIMEOUT_MS')).toBe(
      300,
    );
    let err: unknown;
    try {
      readEnvNumber({ HUBTEL_TIMEOUT_MS: '15s' }, 'HUBTEL_TIMEOUT_MS');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HubtelConfigError);
    expect((err as HubtelConfigError).option).toBe('HUBTEL_TIMEOUT_MS');
  });

  it('dropUndefined keeps defined values only', () => {
    expect(dropUndefined({ a: 1, b: undefined, c: null })).toEqual({ a: 1, c: null });
  });
});
