import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import {
  CheckoutModule,
  CheckoutService,
  OnCheckoutPaid,
  OnCheckoutRejected,
  type CheckoutPaidEvent,
  type CheckoutRejectedEvent,
} from 'nestjs-hubtel/checkout';
import {
  FlowContext,
  FlowStep,
  OnFulfillment,
  ServiceAppModule,
  ServiceFlow,
  failFulfillment,
  fulfilled,
  type FulfillmentRequestedEvent,
  type ServiceAppModuleOptions,
} from 'nestjs-hubtel/service-app';
import { SmsModule, SmsService } from 'nestjs-hubtel/sms';
import type { TestSandbox } from 'nestjs-hubtel/testing';
import { BundleFlow } from './service-app.fixtures.js';

/*
 * A small merchant app for the developer-tools tests: the contract's data-bundle service (phone
 * input, bundle select, AddToCart, fulfillment: the service-app tests' BundleFlow) and a checkout whose paid handler sends an SMS
 * receipt, configured against a test sandbox, as a user would.
 */

/** A flow on ServiceCode `bye` that ends at once (release). */
@ServiceFlow({ serviceCode: 'bye' })
export class GoodbyeFlow {
  @FlowStep()
  hello(ctx: FlowContext) {
    return ctx.end('Goodbye from the service.');
  }
}

/** What the merchant's handlers saw. */
@Injectable()
export class MerchantLedger {
  readonly fulfilled: FulfillmentRequestedEvent[] = [];
  readonly paid: CheckoutPaidEvent[] = [];
  readonly rejected: CheckoutRejectedEvent[] = [];
  /** Fulfillments answered `failed` (by OrderId). */
  failOrders = new Set<string>();
  failNextFulfillment = false;
  private waiters: Array<() => void> = [];

  constructor(private readonly sms: SmsService) {}

  @OnFulfillment()
  deliver(order: FulfillmentRequestedEvent) {
    this.fulfilled.push(order);
    this.wake();
    if (this.failNextFulfillment) {
      this.failNextFulfillment = false;
      return failFulfillment('out of stock');
    }
    return fulfilled();
  }

  @OnCheckoutPaid()
  async onPaid(event: CheckoutPaidEvent) {
    this.paid.push(event);
    await this.sms.send({
      to: event.payee?.mobileNumber ?? '233241234567',
      content: `Receipt: order ${event.clientReference} paid, GHS ${event.amount.toFixed(2)}`,
    });
    this.wake();
  }

  @OnCheckoutRejected()
  onRejected(event: CheckoutRejectedEvent) {
    this.rejected.push(event);
    this.wake();
  }

  /** Resolves when `test()` holds (checked after every handler call). */
  async until(test: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test()) {
      if (Date.now() > deadline) throw new Error('MerchantLedger.until: timed out');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

export interface BundleMerchant {
  app: INestApplication;
  url: string;
  ledger: MerchantLedger;
  checkout: CheckoutService;
  close(): Promise<void>;
}

/** Starts the merchant app on 127.0.0.1:0 against the sandbox, and attaches it to the sandbox's tunnel. */
export async function startBundleMerchant(
  sandbox: TestSandbox,
  overrides: { serviceApp?: Partial<ServiceAppModuleOptions> } = {},
): Promise<BundleMerchant> {
  @Module({
    imports: [
      EventEmitterModule.forRoot(),
      SmsModule.forRoot({ ...sandbox.smsOptions(), senderId: 'Merchant' }),
      CheckoutModule.forRoot({
        ...sandbox.checkoutOptions(),
        handlers: { retry: { baseDelayMs: 5, maxDelayMs: 20 } },
      }),
      ServiceAppModule.forRoot(
        sandbox.serviceAppOptions({
          callbackRetry: { baseDelayMs: 5, maxDelayMs: 20 },
          fulfillmentRetry: { baseDelayMs: 5, maxDelayMs: 20 },
          ...overrides.serviceApp,
        }),
      ),
    ],
    providers: [BundleFlow, GoodbyeFlow, MerchantLedger],
  })
  class MerchantModule {}
  const moduleRef = await Test.createTestingModule({ imports: [MerchantModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  sandbox.attach(app);
  return {
    app,
    url: sandbox.attachedUrl!,
    ledger: app.get(MerchantLedger),
    checkout: app.get(CheckoutService),
    close: () => app.close(),
  };
}

/** Removes ANSI escape sequences from a CLI's output, to read it as text. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '');
}
