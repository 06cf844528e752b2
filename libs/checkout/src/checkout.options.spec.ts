import { HubtelConfigError } from 'nestjs-hubtel';
import {
  CHECKOUT_OPTIONS_RECIPE,
  checkoutOptionsFromEnv,
  type CheckoutRouteInfo,
} from './checkout.options.js';

const resolveCheckoutOptions = (options: unknown, route?: CheckoutRouteInfo) =>
  CHECKOUT_OPTIONS_RECIPE.resolve(options, undefined, route);

const base = { clientId: 'id', clientSecret: 'secret' };

describe('resolveCheckoutOptions', () => {
  it('fills production defaults; status checks, confirmation and reconciliation off without posSalesId', () => {
    const o = resolveCheckoutOptions(base);
    expect(o.baseUrls).toEqual({
      checkout: 'https://payproxyapi.hubtel.com',
      status: 'https://api-txnstatus.hubtel.com',
    });
    expect(o.verification).toEqual({
      amountTolerance: { absolute: 0, percent: 0 },
      allowOverpayment: false,
      confirmWithStatusCheck: false,
      // Seconds-scale: a status check lagging behind its callback is asked again after 2, 4 and
      // 8 s, and one invoice's checks are at least 10 s apart (6 a minute, however many copies).
      recheck: { attempts: 3, delayMs: 2000, maxDelayMs: 10_000, minIntervalMs: 10_000 },
    });
    expect(o.reconciliation).toMatchObject({
      enabled: false,
      delayMs: 300_000,
      intervalMs: 60_000,
      maxIntervalMs: 3_600_000,
      giveUpAfterMs: 86_400_000,
      maxChecks: 8,
    });
    expect(o.descriptionSpecialCharacters).toBe('reject');
    expect(o.callbackUrl).toBeUndefined();
  });

  it('turns confirmation and reconciliation on by default when posSalesId is set', () => {
    const o = resolveCheckoutOptions({ ...base, posSalesId: '11684' });
    expect(o.verification.confirmWithStatusCheck).toBe(true);
    expect(o.reconciliation.enabled).toBe(true);
    expect(
      resolveCheckoutOptions({ ...base, posSalesId: '1', verification: { confirmWithStatusCheck: false } })
        .verification.confirmWithStatusCheck,
    ).toBe(false);
  });

  it('builds the default callback URL from publicBaseUrl, the route and the path secret', () => {
    expect(resolveCheckoutOptions({ ...base, publicBaseUrl: 'https://shop.test/api/' }).callbackUrl).toBe(
      'https://shop.test/api/hubtel/checkout/callback',
    );
    expect(
      resolveCheckoutOptions(
        { ...base, publicBaseUrl: 'https://shop.test' },
        { path: '/pay/cb/', disabled: false },
      ).callbackUrl,
    ).toBe('https://shop.test/pay/cb');
    expect(
      resolveCheckoutOptions({
        ...base,
        publicBaseUrl: 'https://shop.test',
        access: { pathSecret: 'abcdefghijklmnop' },
      }).callbackUrl,
    ).toBe('https://shop.test/hubtel/checkout/callback/abcdefghijklmnop');
    // An explicit callbackUrl wins; a disabled route has no default.
    expect(
      resolveCheckoutOptions({
        ...base,
        publicBaseUrl: 'https://shop.test',
        callbackUrl: 'https://x.test/cb',
      }).callbackUrl,
    ).toBe('https://x.test/cb');
    expect(
      resolveCheckoutOptions({ ...base, publicBaseUrl: 'https://shop.test' }, { path: 'x', disabled: true })
        .callbackUrl,
    ).toBeUndefined();
  });

  it.each([
    [{ clientId: undefined }, 'checkout.clientId'],
    [{ clientId: 'a:b' }, 'checkout.clientId'],
    [{ posSalesId: 'a/b' }, 'checkout.posSalesId'],
    [{ returnUrl: 'javascript:alert(1)' }, 'checkout.returnUrl'],
    [{ callbackUrl: 'https://u:p@x.test' }, 'checkout.callbackUrl'],
    [{ verification: 'yes' }, 'checkout.verification'],
    [
      { verification: { amountTolerance: { absolute: -1 } } },
      'checkout.verification.amountTolerance.absolute',
    ],
    [{ verification: { allowOverpayment: 'true' } }, 'checkout.verification.allowOverpayment'],
    [{ verification: { recheck: 3 } }, 'checkout.verification.recheck'],
    [{ verification: { recheck: { attempts: -1 } } }, 'checkout.verification.recheck.attempts'],
    [{ verification: { recheck: { attempts: 1.5 } } }, 'checkout.verification.recheck.attempts'],
    [{ verification: { recheck: { delayMs: 120_000 } } }, 'checkout.verification.recheck.delayMs'],
    [
      { verification: { recheck: { delayMs: 5000, maxDelayMs: 1000 } } },
      'checkout.verification.recheck.maxDelayMs',
    ],
    // Ten waits of a minute do not fit in the confirmation job's lease.
    [
      { verification: { recheck: { attempts: 10, delayMs: 60_000, maxDelayMs: 60_000 } } },
      'checkout.verification.recheck',
    ],
    [{ posSalesId: '1', reconciliation: { intervalMs: 0 } }, 'checkout.reconciliation.intervalMs'],
    [
      { posSalesId: '1', reconciliation: { intervalMs: 1000, maxIntervalMs: 10 } },
      'checkout.reconciliation.maxIntervalMs',
    ],
    [{ posSalesId: '1', reconciliation: { concurrency: 0 } }, 'checkout.reconciliation.concurrency'],
    [{ posSalesId: '1', reconciliation: { maxChecks: 0 } }, 'checkout.reconciliation.maxChecks'],
    [{ posSalesId: '1', reconciliation: { maxChecks: 2.5 } }, 'checkout.reconciliation.maxChecks'],
    [{ posSalesId: '1', reconciliation: { giveUpAfterMs: 40 * 24 * 3600_000 } }, 'checkout.invoiceTtlMs'],
    [{ handlers: { retry: { maxAttempts: Infinity } } }, 'checkout.handlers.retry.maxAttempts'],
    [{ handlers: { retry: { baseDelayMs: 100, maxDelayMs: 10 } } }, 'checkout.handlers.retry.maxDelayMs'],
    [{ maxCallbackBodyBytes: 10 }, 'checkout.maxCallbackBodyBytes'],
    [{ timeoutMs: -1 }, 'checkout.timeoutMs'],
    [{ merchantAccountNumber: '  ' }, 'checkout.merchantAccountNumber'],
    [{ merchantAccountNumber: 'm'.repeat(65) }, 'checkout.merchantAccountNumber'],
    [{ posSalesId: 'p'.repeat(65) }, 'checkout.posSalesId'],
    [{ posSalesId: 11684 }, 'checkout.posSalesId'],
    [{ descriptionSpecialCharacters: 'escape' }, 'checkout.descriptionSpecialCharacters'],
    [{ handlers: 'x' }, 'checkout.handlers'],
    [{ handlers: { retry: 3 } }, 'checkout.handlers.retry'],
    [{ handlers: { retry: { maxAttempts: 1001 } } }, 'checkout.handlers.retry.maxAttempts'],
    [{ handlers: { retry: { baseDelayMs: -1 } } }, 'checkout.handlers.retry.baseDelayMs'],
    [{ handlers: { retry: { maxAttempts: Infinity, deadlineMs: 0 } } }, 'checkout.handlers.retry.deadlineMs'],
    [{ handlers: { recordTtlMs: 0 } }, 'checkout.handlers.recordTtlMs'],
    [{ handlers: { shutdownGraceMs: 600_001 } }, 'checkout.handlers.shutdownGraceMs'],
    [{ invoiceTtlMs: 59_999 }, 'checkout.invoiceTtlMs'],
    [{ maxCallbackBodyBytes: 10 * 1024 * 1024 + 1 }, 'checkout.maxCallbackBodyBytes'],
    [{ statusCheckBudget: { perMinute: 0 } }, 'checkout.statusCheckBudget.perMinute'],
    [{ statusCheckBudget: { perMinute: 1.5 } }, 'checkout.statusCheckBudget.perMinute'],
    [{ statusCheckBudget: { perMinute: 100_001 } }, 'checkout.statusCheckBudget.perMinute'],
    [{ statusCheckBudget: 600 }, 'checkout.statusCheckBudget'],
    [{ verification: { recheck: { minIntervalMs: -1 } } }, 'checkout.verification.recheck.minIntervalMs'],
    [{ verification: { recheck: { minIntervalMs: 60_001 } } }, 'checkout.verification.recheck.minIntervalMs'],
    // Removed: said so rather than ignored (a user relying on it must learn the new rule).
    [{ verification: { recheck: { roundsPerHour: 3 } } }, 'checkout.verification.recheck.roundsPerHour'],
  ])('refuses %j naming %s', (patch, option) => {
    let error: unknown;
    try {
      resolveCheckoutOptions({ ...base, ...patch });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as HubtelConfigError).option).toBe(option);
    expect((error as Error).message).not.toContain('secret');
  });

  it('names the rule broken in the message, not the value', () => {
    const message = (patch: object) => {
      try {
        resolveCheckoutOptions({ ...base, ...patch });
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('expected a HubtelConfigError');
    };
    expect(message({ posSalesId: 'a/b' })).toBe(
      'Invalid nestjs-hubtel option "checkout.posSalesId": must contain only letters, digits, "-" and "_"',
    );
    expect(message({ descriptionSpecialCharacters: 'escape' })).toBe(
      'Invalid nestjs-hubtel option "checkout.descriptionSpecialCharacters": must be one of reject, strip',
    );
    expect(message({ handlers: { retry: { maxAttempts: Infinity } } })).toMatch(
      /"checkout.handlers.retry.maxAttempts": Infinity needs handlers.retry.deadlineMs$/,
    );
    expect(message({ handlers: { retry: { baseDelayMs: 100, maxDelayMs: 10 } } })).toMatch(
      /"checkout.handlers.retry.maxDelayMs": must be at least handlers.retry.baseDelayMs \(100\)$/,
    );
  });

  it('takes the plain-data options and the handlers section, defaults filled in', () => {
    const o = resolveCheckoutOptions({
      ...base,
      merchantAccountNumber: '2017101',
      posSalesId: 'POS_1-a',
      descriptionSpecialCharacters: 'strip',
      invoiceTtlMs: 90 * 24 * 3600_000,
      maxCallbackBodyBytes: 1024,
      handlers: {
        retry: { maxAttempts: Infinity, deadlineMs: 3_600_000, baseDelayMs: 0 },
        recordTtlMs: 60_000,
        shutdownGraceMs: 0,
      },
    });
    expect(o).toMatchObject({
      merchantAccountNumber: '2017101',
      posSalesId: 'POS_1-a',
      descriptionSpecialCharacters: 'strip',
      invoiceTtlMs: 90 * 24 * 3600_000,
      maxCallbackBodyBytes: 1024,
    });
    expect(o.handlers).toEqual({
      retry: { maxAttempts: Infinity, baseDelayMs: 0, maxDelayMs: 30_000, deadlineMs: 3_600_000 },
      recordTtlMs: 60_000,
      shutdownGraceMs: 0,
    });
    expect(resolveCheckoutOptions(base).handlers).toEqual({
      retry: { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 },
    });
    expect(resolveCheckoutOptions(base)).toMatchObject({
      invoiceTtlMs: 30 * 24 * 3600_000,
      maxCallbackBodyBytes: 65_536,
    });
  });

  it('reads an optional option given as null as not given', () => {
    const o = resolveCheckoutOptions({
      ...base,
      posSalesId: null,
      merchantAccountNumber: null,
      handlers: { shutdownGraceMs: null, recordTtlMs: null, retry: null },
    });
    expect(o).not.toHaveProperty('posSalesId');
    expect(o).not.toHaveProperty('merchantAccountNumber');
    expect(o.reconciliation.enabled).toBe(false);
    expect(o.handlers).toEqual(resolveCheckoutOptions(base).handlers);
  });

  it('refuses a non-object', () => {
    expect(() => resolveCheckoutOptions(undefined)).toThrow(HubtelConfigError);
  });

  it.each([
    [
      'leaseMs',
      30_000,
      /BullMQ's stalled-job check \(HubtelBullmqModule lockDurationMs \/ stalledIntervalMs\)/,
    ],
    [
      'sweepIntervalMs',
      0,
      /BullMQ's stalled-job check \(HubtelBullmqModule lockDurationMs \/ stalledIntervalMs\)/,
    ],
    ['recoverOnBootstrap', true, /jobs on Redis run on BullMQ, which keeps unfinished jobs in Redis/],
  ])('refuses handlers.%s (removed in 0.2.0), saying what replaced it', (option, value, replacement) => {
    const refused = () => resolveCheckoutOptions({ ...base, handlers: { retry: {}, [option]: value } });
    expect(refused).toThrow(HubtelConfigError);
    expect(refused).toThrow(
      expect.objectContaining({
        option: `checkout.handlers.${option}`,
        message: expect.stringMatching(
          new RegExp(
            `^Invalid nestjs-hubtel option "checkout\\.handlers\\.${option}": was removed in 0\\.2\\.0: `,
          ),
        ),
      }),
    );
    expect(refused).toThrow(replacement);
  });
});

describe('checkoutOptionsFromEnv', () => {
  it('reads HUBTEL_* variables and lets overrides win', () => {
    const options = checkoutOptionsFromEnv(
      {
        HUBTEL_CLIENT_ID: 'env-id',
        HUBTEL_CLIENT_SECRET: 'env-secret',
        HUBTEL_POS_SALES_ID: '11684',
        HUBTEL_MERCHANT_ACCOUNT_NUMBER: '2017101',
        HUBTEL_CHECKOUT_URL: 'http://127.0.0.1:4010',
        HUBTEL_STATUS_URL: 'http://127.0.0.1:4011',
        HUBTEL_TIMEOUT_MS: '5000',
      },
      { publicBaseUrl: 'https://shop.test', merchantAccountNumber: 'override' },
    );
    expect(options).toMatchObject({
      clientId: 'env-id',
      clientSecret: 'env-secret',
      posSalesId: '11684',
      merchantAccountNumber: 'override',
      publicBaseUrl: 'https://shop.test',
      timeoutMs: 5000,
      baseUrls: { checkout: 'http://127.0.0.1:4010', status: 'http://127.0.0.1:4011' },
    });
    expect(resolveCheckoutOptions(options).reconciliation.enabled).toBe(true);
  });

  /** The error checkoutOptionsFromEnv throws for `env` (and `overrides`). */
  function envError(env: Record<string, string>, overrides = {}): HubtelConfigError {
    try {
      checkoutOptionsFromEnv(env, overrides);
    } catch (error) {
      expect(error).toBeInstanceOf(HubtelConfigError);
      return error as HubtelConfigError;
    }
    throw new Error(`no error for ${JSON.stringify(env)}`);
  }

  it('names the environment variable of a missing or bad value, and the option it feeds', () => {
    const missing = envError({ HUBTEL_CLIENT_ID: 'env-id' });
    expect(missing.option).toBe('HUBTEL_CLIENT_SECRET');
    expect(missing.message).toBe(
      'Invalid nestjs-hubtel option "HUBTEL_CLIENT_SECRET": is not set (environment variable of option checkout.clientSecret)',
    );
    expect(envError({}).option).toBe('HUBTEL_CLIENT_ID');
    const pair = { HUBTEL_CLIENT_ID: 'env-id', HUBTEL_CLIENT_SECRET: 'env-secret-value' };
    for (const [key, value] of [
      ['HUBTEL_CHECKOUT_URL', 'ftp://pay.test'],
      ['HUBTEL_STATUS_URL', 'not a url'],
      ['HUBTEL_POS_SALES_ID', '116 84'],
      ['HUBTEL_RETRY_MAX_ATTEMPTS', '99'],
      ['HUBTEL_DEFAULT_COUNTRY_CODE', 'Ghana'],
    ] as const) {
      const error = envError({ ...pair, [key]: value });
      expect([error.option, error.message]).toEqual([key, expect.stringContaining(`"${key}"`)]);
      expect(error.message).toMatch(/option checkout\./);
      expect(error.message).not.toContain('env-secret-value');
    }
  });

  it('blames an override, not the variable, and leaves options it does not read to the bootstrap check', () => {
    expect(checkoutOptionsFromEnv({ HUBTEL_CLIENT_ID: 'a' }, { clientSecret: 'b' }).clientSecret).toBe('b');
    expect(
      checkoutOptionsFromEnv({ HUBTEL_CLIENT_ID: 'a', HUBTEL_CLIENT_SECRET: 'b' }, { returnUrl: 'nope' }),
    ).toMatchObject({ returnUrl: 'nope' });
    expect(() =>
      resolveCheckoutOptions(
        checkoutOptionsFromEnv({ HUBTEL_CLIENT_ID: 'a', HUBTEL_CLIENT_SECRET: 'b' }, { returnUrl: 'nope' }),
      ),
    ).toThrow(/checkout\.returnUrl/);
  });
});
