import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { MemoryStore } from 'nestjs-hubtel';
import { CheckoutModule } from 'nestjs-hubtel/checkout';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import type { Message } from '../lib/ipc.js';
import type { ShapeName } from '../lib/shapes.js';
import { createAdapter, type AdapterName } from './adapters.js';
import { BenchHandlers, BundleFlow, seedCarts, seedInvoices } from './host-app.js';
import { LatencyProbe } from './latency-probe.js';

/**
 * (d) The suite's own endpoints, configured as a merchant would: defaults everywhere (full
 * validation, the in-memory store, the inbound pipeline with de-duplication and verification),
 * access guards open, and cheap host handlers. Each request of the benchmark carries a fresh key,
 * so every one is verified, recorded and dispatched (never the cheap duplicate path).
 *
 * What a fresh key needs, prepared before each measured run (outside the CPU window):
 * - fulfillment: the default `requireCart` refuses an order whose session did not end in an
 *   AddToCart of this app, so a cart is stored per future SessionId;
 * - checkout callback: verification refuses a callback for an invoice this app did not create, so
 *   an invoice is stored per future ClientReference.
 * Both are written to the module's store as another instance sharing that store would have.
 */
export interface ModuleApp {
  app: INestApplication;
  shapes: ShapeName[];
  handlers: Record<
    string,
    (message: Message) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void
  >;
}

export async function createModuleApp(adapter: AdapterName): Promise<ModuleApp> {
  // One store per module, as each module's default would be; given explicitly so carts and
  // invoices can be prepared in it.
  const serviceAppStore = new MemoryStore();
  const checkoutStore = new MemoryStore();
  const probe = new LatencyProbe();

  @Module({
    imports: [
      EventEmitterModule.forRoot(),
      // Every service-flow request of the load is a fresh session start, hundreds of thousands per
      // run: the cap on unanswered starts (a flood defence) would answer most of them "busy" and
      // the run would time the refusal, not a start. Raised so every request starts a session.
      ServiceAppModule.forRoot({ store: serviceAppStore, maxPendingSessions: 10_000_000 }),
      CheckoutModule.forRoot({
        clientId: 'bench-client',
        clientSecret: 'bench-secret-value',
        store: checkoutStore,
      }),
    ],
    providers: [BundleFlow, BenchHandlers, { provide: LatencyProbe, useValue: probe }],
  })
  class BenchModuleApp {}

  // Warnings and errors are printed as in production; per-request `log`/`debug` lines are not.
  const app = await NestFactory.create(BenchModuleApp, createAdapter(adapter), { logger: ['error', 'warn'] });
  probe.attach(app);
  return {
    app,
    shapes: ['checkout-callback', 'service-flow', 'fulfillment'],
    handlers: {
      prepare: async (message) => {
        const [prefix, from, count] = [String(message.prefix), Number(message.from), Number(message.count)];
        if (message.shape === 'fulfillment') await seedCarts(serviceAppStore, prefix, from, count);
        if (message.shape === 'checkout-callback') await seedInvoices(checkoutStore, prefix, from, count);
      },
      handled: () => ({ counts: { ...probe.counts } }),
      'latency-start': () => probe.start(),
      'latency-stop': () => probe.stop(),
    },
  };
}
