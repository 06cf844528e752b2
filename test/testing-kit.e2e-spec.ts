/*
 * The testing kit used exactly as docs/testing.md tells a user to: the code between the
 * `docs:begin` / `docs:end` markers below is copied from that page, and the last test of this file
 * fails if the two drift apart. Only the checks after `docs:end` are this project's own.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FulfillmentService } from 'nestjs-hubtel/service-app';
import { buildFulfillmentRequest, sendFulfillmentRequest } from 'nestjs-hubtel/testing';
// docs:begin app
import { Injectable } from '@nestjs/common';
import { CheckoutService, OnCheckoutPaid, type CheckoutPaidEvent } from 'nestjs-hubtel/checkout';
import {
  FlowContext,
  FlowStep,
  OnFulfillment,
  ServiceFlow,
  type FulfillmentRequestedEvent,
} from 'nestjs-hubtel/service-app';
import { SmsService } from 'nestjs-hubtel/sms';

@Injectable()
export class Orders {
  readonly paid = new Set<string>();

  constructor(
    private readonly checkout: CheckoutService,
    private readonly sms: SmsService,
  ) {}

  place(amount: number, phone: string) {
    return this.checkout.createInvoice({
      totalAmount: amount,
      description: 'Data bundle',
      payeeMobileNumber: phone,
    });
  }

  @OnCheckoutPaid()
  async onPaid(event: CheckoutPaidEvent) {
    this.paid.add(event.clientReference);
    await this.sms.send({
      to: event.payee!.mobileNumber!,
      content: `Order ${event.clientReference} is paid. Thank you!`,
    });
  }
}

@ServiceFlow()
export class BundleFlow {
  @FlowStep()
  number(ctx: FlowContext) {
    return ctx.input({ message: 'Number to top up', fieldType: 'phone', name: 'destination' });
  }

  @FlowStep()
  bundle(ctx: FlowContext) {
    return ctx.select({
      message: 'Choose a bundle',
      name: 'bundle',
      options: [{ Display: '5GB for GHS 20.00', Value: '5gb', Amount: 20 }],
    });
  }

  @FlowStep()
  cart(ctx: FlowContext<{ destination: string }>) {
    const bundle = ctx.selected()!;
    return ctx.addToCart({
      message: `Buy ${bundle.Display}?`,
      item: {
        ItemName: bundle.Display,
        Qty: 1,
        Price: bundle.Amount,
        ServiceData: { destination: ctx.data.destination, bundle: bundle.Value },
      },
    });
  }
}

@Injectable()
export class BundleDelivery {
  readonly delivered: FulfillmentRequestedEvent[] = [];

  @OnFulfillment()
  deliver(order: FulfillmentRequestedEvent) {
    this.delivered.push(order); // top the number up here
  }
}
// docs:end app

// docs:begin test
import type { INestApplication } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { CheckoutModule } from 'nestjs-hubtel/checkout';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import { SmsModule } from 'nestjs-hubtel/sms';
import {
  SmsCapture,
  buildCheckoutCallback,
  createTestSandbox,
  sendCheckoutCallback,
  type TestSandbox,
} from 'nestjs-hubtel/testing';

describe('orders and bundles', () => {
  let hubtel: TestSandbox;
  let sms: SmsCapture;
  let app: INestApplication;

  beforeAll(async () => {
    hubtel = await createTestSandbox(); // the platform, on 127.0.0.1 and a free port
    sms = new SmsCapture(); // SMS are captured here: nothing leaves the process
    const moduleRef = await sms
      .install(
        Test.createTestingModule({
          imports: [
            EventEmitterModule.forRoot(),
            SmsModule.forRoot({ ...hubtel.smsOptions(), senderId: 'Shop', isGlobal: true }),
            CheckoutModule.forRoot(hubtel.checkoutOptions()),
            ServiceAppModule.forRoot(hubtel.serviceAppOptions()),
          ],
          providers: [Orders, BundleFlow, BundleDelivery],
        }),
      )
      .compile();
    app = moduleRef.createNestApplication();
    await app.listen(0, '127.0.0.1');
    hubtel.attach(app); // the sandbox's callbacks now reach this app
  });

  afterAll(async () => {
    await app.close();
    await hubtel.stop();
  });

  it('marks an order paid and texts a receipt when the payer pays', async () => {
    const orders = app.get(Orders);
    const invoice = await orders.place(25, '0241234567');

    await hubtel.pay(invoice.clientReference); // the payer pays on the hosted page; the callback is sent
    await app.get(CheckoutService).drain(); // your @OnCheckoutPaid handlers have run

    expect(orders.paid.has(invoice.clientReference)).toBe(true);
    expect(sms.messagesTo('0241234567')).toEqual([
      expect.objectContaining({ content: `Order ${invoice.clientReference} is paid. Thank you!` }),
    ]);
  });

  it('handles a duplicate callback once and never believes a forged one', async () => {
    const orders = app.get(Orders);
    const invoice = await orders.place(10, '0201234567');
    await hubtel.pay(invoice.clientReference);

    // The platform sends the same callback again.
    const again = await sendCheckoutCallback(
      app,
      buildCheckoutCallback({ invoice: hubtel.invoice(invoice.clientReference)! }),
    );
    expect(again.status).toBe(200);

    // Someone claims another order was paid, with a made-up amount.
    const other = await orders.place(50, '0201234567');
    await sendCheckoutCallback(
      app,
      buildCheckoutCallback({
        clientReference: other.clientReference,
        checkoutId: other.checkoutId,
        amount: 0.5,
      }),
    );

    await app.get(CheckoutService).drain();
    expect(orders.paid.has(other.clientReference)).toBe(false);
    expect(sms.messagesTo('0201234567')).toHaveLength(1);
  });

  it('delivers a bundle bought through the service flow', async () => {
    const session = hubtel.serviceApp(await app.getUrl()); // plays Hubtel's client app
    await session.start();
    await session.reply('0241234567');
    await session.choose('5gb');
    const { order } = await session.pay(); // the fulfillment request reaches your app

    const callback = await session.waitForCallback(); // your app's fulfillment callback
    expect(callback.serviceStatus).toBe('success');
    expect(app.get(BundleDelivery).delivered.map((o) => o.orderId)).toEqual([order.orderId]);
  });
  // docs:end test

  // This project's own checks, beyond what the guide shows.
  it('sent no SMS to the sandbox (or anywhere): the capture answered', () => {
    expect(sms.messages.length).toBeGreaterThanOrEqual(2);
    expect(hubtel.messages()).toEqual([]);
    expect(hubtel.requests().filter((r) => r.api === 'sms')).toEqual([]);
  });

  it('verifies fulfillment requests a test sends itself: an unpaid one waits and delivers nothing; markServicePaid() makes one count', async () => {
    const toCart = async () => {
      const session = hubtel.serviceApp(await app.getUrl());
      await session.start();
      await session.reply('0241234567');
      await session.choose('5gb');
      return session;
    };
    const fulfillment = app.get(FulfillmentService);
    const delivered = () => app.get(BundleDelivery).delivered.map((o) => o.orderId);

    // Unpaid: acknowledged, then held for re-checks by the status check, never delivered meanwhile.
    const unpaid = await toCart();
    const forged = buildFulfillmentRequest({ sessionId: unpaid.sessionId, orderId: 'kit-unpaid' });
    expect((await sendFulfillmentRequest(app, forged)).status).toBe(200);
    await until(async () => (await fulfillment.getOrder('kit-unpaid'))?.payment?.checks === 1);
    expect(await fulfillment.getOrder('kit-unpaid')).toMatchObject({ payment: { status: 'checking' } });
    expect(delivered()).not.toContain('kit-unpaid');

    // Recorded first: delivered on the first check.
    const paid = await toCart();
    hubtel.markServicePaid(paid.sessionId, { orderId: 'kit-paid' });
    const request = buildFulfillmentRequest({ sessionId: paid.sessionId, orderId: 'kit-paid' });
    expect((await sendFulfillmentRequest(app, request)).status).toBe(200);
    const callback = await hubtel.waitForFulfillmentCallback((c) => c.orderId === 'kit-paid');
    expect(callback.serviceStatus).toBe('success');
    expect(delivered()).toContain('kit-paid');
    expect(delivered()).not.toContain('kit-unpaid');
  });

  it('really delivered the callbacks through the tunnel, with the app’s answers recorded', () => {
    const deliveries = hubtel.deliveries({ kind: 'checkout-callback' });
    expect(deliveries.length).toBeGreaterThanOrEqual(2);
    for (const d of deliveries)
      expect(d).toMatchObject({ state: 'delivered', statusCode: 200, responseBody: '{"received":true}' });
  });
});

/** Waits (polling) until `test()` resolves true. */
async function until(test: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error('until: timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('docs/testing.md', () => {
  it('shows exactly the code this file runs', () => {
    const here = fileURLToPath(import.meta.url);
    const source = readFileSync(here, 'utf8');
    const docs = readFileSync(path.resolve(path.dirname(here), '..', 'docs', 'testing.md'), 'utf8');
    const blocks = [...docs.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    for (const name of ['app', 'test']) {
      const region = new RegExp(`// docs:begin ${name}\\n([\\s\\S]*?)\\n\\s*// docs:end ${name}`).exec(
        source,
      )![1]!;
      // The guide's block holds the region verbatim (its test block also closes the describe).
      const found = blocks.some((block) => block.includes(region));
      if (!found)
        throw new Error(
          `docs/testing.md has no \`\`\`ts block containing the "${name}" region of ${path.basename(here)} verbatim`,
        );
    }
  });
});
