import { Injectable, Module, type DynamicModule, type INestApplication, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { MemoryStore } from 'nestjs-hubtel';
import type { Message } from '../lib/ipc.js';
import type { ShapeName } from '../lib/shapes.js';
import { createAdapter, type AdapterName } from './adapters.js';
import { LatencyProbe } from './latency-probe.js';

/**
 * (d) The suite's own endpoints, configured as a merchant would: defaults everywhere (full
 * validation, the in-memory store, the inbound pipeline with de-duplication), access guards open,
 * and cheap host handlers. Each request of the benchmark carries a fresh key, so every one is
 * recorded and dispatched (never the cheap duplicate path).
 *
 * What "fresh" needs per endpoint, prepared before each measured run (outside the CPU window):
 * - fulfillment: the default `requireCart` refuses an order whose session did not end in an
 *   AddToCart of this app, so a cart is put in the (shared) store per future SessionId — as
 *   another instance of the app sharing the store would have done.
 * - checkout callback: verification refuses a callback for an invoice this app did not create, so
 *   an invoice is recorded per future ClientReference the same way.
 */
export interface ModuleApp {
  app: INestApplication;
  /** Shapes this build of the suite serves (a module that has not landed yet is left out). */
  shapes: ShapeName[];
  handlers: Record<
    string,
    (message: Message) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void
  >;
}

interface Part {
  shape: ShapeName;
  imports: DynamicModule[];
  providers: Type<unknown>[];
  /** Seeds what `count` future requests with ids `${prefix}${from..from+count}` need. */
  prepare?: (prefix: string, from: number, count: number) => Promise<void>;
}

/** Benchmark ids: the runner sends `${prefix}${n}` (see lib/shapes.ts `idFor`). */
export async function createModuleApp(adapter: AdapterName): Promise<ModuleApp> {
  const store = new MemoryStore();
  const probe = new LatencyProbe();
  const parts: Part[] = [];
  const failures: string[] = [];
  for (const load of [serviceAppParts, checkoutParts]) {
    try {
      parts.push(...(await load(store, probe)));
    } catch (error) {
      failures.push(error instanceof Error ? error.message.split('\n')[0]! : String(error));
    }
  }
  if (parts.length === 0) throw new Error(`no module of the suite could be set up: ${failures.join('; ')}`);

  @Module({
    imports: [EventEmitterModule.forRoot(), ...parts.flatMap((p) => p.imports)],
    providers: [...new Set(parts.flatMap((p) => p.providers)), { provide: LatencyProbe, useValue: probe }],
  })
  class BenchModuleApp {}

  // Warnings and errors are printed as in production; per-request `log`/`debug` lines are not.
  const app = await NestFactory.create(BenchModuleApp, createAdapter(adapter), { logger: ['error', 'warn'] });
  probe.attach(app);
  return {
    app,
    shapes: parts.map((p) => p.shape),
    handlers: {
      prepare: async (message) => {
        const part = parts.find((p) => p.shape === message.shape);
        await part?.prepare?.(String(message.prefix), Number(message.from), Number(message.count));
      },
      'latency-start': () => probe.start(),
      'latency-stop': () => probe.stop(),
    },
  };
}

async function serviceAppParts(store: MemoryStore, probe: LatencyProbe): Promise<Part[]> {
  const sa = await import('nestjs-hubtel/service-app');
  const { ServiceFlow, FlowStep, OnFulfillment, deferFulfillment, ServiceAppModule, SERVICE_APP_KEYS } = sa;

  /** The contract's use case: phone number → bundle choice → cart. Cheap steps. */
  @ServiceFlow()
  class BundleFlow {
    @FlowStep()
    destination(ctx: InstanceType<typeof sa.FlowContext>) {
      return ctx.input({
        message: 'Enter the phone number to top up',
        label: 'Phone number',
        fieldType: 'phone',
        name: 'destination',
      });
    }

    @FlowStep()
    bundle(ctx: InstanceType<typeof sa.FlowContext>) {
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
    cart(ctx: InstanceType<typeof sa.FlowContext>) {
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

  /** A cheap fulfillment handler: notes the time and defers (no outbound callback in the measured path). */
  @Injectable()
  class BundleFulfillment {
    @OnFulfillment()
    deliver(order: { orderId: string }) {
      probe.handled(order.orderId);
      return deferFulfillment();
    }
  }

  const cartTtlMs = 24 * 3600_000;
  return [
    {
      shape: 'service-flow',
      imports: [ServiceAppModule.forRoot({ store, callbackUrl: 'http://127.0.0.1:9/' })],
      providers: [BundleFlow, BundleFulfillment],
    },
    {
      shape: 'fulfillment',
      imports: [],
      providers: [],
      prepare: async (prefix, from, count) => {
        const createdAt = new Date().toISOString();
        for (let n = from; n < from + count; n++) {
          const sessionId = `s-${prefix}${n}`;
          await store.setIfAbsent(
            `${SERVICE_APP_KEYS.cart}${sessionId}`,
            {
              sessionId,
              flow: 'BundleFlow',
              serviceCode: '11684',
              mobile: '233242825109',
              operator: 'mtn',
              item: {
                ItemName: '1 GB',
                Qty: 1,
                Price: 5,
                ServiceData: { destination: '233242825109', amount: '5', bundle: '1gb' },
              },
              data: { destination: '233242825109', bundle: '1gb' },
              createdAt,
            },
            { ttlMs: cartTtlMs },
          );
        }
      },
    },
  ];
}

async function checkoutParts(store: MemoryStore, probe: LatencyProbe): Promise<Part[]> {
  void store;
  void probe;
  throw new Error('nestjs-hubtel/checkout has not landed yet');
}
