import { Inject, Injectable } from '@nestjs/common';
import { CHECKOUT_KEY_PREFIX } from '../../libs/checkout/src/checkout.constants.js';
import { OnCheckoutPaid, type CheckoutInvoice, type CheckoutPaidEvent } from 'nestjs-hubtel/checkout';
import {
  FlowContext,
  FlowStep,
  OnFulfillment,
  ServiceFlow,
  deferFulfillment,
  type FulfillmentRequestedEvent,
  type StoredCart,
} from 'nestjs-hubtel/service-app';
import { SERVICE_APP_KEYS } from '../../libs/service-app/src/service-app.constants.js';
import { type HubtelStore } from 'nestjs-hubtel';
import { LatencyProbe } from './latency-probe.js';

/**
 * The host application of the benchmark: what a merchant writes on top of the suite. Its flow is
 * the contract's use case (phone number → bundle → cart); its handlers are cheap.
 */
@ServiceFlow()
export class BundleFlow {
  constructor(@Inject(LatencyProbe) private readonly probe: LatencyProbe) {}

  @FlowStep()
  destination(ctx: FlowContext) {
    this.probe.count('service-flow');
    return ctx.input({
      message: 'Enter the phone number to top up',
      label: 'Phone number',
      fieldType: 'phone',
      name: 'destination',
    });
  }

  @FlowStep()
  bundle(ctx: FlowContext) {
    return ctx.select({
      message: `Choose a bundle for ${String(ctx.data.destination)}`,
      label: 'Bundle',
      name: 'bundle',
      options: [
        { Display: '1 GB - GHS 5', Value: '1gb', Amount: 5 },
        { Display: '5 GB - GHS 20', Value: '5gb', Amount: 20 },
      ],
    });
  }

  @FlowStep()
  cart(ctx: FlowContext) {
    const option = ctx.selected('bundle');
    return ctx.addToCart({
      message: `Buy ${option?.Display ?? ''}`,
      item: {
        ItemName: option?.Display ?? 'bundle',
        Qty: 1,
        Price: option?.Amount ?? 0,
        ServiceData: {
          destination: String(ctx.data.destination),
          amount: String(option?.Amount ?? 0),
          bundle: String(option?.Value ?? ''),
        },
      },
    });
  }
}

/** 30 bundles: on USSD a menu of several pages (the paged step of the sessions section). */
const MANY_BUNDLES = Array.from({ length: 30 }, (_, i) => ({
  Display: `${i + 1} GB - GHS ${(i + 1) * 5}`,
  Value: `b${i + 1}`,
  Amount: (i + 1) * 5,
}));

/** The same use case with a long menu, on ServiceCode `paged`. */
@ServiceFlow({ serviceCode: 'paged' })
export class PagedBundleFlow {
  @FlowStep()
  destination(ctx: FlowContext) {
    return ctx.input({
      message: 'Enter the phone number to top up',
      fieldType: 'phone',
      name: 'destination',
    });
  }

  @FlowStep()
  bundle(ctx: FlowContext) {
    return ctx.select({
      message: `Choose a bundle for ${String(ctx.data.destination)}`,
      name: 'bundle',
      options: MANY_BUNDLES,
    });
  }

  @FlowStep()
  cart(ctx: FlowContext) {
    const option = ctx.selected('bundle')!;
    return ctx.addToCart({
      message: `Buy ${option.Display}`,
      item: { ItemName: option.Display, Qty: 1, Price: option.Amount, ServiceData: { bundle: option.Value } },
    });
  }
}

/**
 * Cheap handlers: note the time for the latency probe and return. The fulfillment handler defers
 * (`deferFulfillment()`), so no outbound fulfillment callback is part of the measured inbound path.
 */
@Injectable()
export class BenchHandlers {
  constructor(@Inject(LatencyProbe) private readonly probe: LatencyProbe) {}

  @OnFulfillment()
  deliver(order: FulfillmentRequestedEvent) {
    this.probe.handled(order.orderId, 'fulfillment');
    return deferFulfillment();
  }

  @OnCheckoutPaid()
  paid(event: CheckoutPaidEvent) {
    this.probe.handled(event.clientReference, 'checkout-callback');
  }
}

const CART_TTL_MS = 24 * 3600_000;
const INVOICE_TTL_MS = 30 * 24 * 3600_000;

/**
 * A cart per future fulfillment (SessionId `s-<id>`, see lib/shapes.ts), as the AddToCart answer
 * of another instance sharing the store would have left it.
 */
export async function seedCarts(
  store: HubtelStore,
  prefix: string,
  from: number,
  count: number,
): Promise<void> {
  const createdAt = new Date().toISOString();
  await inBatches(from, count, async (n) => {
    const sessionId = `s-${prefix}${n}`;
    const cart: StoredCart = {
      sessionId,
      flow: 'BundleFlow',
      serviceCode: '11684',
      mobile: '233242825109',
      operator: 'mtn',
      item: {
        ItemName: '1 GB - GHS 5',
        Qty: 1,
        Price: 5,
        ServiceData: { destination: '233242825109', amount: '5', bundle: '1gb' },
      },
      data: { destination: '233242825109', bundle: '1gb' },
      createdAt,
    };
    await store.setIfAbsent(`${SERVICE_APP_KEYS.cart}${sessionId}`, cart, { ttlMs: CART_TTL_MS });
  });
}

/**
 * An invoice per future callback (ClientReference `<id>`, CheckoutId `co-<id>`, GHS 0.50), as
 * `createInvoice` on another instance sharing the store would have recorded it.
 */
export async function seedInvoices(
  store: HubtelStore,
  prefix: string,
  from: number,
  count: number,
): Promise<void> {
  const at = new Date().toISOString();
  await inBatches(from, count, async (n) => {
    const clientReference = `${prefix}${n}`;
    const invoice: CheckoutInvoice = {
      clientReference,
      checkoutId: `co-${clientReference}`,
      checkoutUrl: `https://pay.example/${clientReference}`,
      checkoutDirectUrl: `https://pay.example/direct/${clientReference}`,
      amount: 0.5,
      description: 'Bench order',
      status: 'pending',
      creation: 'created',
      createdAt: at,
      updatedAt: at,
    };
    await store.setIfAbsent(`${CHECKOUT_KEY_PREFIX}invoice:${clientReference}`, invoice, {
      ttlMs: INVOICE_TTL_MS,
    });
  });
}

/**
 * Runs `write(n)` for n in [from, from + count), a few hundred at a time: a Redis store then gets
 * them pipelined on its connection instead of one round trip after another (seeding 100,000
 * invoices one by one would take longer than the run it prepares).
 */
async function inBatches(from: number, count: number, write: (n: number) => Promise<void>): Promise<void> {
  const BATCH = 256;
  for (let start = from; start < from + count; start += BATCH) {
    const writes: Promise<void>[] = [];
    for (let n = start; n < Math.min(start + BATCH, from + count); n++) writes.push(write(n));
    await Promise.all(writes);
  }
}
