import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HubtelValidationError } from 'nestjs-hubtel';
import { validateCheckoutCallback } from '../../checkout/src/callbacks/callback.dto.js';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import {
  buildCheckoutCallback,
  buildFulfillmentCallback,
  buildFulfillmentRequest,
  buildServiceFlowRequest,
} from './testing.builders.js';

/** Key paths of a JSON value, in order (`Data.PaymentDetails.Channel`), to compare shapes exactly. */
function shape(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => [
    `${prefix}${k}:${v === null ? 'null' : typeof v}`,
    ...shape(v, `${prefix}${k}.`),
  ]);
}

describe('buildCheckoutCallback', () => {
  it('builds the contract callback, field for field, from an invoice', () => {
    const body = buildCheckoutCallback({
      invoice: { clientReference: 'order-1', checkoutId: 'c0ffee', amount: 25.5 },
    });
    expect(body).toEqual({
      ResponseCode: '0000',
      Status: 'Success',
      Data: {
        CheckoutId: 'c0ffee',
        SalesInvoiceId: expect.stringMatching(/^[0-9a-f]{32}$/),
        ClientReference: 'order-1',
        Status: 'Success',
        Amount: 25.5,
        CustomerPhoneNumber: '233241234567',
        PaymentDetails: { MobileMoneyNumber: '233241234567', PaymentType: 'mobilemoney', Channel: 'mtn-gh' },
        Description: 'The MTN Mobile Money payment has been approved and processed successfully.',
      },
    });
    // The order of the contract's table, not just the set of fields.
    expect(Object.keys(body.Data)).toEqual([
      'CheckoutId',
      'SalesInvoiceId',
      'ClientReference',
      'Status',
      'Amount',
      'CustomerPhoneNumber',
      'PaymentDetails',
      'Description',
    ]);
    expect(validateCheckoutCallback(body).ok).toBe(true);
  });

  it('is exactly the shape the sandbox posts when a payer pays', async () => {
    const received: unknown[] = [];
    const server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        received.push(JSON.parse(text));
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const sandbox = await HubtelSandbox.start();
    try {
      const port = (server.address() as AddressInfo).port;
      const init = await fetch(`${sandbox.url}/items/initiate`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Authorization: `Basic ${Buffer.from('sandbox-api:sandbox-api-secret').toString('base64')}`,
        },
        body: JSON.stringify({
          totalAmount: 12,
          description: 'Shape',
          callbackUrl: `http://127.0.0.1:${port}/cb`,
          returnUrl: 'http://127.0.0.1/r',
          cancellationUrl: 'http://127.0.0.1/c',
          clientReference: 'shape-1',
        }),
      });
      expect(init.status).toBe(200);
      await sandbox.pay('shape-1', { phone: '0201234567' });
      const invoice = sandbox.invoice('shape-1')!;
      const built = buildCheckoutCallback({ invoice, phone: '0201234567' });
      expect(shape(built)).toEqual(shape(received[0]));
      expect(built.Data.PaymentDetails.Channel).toBe('vodafone-gh');
      expect(built.Data.CheckoutId).toBe(invoice.checkoutId);
      expect(built.Data.Amount).toBe(12);
      const failedBuilt = buildCheckoutCallback({ invoice, outcome: 'failed' });
      expect(failedBuilt).toMatchObject({
        ResponseCode: '2001',
        Status: 'Failed',
        Data: { Status: 'Failed' },
      });
    } finally {
      await sandbox.stop();
      await new Promise((r) => server.close(r));
    }
  });

  it('lets explicit fields win over the invoice (forgeries) and makes up a checkout id when none is known', () => {
    const invoice = { clientReference: 'order-2', checkoutId: 'real', totalAmount: 40 };
    expect(buildCheckoutCallback({ invoice, amount: 1 }).Data.Amount).toBe(1);
    expect(buildCheckoutCallback({ invoice, checkoutId: 'other' }).Data.CheckoutId).toBe('other');
    const unknown = buildCheckoutCallback({ clientReference: 'nobody', amount: 3 });
    expect(unknown.Data.CheckoutId).toMatch(/^[0-9a-f]{32}$/);
    expect(unknown.Data.ClientReference).toBe('nobody');
    expect(buildCheckoutCallback({ invoice, status: 'Pending', responseCode: '0001' })).toMatchObject({
      ResponseCode: '0001',
      Status: 'Pending',
      Data: { Status: 'Pending' },
    });
  });

  it('throws a HubtelValidationError naming every missing or bad field', () => {
    let error: unknown;
    try {
      buildCheckoutCallback({ phone: 'not a phone', outcome: 'maybe' as never });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HubtelValidationError);
    expect((error as HubtelValidationError).issues.map((i) => i.field).sort()).toEqual([
      'amount',
      'clientReference',
      'outcome',
      'phone',
    ]);
    expect(() => buildCheckoutCallback({ clientReference: 'x', amount: Number.NaN })).toThrow(/amount/);
    expect(() => buildCheckoutCallback(null as never)).toThrow(HubtelValidationError);
  });
});

describe('fulfillment and service-flow builders', () => {
  it('builds the contract fulfillment request with its nulls and empty object', () => {
    const body = buildFulfillmentRequest({ sessionId: 's-1', orderId: 'o-1' });
    expect(body).toEqual({ OrderId: 'o-1', SessionId: 's-1', ExtraData: {}, OrderInfo: null });
    expect(Object.keys(body)).toEqual(['OrderId', 'SessionId', 'ExtraData', 'OrderInfo']);
    expect(buildFulfillmentRequest({ sessionId: 's-1' }).OrderId).toMatch(/^[0-9a-f]{32}$/);
    expect(() => buildFulfillmentRequest({ sessionId: '' })).toThrow(HubtelValidationError);
    expect(() => buildFulfillmentRequest({ sessionId: 's', extraData: [] as never })).toThrow(/extraData/);
  });

  it('builds the fulfillment callback', () => {
    expect(buildFulfillmentCallback({ sessionId: 's', orderId: 'o' })).toEqual({
      SessionId: 's',
      OrderId: 'o',
      ServiceStatus: 'success',
      MetaData: null,
    });
    expect(() => buildFulfillmentCallback({ sessionId: 's', orderId: '' })).toThrow(/orderId/);
  });

  it('builds initiation with Sequence and an empty Message, and later calls without Sequence', () => {
    const start = buildServiceFlowRequest({ sessionId: 'sess', serviceCode: '711', mobile: '0241234567' });
    expect(start).toEqual({
      Sequence: '1',
      Type: 'initiation',
      Message: '',
      ServiceCode: '711',
      Operator: 'mtn',
      ClientState: '',
      Mobile: '233241234567',
      SessionId: 'sess',
    });
    const next = buildServiceFlowRequest({ sessionId: 'sess', message: '2' });
    expect(next).not.toHaveProperty('Sequence');
    expect(next).toMatchObject({ Type: 'Response', Message: '2' });
    expect(() => buildServiceFlowRequest({ mobile: 'abc' })).toThrow(HubtelValidationError);
  });

  it.each([
    [
      'buildCheckoutCallback',
      'checkoutId',
      () => buildCheckoutCallback({ clientReference: 'x', amount: 1, checkoutId: '' }),
    ],
    ['buildFulfillmentRequest', 'input', () => buildFulfillmentRequest(null as never)],
    ['buildFulfillmentRequest', 'orderId', () => buildFulfillmentRequest({ sessionId: 's', orderId: '' })],
    [
      'buildFulfillmentRequest',
      'extraData',
      () => buildFulfillmentRequest({ sessionId: 's', extraData: null as never }),
    ],
    ['buildFulfillmentCallback', 'input', () => buildFulfillmentCallback(null as never)],
    ['buildFulfillmentCallback', 'sessionId', () => buildFulfillmentCallback({ orderId: 'o' } as never)],
    [
      'buildFulfillmentCallback',
      'serviceStatus',
      () => buildFulfillmentCallback({ sessionId: 's', orderId: 'o', serviceStatus: '' }),
    ],
    ['buildServiceFlowRequest', 'message', () => buildServiceFlowRequest({ message: 5 as never })],
    ['buildServiceFlowRequest', 'sessionId', () => buildServiceFlowRequest({ sessionId: '' })],
  ])('%s refuses a bad %s: a HubtelValidationError naming that field only', (what, field, build) => {
    let error: unknown;
    try {
      build();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HubtelValidationError);
    expect((error as HubtelValidationError).issues.map((i) => i.field)).toEqual([field]);
    expect((error as Error).message).toMatch(new RegExp(`^${what}: ${field} `));
  });
});
