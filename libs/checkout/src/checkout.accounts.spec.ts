import { HubtelConfigError } from 'nestjs-hubtel';
import { CHECKOUT_OPTIONS_RECIPE, type CheckoutModuleOptions } from './checkout.options.js';

const resolveCheckoutOptions = (options: unknown) => CHECKOUT_OPTIONS_RECIPE.resolve(options);

const defaults: CheckoutModuleOptions = {
  clientId: 'main-id',
  clientSecret: 'main-secret',
  posSalesId: '11684',
  merchantAccountNumber: '11684',
  publicBaseUrl: 'https://shop.example.com/api',
  returnUrl: 'https://shop.example.com/paid',
  cancellationUrl: 'https://shop.example.com/cancelled',
  timeoutMs: 7_000,
  retry: { maxAttempts: 4, baseDelayMs: 300 },
  baseUrls: { checkout: 'https://checkout.test', status: 'https://status.test' },
  descriptionSpecialCharacters: 'strip',
  verification: { allowOverpayment: true, recheck: { attempts: 2, delayMs: 1_000 } },
  access: {
    pathSecret: 'main-path-secret-0123456789',
    allowedIps: ['10.0.0.0/8'],
    trustedProxies: ['127.0.0.1'],
  },
  reconciliation: { intervalMs: 30_000 },
  invoiceTtlMs: 10 * 24 * 3600_000,
  maxCallbackBodyBytes: 4_096,
};
const module = resolveCheckoutOptions(defaults);
const north = { clientId: 'north-id', clientSecret: 'north-secret' };
const resolve = (overrides: unknown, base: CheckoutModuleOptions = defaults) =>
  CHECKOUT_OPTIONS_RECIPE.resolveAccount('north', base, overrides, resolveCheckoutOptions(base));

function configError(run: () => unknown): HubtelConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof HubtelConfigError) return error;
    throw error;
  }
  throw new Error('no HubtelConfigError');
}

describe('CHECKOUT_OPTIONS_RECIPE.resolveAccount: what a named checkout account inherits', () => {
  it('takes its own keys, never the default POS Sales ID, merchant account number or path secret', () => {
    const o = resolve(north);
    expect(o.credentials).toEqual({ clientId: 'north-id', clientSecret: 'north-secret' });
    expect(o.posSalesId).toBeUndefined();
    expect(o.merchantAccountNumber).toBeUndefined();
    expect(o.access.pathSecret).toBeUndefined();
    // Without a POS Sales ID it has no status check: no confirmation by it.
    expect(o.verification.confirmWithStatusCheck).toBe(false);
    // Its callbacks come on its own segment of the one route.
    expect(o.callbackUrl).toBe('https://shop.example.com/api/hubtel/checkout/callback/north');
  });

  it('inherits time-outs, retry and base URLs (retry field by field), URLs, description handling', () => {
    const o = resolve({
      ...north,
      retry: { maxAttempts: 2 },
      baseUrls: { status: 'https://north-status.test' },
    });
    expect(o.http.timeoutMs).toBe(7_000);
    expect(o.http.retry).toMatchObject({ maxAttempts: 2, baseDelayMs: 300 });
    expect(o.baseUrls).toEqual({ checkout: 'https://checkout.test', status: 'https://north-status.test' });
    expect(o.returnUrl).toBe('https://shop.example.com/paid');
    expect(o.cancellationUrl).toBe('https://shop.example.com/cancelled');
    expect(o.descriptionSpecialCharacters).toBe('strip');
  });

  it('merges verification and access field by field; its own path secret goes into its callback URL', () => {
    const o = resolve({
      ...north,
      posSalesId: '22795',
      verification: { recheck: { attempts: 1 } },
      access: { pathSecret: 'north-path-secret-0123456789' },
    });
    expect(o.verification).toMatchObject({
      allowOverpayment: true,
      confirmWithStatusCheck: true,
      recheck: { attempts: 1, delayMs: 1_000 },
    });
    expect(o.access).toEqual({
      pathSecret: 'north-path-secret-0123456789',
      allowedIps: ['10.0.0.0/8'],
      trustedProxies: ['127.0.0.1'],
    });
    expect(o.callbackUrl).toBe(
      'https://shop.example.com/api/hubtel/checkout/callback/north/north-path-secret-0123456789',
    );
    // The default account's URL is as before.
    expect(module.callbackUrl).toBe(
      'https://shop.example.com/api/hubtel/checkout/callback/main-path-secret-0123456789',
    );
  });

  it("keeps its own callbackUrl; the module-wide settings are the default account's", () => {
    const o = resolve({ ...north, callbackUrl: 'https://proxy.example.com/north-callbacks' });
    expect(o.callbackUrl).toBe('https://proxy.example.com/north-callbacks');
    expect(o.reconciliation).toEqual(module.reconciliation);
    expect(o.handlers).toEqual(module.handlers);
    expect(o.invoiceTtlMs).toBe(module.invoiceTtlMs);
    expect(o.maxCallbackBodyBytes).toBe(4_096);
  });

  it.each([
    ['store', {}],
    ['handlers', { retry: { maxAttempts: 2 } }],
    ['reconciliation', { enabled: false }],
    ['invoiceTtlMs', 60_000],
    ['maxCallbackBodyBytes', 2_048],
    ['statusCheckBudget', { perMinute: 10 }],
    ['accounts', { resolve: () => undefined }],
  ])('refuses the module-wide option %s on a named account, naming it', (option, value) => {
    const error = configError(() => resolve({ ...north, [option]: value }));
    expect(error.option).toBe(`checkout[north].${option}`);
    expect(error.message).toContain('default account only');
  });

  it.each(['clientId', 'clientSecret'])('requires its own %s', (key) => {
    const own: Record<string, unknown> = { ...north };
    delete own[key];
    expect(configError(() => resolve(own)).option).toBe(`checkout[north].${key}`);
  });

  it('names a bad option under the account', () => {
    expect(configError(() => resolve({ ...north, posSalesId: 'not a pos id' })).option).toBe(
      'checkout[north].posSalesId',
    );
    expect(configError(() => resolve({ ...north, access: { pathSecret: 'short' } })).option).toBe(
      'checkout[north].access.pathSecret',
    );
    expect(
      configError(() => resolve({ ...north, verification: { confirmWithStatusCheck: true } })).message,
    ).toContain('needs checkout[north].posSalesId');
  });

  it('checks the resolver option of the default account', () => {
    expect(
      resolveCheckoutOptions({ ...defaults, accounts: { resolve: () => undefined } }).accounts,
    ).toMatchObject({
      cacheTtlMs: 300_000,
    });
    expect(
      configError(() => resolveCheckoutOptions({ ...defaults, accounts: { resolve: 'x' } as never })).option,
    ).toBe('checkout.accounts.resolve');
  });
});
