import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { declareCredentials, HubtelHttpOptions } from './hubtel-options.dto.js';
import { resolveDeclaredOptions } from './hubtel-options.declared.js';
import { assertOptionsObject, resolveUrl } from './hubtel-options.validation.js';

const Credentials = declareCredentials();
const resolveCredentials = (value: object, scope: string) =>
  resolveDeclaredOptions(Credentials, value, scope);
const resolveHttpOptions = (value: object, scope: string) =>
  resolveDeclaredOptions(HubtelHttpOptions, value, scope);

function configError(fn: () => unknown): HubtelConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof HubtelConfigError) return e;
    throw e;
  }
  throw new Error('expected a HubtelConfigError');
}

describe('option validation', () => {
  it('names the option and never echoes a secret', () => {
    const err = configError(() => resolveCredentials({ clientId: 'id', clientSecret: '' }, 'sms'));
    expect(err.option).toBe('sms.clientSecret');
    expect(err.code).toBe('HUBTEL_CONFIG_INVALID');
    expect(err.message).toBe('Invalid nestjs-hubtel option "sms.clientSecret": must not be empty');
    expect(configError(() => resolveCredentials({ clientSecret: 'x' }, 'sms')).option).toBe('sms.clientId');
    const typed = configError(() => resolveCredentials({ clientId: 'id', clientSecret: 42 }, 'checkout'));
    expect(typed.message).toMatch(/"checkout.clientSecret": must be a string, got a number/);
    expect(
      configError(() => resolveCredentials({ clientId: 'a:b', clientSecret: 'x' }, 'sms')).message,
    ).toMatch(/must not be empty nor contain ":"/);
    expect(resolveCredentials({ clientId: 'id', clientSecret: 'pw' }, 'sms')).toEqual({
      clientId: 'id',
      clientSecret: 'pw',
    });
  });

  it('URLs must be absolute http(s), without credentials; trailing slashes are dropped', () => {
    expect(resolveUrl('https://sms.hubtel.com/', 'sms.baseUrl')).toBe('https://sms.hubtel.com');
    expect(resolveUrl('http://127.0.0.1:8080/base//', 'x')).toBe('http://127.0.0.1:8080/base');
    expect(configError(() => resolveUrl('sms.hubtel.com', 'sms.baseUrl')).message).toMatch(
      /"sms.baseUrl": must be an absolute http\(s\) URL/,
    );
    expect(configError(() => resolveUrl('ftp://x', 'a')).message).toMatch(/http or https, not ftp/);
    const withPassword = configError(() => resolveUrl('https://id:topsecret@x.com', 'a'));
    expect(withPassword.message).not.toContain('topsecret');
    expect(configError(() => resolveUrl('', 'a')).option).toBe('a');
    expect(configError(() => resolveUrl(undefined, 'a')).message).toMatch(/got nothing/);
  });

  it('the transport options fill their declared defaults and check each field', () => {
    expect(resolveHttpOptions({}, 'sms')).toEqual({
      timeoutMs: 15000,
      retry: { maxAttempts: 3, baseDelayMs: 250, maxDelayMs: 5000 },
      defaultCountryCode: '233',
    });
    expect(
      resolveHttpOptions(
        { timeoutMs: 100, retry: { maxAttempts: 1, baseDelayMs: 5 }, defaultCountryCode: '234' },
        'sms',
      ),
    ).toEqual({
      timeoutMs: 100,
      retry: { maxAttempts: 1, baseDelayMs: 5, maxDelayMs: 5000 },
      defaultCountryCode: '234',
    });
    expect(configError(() => resolveHttpOptions({ timeoutMs: 0 }, 'sms')).option).toBe('sms.timeoutMs');
    expect(configError(() => resolveHttpOptions({ retry: { maxAttempts: 0 } }, 'sms')).option).toBe(
      'sms.retry.maxAttempts',
    );
    expect(configError(() => resolveHttpOptions({ retry: 3 } as never, 'sms')).option).toBe('sms.retry');
    expect(configError(() => resolveHttpOptions({ defaultCountryCode: '+233' }, 'sms')).option).toBe(
      'sms.defaultCountryCode',
    );
  });

  it('the options object must be an object', () => {
    expect(configError(() => assertOptionsObject(null, 'sms')).message).toMatch(
      /"sms": must be an object, got null/,
    );
  });
});
