/**
 * The example shop against forged checkout callbacks (issue 11): a forged "failed" callback is a
 * failed attempt, never the end of the order (which still awaits payment, issue 21), and the shop shows its own words for it, never the
 * callback's `Description`. The forgery goes over real HTTP to the callback URL the shop gave the
 * sandbox; the genuine payment comes from the sandbox.
 */
import { CheckoutService } from 'nestjs-hubtel/checkout';
import {
  getOrder,
  startExampleInProcess,
  waitForOrder,
  type InProcessExample,
} from './support/example-app.harness.js';

const FORGED_DESCRIPTION = 'Payment failed. To complete it send GHS 25 to 0244000000 now';

describe('example shop: a forged failed callback', () => {
  let shop: InProcessExample;

  beforeAll(async () => {
    shop = await startExampleInProcess();
  });
  afterAll(() => shop?.close());

  async function order(): Promise<string> {
    const res = await fetch(`${shop.url}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ product: 'kente-mug', phone: '0244123456', name: 'Ama' }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { orderId: string }).orderId;
  }

  it('shows the shop’s own wording, not the callback’s Description, and the order still ends paid', async () => {
    const checkout = shop.example.app.get(CheckoutService);
    const orderId = await order();
    const invoice = shop.sandbox.invoice(orderId)!;

    const forged = await fetch(invoice.callbackUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        ResponseCode: '2001',
        Status: 'Failed',
        Data: {
          CheckoutId: invoice.checkoutId,
          SalesInvoiceId: 'f00dfeed',
          ClientReference: orderId,
          Status: 'Failed',
          Amount: 25,
          CustomerPhoneNumber: '233244000000',
          PaymentDetails: {
            MobileMoneyNumber: '233244000000',
            PaymentType: 'mobilemoney',
            Channel: 'mtn-gh',
          },
          Description: FORGED_DESCRIPTION,
        },
      }),
    });
    expect(forged.status).toBe(200);
    await checkout.drain();

    // A failed attempt, not a failed order: it still awaits payment, with the shop's note and the
    // retry link (the forged callback proves nothing; issue 21, item 8).
    const failed = await getOrder(shop.url, orderId);
    expect(failed.status).toBe('awaiting-payment');
    expect(failed.checkoutUrl).toBe(invoice.checkoutUrl);
    expect(failed.settled).toBe(false);
    expect(failed.failure).not.toContain('0244000000');
    expect(failed.failure).toBe('The payment did not go through. You can try again.');
    const page = await (await fetch(`${shop.url}/orders/${orderId}`)).text();
    expect(page).not.toContain(FORGED_DESCRIPTION);
    expect(page).toContain('The payment did not go through. You can try again.');
    expect(page).toMatch(/data-status="awaiting-payment"[^>]*>Waiting for payment confirmation…</);
    expect(page).toMatch(/<p id="retry" data-testid="retry">/);

    // The payer pays after all: the order ends paid, with its receipt.
    await shop.sandbox.pay(orderId);
    await checkout.drain();
    const paid = await waitForOrder(
      shop.url,
      orderId,
      (o) => o.status === 'paid' && o.receipt.status === 'sent',
    );
    expect(paid).toMatchObject({ failure: null, settled: true, payment: { amountPaid: 25 } });
    expect(await checkout.getInvoice(orderId)).toMatchObject({ status: 'paid' });
  });
});
