/**
 * The buyer's journey over plain HTTP (what a browser does, with fetch and manual redirects), so
 * the same steps serve the in-process tests and the ones against an app in a child process (`npm
 * start`, the docs' commands): those import this file alone, not the app and the libraries.
 */

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
