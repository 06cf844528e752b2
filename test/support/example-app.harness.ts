/**
 * The example app (src/) for end-to-end tests: in-process against a test's own HubtelSandbox,
 * with short retry delays; and the buyer's journey over plain HTTP (example-app.buyer.ts, exported
 * here too).
 */
import type { LoggerService } from '@nestjs/common';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import type { ExampleAppConfig } from '../../src/app.config.js';
import { startExampleApp, type ExampleApp } from '../../src/bootstrap.js';

export * from './example-app.buyer.js';

/** Short delays everywhere a module waits before retrying (correctness never depends on them). */
export const FAST_OVERRIDES: NonNullable<ExampleAppConfig['overrides']> = {
  sms: { timeoutMs: 3_000, retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } },
  checkout: {
    timeoutMs: 3_000,
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
    handlers: { retry: { maxAttempts: 5, baseDelayMs: 5, maxDelayMs: 20 } },
    // A paid callback the status check does not confirm is re-checked a few times, quickly (and
    // one invoice's checks as close: their spacing is checkout-forged-early's subject).
    verification: { recheck: { delayMs: 5, maxDelayMs: 20, minIntervalMs: 5 } },
  },
  serviceApp: {
    callbackTimeoutMs: 3_000,
    callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 60_000 },
    fulfillmentRetry: { maxAttempts: 5, baseDelayMs: 5, maxDelayMs: 20 },
    // A payment the sandbox has not recorded is refused after a short while (genuine orders are
    // recorded before their fulfillment request is sent, so the first check confirms them).
    verification: { recheckForMs: 300, recheckDelay: { baseDelayMs: 5, maxDelayMs: 20 } },
  },
};

export interface InProcessExample {
  example: ExampleApp;
  sandbox: HubtelSandbox;
  /** The shop's origin, `http://127.0.0.1:PORT`. */
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the example app in this process on a free port, against `sandbox` (a fresh one when
 * omitted, stopped by `close`). `overrides` are laid over FAST_OVERRIDES per module (top level).
 */
export async function startExampleInProcess(
  options: {
    sandbox?: HubtelSandbox;
    overrides?: ExampleAppConfig['overrides'];
    shopName?: string;
    /** Where the app logs (a CaptureLogger, to assert on what was logged). Default: nowhere. */
    logger?: LoggerService;
    /** REDIS_URL: keep every record in this Redis. Default: in memory. */
    redisUrl?: string;
    /** POST /orders limits. Default: high enough for any test that does not test them. */
    orderLimits?: ExampleAppConfig['orderLimits'];
    /** Modules added to the app (a recorder of its events, say). */
    imports?: ExampleAppConfig['imports'];
  } = {},
): Promise<InProcessExample> {
  const sandbox = options.sandbox ?? (await HubtelSandbox.start());
  const o = options.overrides ?? {};
  let example: ExampleApp;
  try {
    example = await startExampleApp(
      {
        port: 0,
        host: '127.0.0.1',
        shopName: options.shopName ?? 'Test Shop',
        ...(options.redisUrl === undefined ? {} : { redisUrl: options.redisUrl }),
        orderLimits: options.orderLimits ?? { perClientPerMinute: 100_000, perMinute: 100_000 },
        ...(options.imports ? { imports: options.imports } : {}),
        platform: { kind: 'sandbox', instance: sandbox },
        overrides: {
          sms: { ...FAST_OVERRIDES.sms, ...o.sms },
          checkout: { ...FAST_OVERRIDES.checkout, ...o.checkout },
          serviceApp: { ...FAST_OVERRIDES.serviceApp, ...o.serviceApp },
        },
      },
      { logger: options.logger ?? false },
    );
  } catch (error) {
    if (!options.sandbox) await sandbox.stop();
    throw error;
  }
  return {
    example,
    sandbox,
    url: example.url,
    close: async () => {
      await example.close();
      if (!options.sandbox) await sandbox.stop();
    },
  };
}

/** Polls `read` until it returns something other than undefined (state the app keeps, no event to await). */
export async function eventually<T>(
  read: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
