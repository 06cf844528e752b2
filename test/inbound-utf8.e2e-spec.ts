/**
 * A JSON body that is not valid UTF-8 is answered 400 with the suite's machine-readable body, on
 * every inbound endpoint and both adapters. Their JSON parsers decode bad bytes to U+FFFD, so
 * before this `ord-\xff` and `ord-\xfe` arrived as the same OrderId (and ClientReference). A lone
 * surrogate escaped in the JSON (`"ord-\ud800"`) is valid ASCII on the wire but no character: the
 * store's UTF-8 turned `ord-\ud800` and `ord-\udbff` into one Redis key (issue 21, item 8).
 */
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import {
  ADAPTERS,
  FakeCheckoutApi,
  baseOptions,
  callbackBody,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';
import { flowRequest, startMerchant, type Merchant } from './support/service-app.harness.js';

/** `json` as UTF-8 with `"@@"` replaced by the raw byte `byte` (not valid UTF-8 on its own). */
function withRawByte(json: string, byte: number): Buffer {
  const [before, after] = json.split('@@') as [string, string];
  return Buffer.concat([Buffer.from(before, 'utf8'), Buffer.from([byte]), Buffer.from(after, 'utf8')]);
}

async function postBytes(url: string, body: Buffer): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/** `json` with `"@@"` replaced by the six ASCII characters of a JSON escape such as `\ud800`. */
function withEscape(json: string, escape: string): Buffer {
  return Buffer.from(json.replace('@@', escape), 'utf8');
}

/** High and low surrogates on their own, and a low one before a high one (no pair either). */
const LONE_SURROGATES = ['\\ud800', '\\udbff', '\\udc00', '\\udfff', '\\udc00\\ud800'];

const BAD_ENCODING = {
  statusCode: 400,
  error: 'Bad Request',
  code: 'HUBTEL_INVALID_BODY',
  message: expect.stringContaining('not valid UTF-8'),
  issues: [{ field: expect.any(String), message: expect.stringContaining('not valid UTF-8') }],
};

describe.each(ADAPTERS)('inbound bodies that are not valid UTF-8 (%s)', (adapter) => {
  let api: FakeCheckoutApi;
  let checkout: CheckoutTestApp;
  let sandbox: HubtelSandbox;
  let merchant: Merchant;

  beforeAll(async () => {
    api = await FakeCheckoutApi.start();
    checkout = await startCheckoutApp(adapter, baseOptions(api));
    sandbox = await HubtelSandbox.start();
    merchant = await startMerchant(adapter, { callbackUrl: sandbox.baseUrls().fulfillmentCallback });
  });
  afterAll(async () => {
    await checkout?.close();
    await api?.close();
    await merchant?.close();
    await sandbox?.stop();
  });

  it('checkout callback: 400, nothing recorded or emitted', async () => {
    const { checkoutId } = await checkout.service.createInvoice({
      totalAmount: 10,
      description: 'Mug',
      clientReference: 'ord-1',
    });
    const body = callbackBody({ ref: 'ord-1', checkoutId, amount: 10 });
    body.Data.Description = 'Approved @@';
    for (const byte of [0xff, 0xfe, 0xc3]) {
      const res = await postBytes(checkout.callbackUrl, withRawByte(JSON.stringify(body), byte));
      expect(res).toEqual({ status: 400, body: BAD_ENCODING });
      expect(res.body.issues[0].field).toBe('Data.Description');
    }
    await checkout.service.drain();
    expect(checkout.handlers.events.paid).toEqual([]);
    expect(checkout.handlers.events.rejected).toEqual([]);
  });

  it('service-flow request and fulfillment request: 400', async () => {
    const flow = JSON.stringify(flowRequest('Initiation', 'abc@@def'));
    const fulfillment = JSON.stringify({
      OrderId: 'ord-@@',
      SessionId: 'abc',
      ExtraData: {},
      OrderInfo: null,
    });
    for (const byte of [0xff, 0xfe]) {
      const a = await postBytes(`${merchant.url}/api/service-flow`, withRawByte(flow, byte));
      expect(a).toEqual({ status: 400, body: BAD_ENCODING });
      const b = await postBytes(`${merchant.url}/api/fulfillment`, withRawByte(fulfillment, byte));
      expect(b).toEqual({ status: 400, body: BAD_ENCODING });
      expect(b.body.issues[0].field).toBe('OrderId');
    }
    expect(merchant.fulfiller.seen).toEqual([]);
  });

  it('lone surrogates escaped in the JSON: 400 on every endpoint, nothing recorded or emitted', async () => {
    const { checkoutId } = await checkout.service.createInvoice({
      totalAmount: 10,
      description: 'Mug',
      clientReference: 'ord-2',
    });
    const body = callbackBody({ ref: 'ord-2', checkoutId, amount: 10 });
    body.Data.SalesInvoiceId = 'inv-@@';
    const flow = JSON.stringify(flowRequest('Initiation', 'sess@@'));
    const fulfillment = JSON.stringify({
      OrderId: 'ord-@@',
      SessionId: 'abc',
      ExtraData: { note: 'x' },
      OrderInfo: null,
    });
    // JSON.stringify writes '@@' as is; the escape goes in as six ASCII characters.
    for (const escape of LONE_SURROGATES) {
      const a = await postBytes(checkout.callbackUrl, withEscape(JSON.stringify(body), escape));
      expect(a).toEqual({ status: 400, body: BAD_ENCODING });
      expect(a.body.issues[0].field).toBe('Data.SalesInvoiceId');
      const b = await postBytes(`${merchant.url}/api/service-flow`, withEscape(flow, escape));
      expect(b).toEqual({ status: 400, body: BAD_ENCODING });
      expect(b.body.issues[0].field).toBe('SessionId');
      const c = await postBytes(`${merchant.url}/api/fulfillment`, withEscape(fulfillment, escape));
      expect(c).toEqual({ status: 400, body: BAD_ENCODING });
      expect(c.body.issues[0].field).toBe('OrderId');
    }
    // Also in a key, deep in a field the DTOs otherwise accept and ignore.
    const extra = JSON.stringify({
      OrderId: 'ord-9',
      SessionId: 'abc',
      ExtraData: { 'k@@': 1 },
      OrderInfo: null,
    });
    const d = await postBytes(`${merchant.url}/api/fulfillment`, withEscape(extra, '\\ud800'));
    expect(d).toEqual({ status: 400, body: BAD_ENCODING });
    await checkout.service.drain();
    expect(checkout.handlers.events.paid).toEqual([]);
    expect(checkout.handlers.events.rejected).toEqual([]);
    expect(merchant.fulfiller.seen).toEqual([]);
  });
});
