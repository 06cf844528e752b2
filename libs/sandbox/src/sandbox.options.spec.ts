import { HubtelConfigError } from 'nestjs-hubtel';
import { resolveSandboxOptions } from './sandbox.options.js';
import type { HubtelSandboxOptions } from './sandbox.option-types.js';

const failure = (options: unknown): string => {
  try {
    resolveSandboxOptions(options as HubtelSandboxOptions);
  } catch (e) {
    if (e instanceof HubtelConfigError) return `${e.option}: ${e.message.split('": ')[1]}`;
    throw e;
  }
  return 'no error';
};

describe('resolveSandboxOptions', () => {
  it.each([
    [{ port: 70_000 }, 'port: must be at most 65535'],
    [{ recordLimit: 0 }, 'recordLimit: must be at least 1'],
    [{ sms: { rate: -1 } }, 'sms.rate: must be at least 0'],
    [{ checkout: { minAmount: -1 } }, 'checkout.minAmount: must be at least 0'],
    [{ posSalesId: 'a b' }, 'posSalesId: must be 1-64 letters, digits, "-" or "_"'],
    // The pair's field is named, its value never echoed.
    [
      { credentials: { sms: { clientId: 'i', clientSecret: '' } } },
      'credentials.sms.clientSecret: must not be empty',
    ],
    [
      { credentials: { api: { clientId: 'a:b', clientSecret: 's' } } },
      'credentials.api.clientId: must not be empty nor contain ":" (Basic auth separator)',
    ],
  ])('%j fails with %s', (options, expected) => {
    expect(failure(options)).toBe(expected);
  });

  it('keeps the fields the DTO does not check, and fills the defaults', () => {
    const resolved = resolveSandboxOptions({ checkout: { merchantName: 'Shop', chargeRate: 0.02 } });
    expect(resolved.checkout.merchantName).toBe('Shop');
    expect(resolved.checkout.chargeRate).toBe(0.02);
    expect(resolved.port).toBe(0);
    expect(resolved.dashboard).toBe(true);
  });
});
