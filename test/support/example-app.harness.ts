/**
 * The example app (src/) for end-to-end tests: in-process against a test's own HubtelSandbox,
 * with short retry delays, and the buyer's journey over plain HTTP (what a browser does, with
 * fetch and manual redirects) so the same steps serve the in-process tests and the `npm start` one.
 */
import type { LoggerService } from '@nestjs/common';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import type { ExampleAppConfig } from '../../src/app.config.js';
import { startExampleApp, type ExampleApp } from '../../src/bootstrap.js';

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

/* ------------------------------- the buyer's journey over HTTP ------------------------------- */

export interface ApiOrder {
  id: string;
  /** The shop's account. */
  shop: string;
  product: string;
  amount: number;
  status: 'awaiting-payment' | 'paid' | 'failed' | 'cancelled' | 'expired' | 'needs-attention';
  failure: string | null;
  checkoutUrl: string | null;
  paidAt: string | null;
  payment: {
    amountPaid: number;
    charges: number | null;
    net: number | null;
    chargesBorneBy: string | null;
    channel: string | null;
    confirmedByStatusCheck: boolean;
  } | null;
  receipt: { status: string; to: string | null; messageId: string | null };
  settled: boolean;
}

export interface Ordered {
  orderId: string;
  /** The sandbox's payment page the shop redirected to. */
  checkoutUrl: string;
}

function form(fields: Record<string, string>): RequestInit {
  return {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  };
}

/** Submits the shop's order form; expects the 303 to the payment page. */
export async function placeOrder(
  shopUrl: string,
  fields: { product: string; phone: string; name?: string; shop?: string },
): Promise<Ordered> {
  const res = await fetch(new URL('/orders', shopUrl), form({ ...fields, name: fields.name ?? '' }));
  const text = await res.text();
  if (res.status !== 303) throw new Error(`POST /orders answered ${res.status}: ${text.slice(0, 300)}`);
  const checkoutUrl = res.headers.get('location')!;
  const orderId = await orderIdFromPayPage(checkoutUrl);
  return { orderId, checkoutUrl };
}

/** The client reference shown on the payment page is the order id. */
async function orderIdFromPayPage(checkoutUrl: string): Promise<string> {
  const res = await fetch(checkoutUrl);
  const html = await res.text();
  if (res.status !== 200) throw new Error(`The payment page answered ${res.status}`);
  const ref = /data-testid="client-reference">([^<]+)</.exec(html)?.[1];
  if (!ref) throw new Error('The payment page shows no client reference');
  return ref;
}

/**
 * Presses a button of the payment page (`pay-momo`, `pay-fail`, `cancel`) as a browser would:
 * reads the page, submits that button's form, and returns where the sandbox redirected.
 */
export async function pressPayPageButton(
  checkoutUrl: string,
  button: 'pay-momo' | 'pay-fail' | 'cancel',
  phone?: string,
): Promise<string> {
  const page = await fetch(checkoutUrl);
  const html = await page.text();
  const action = {
    'pay-momo': /<form method="post" action="([^"]+\/momo)"/,
    'pay-fail': /<form method="post" action="([^"]+\/fail)"/,
    cancel: /<form method="post" action="([^"]+\/cancel)"/,
  }[button].exec(html)?.[1];
  if (!action) throw new Error(`No ${button} form on the payment page (status ${page.status})`);
  const fields: Record<string, string> = {};
  if (button === 'pay-momo') {
    fields.phone = phone ?? /id="momo-number"[^>]*value="([^"]*)"/.exec(html)?.[1] ?? '';
    fields.channel = /<option value="([^"]+)" selected>/.exec(html)?.[1] ?? 'mtn-gh';
  }
  const res = await fetch(new URL(action, checkoutUrl), form(fields));
  await res.arrayBuffer();
  if (res.status !== 303) throw new Error(`The payment page's ${button} answered ${res.status}`);
  return res.headers.get('location')!;
}

export async function getOrder(shopUrl: string, orderId: string): Promise<ApiOrder> {
  const res = await fetch(new URL(`/api/orders/${orderId}`, shopUrl));
  if (res.status !== 200) throw new Error(`GET /api/orders/${orderId} answered ${res.status}`);
  return (await res.json()) as ApiOrder;
}

/** Polls the order's JSON (what the order page does) until `test` holds. */
export async function waitForOrder(
  shopUrl: string,
  orderId: string,
  test: (order: ApiOrder) => boolean,
  timeoutMs = 20_000,
): Promise<ApiOrder> {
  const deadline = Date.now() + timeoutMs;
  let last: ApiOrder | undefined;
  while (Date.now() < deadline) {
    last = await getOrder(shopUrl, orderId);
    if (test(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(
    `Order ${orderId} did not reach the expected state within ${timeoutMs} ms; last: ${JSON.stringify(last)}`,
  );
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
