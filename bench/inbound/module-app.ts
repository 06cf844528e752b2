import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import type { Server } from 'node:http';
import { Cluster } from 'ioredis';
import { MemoryStore, type HubtelStore } from 'nestjs-hubtel';
import { HubtelRedisModule, RedisStore } from 'nestjs-hubtel/redis';
import { BullmqJobRunner, HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { CheckoutModule } from 'nestjs-hubtel/checkout';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import type { Message } from '../lib/ipc.js';
import type { ShapeName } from '../lib/shapes.js';
import { createAdapter, type AdapterName } from './adapters.js';
import { BenchHandlers, BundleFlow, PagedBundleFlow, seedCarts, seedInvoices } from './host-app.js';
import { LatencyProbe } from './latency-probe.js';
import { BenchLogger } from '../lib/bench-logger.js';
import { RoundTripRecorder } from './redis-trips.js';

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
 *
 * With `redisUrl` (the Redis variant), the app is configured as the docs say for Redis, the only
 * Redis deployment there is (issue 23: the modules refuse a Redis store without a job runner):
 * `HubtelRedisModule.forRoot({ url })` and no `store` option on the modules, which then share the
 * app-wide store, and `HubtelBullmqModule.forRoot({ url })` on the same Redis (its defaults), which
 * runs every job; everything else is the same. Its requests' Redis round trips can be recorded
 * (`trips-start` / `trips-stop`): the store's client and the runner's queue clients (a job's add is
 * a round trip before the 2xx).
 *
 * With `statusUrl` (the round-trip count of the checkout callback in the default configuration
 * once `posSalesId` is set), the checkout module also gets a `posSalesId`, which turns
 * `verification.confirmWithStatusCheck` (and reconciliation) on as it does in production, and its
 * `baseUrls` point at that URL: a stub of the status API the bench started on 127.0.0.1
 * (bench/inbound/status-stub.ts), so the confirmation job's status check never leaves the machine.
 * Without it (every other measurement) checkout runs in trust mode: no `posSalesId`, a verified
 * callback is recorded as its paid event at once.
 */
export interface ModuleApp {
  app: INestApplication;
  shapes: ShapeName[];
  handlers: Record<
    string,
    (message: Message) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void
  >;
}

export async function createModuleApp(
  adapter: AdapterName,
  redisUrl?: string,
  statusUrl?: string,
): Promise<ModuleApp> {
  // One store per module, as each module's default would be; given explicitly so carts and
  // invoices can be prepared in it. On Redis: the app-wide store of HubtelRedisModule.
  const memory = redisUrl === undefined;
  const serviceAppStore = memory ? new MemoryStore() : undefined;
  const checkoutStore = memory ? new MemoryStore() : undefined;
  const probe = new LatencyProbe();

  @Module({
    imports: [
      EventEmitterModule.forRoot(),
      ...(memory
        ? []
        : [HubtelRedisModule.forRoot({ url: redisUrl }), HubtelBullmqModule.forRoot({ url: redisUrl })]),
      // Every service-flow request of the load is a fresh session start, hundreds of thousands per
      // run: the cap on unanswered starts (a flood defence) would answer most of them "busy" and
      // the run would time the refusal, not a start. Raised so every request starts a session.
      ServiceAppModule.forRoot({
        ...(serviceAppStore ? { store: serviceAppStore } : {}),
        maxPendingSessions: 10_000_000,
      }),
      CheckoutModule.forRoot({
        clientId: 'bench-client',
        clientSecret: 'bench-secret-value',
        ...(checkoutStore ? { store: checkoutStore } : {}),
        ...(statusUrl
          ? { posSalesId: 'bench-pos', baseUrls: { checkout: statusUrl, status: statusUrl } }
          : {}),
      }),
    ],
    providers: [BundleFlow, PagedBundleFlow, BenchHandlers, { provide: LatencyProbe, useValue: probe }],
  })
  class BenchModuleApp {}

  // Warnings and errors are printed as in production; per-request `log`/`debug` lines are not.
  const app = await NestFactory.create(BenchModuleApp, createAdapter(adapter), { logger: new BenchLogger() });
  probe.attach(app);
  const redis = memory ? undefined : app.get(RedisStore);
  const stores: { serviceApp: HubtelStore; checkout: HubtelStore } = {
    serviceApp: serviceAppStore ?? redis!,
    checkout: checkoutStore ?? redis!,
  };
  let trips: RoundTripRecorder | undefined;
  return {
    app,
    shapes: ['checkout-callback', 'service-flow', 'fulfillment'],
    handlers: {
      prepare: async (message) => {
        const [prefix, from, count] = [String(message.prefix), Number(message.from), Number(message.count)];
        if (message.shape === 'fulfillment') await seedCarts(stores.serviceApp, prefix, from, count);
        if (message.shape === 'checkout-callback') await seedInvoices(stores.checkout, prefix, from, count);
      },
      'trips-start': async () => {
        if (!redis) throw new Error('round trips are counted on the Redis-store server only');
        if (redis.client instanceof Cluster)
          throw new Error('round trips are counted on one Redis, not a cluster');
        // The runner's queue clients too: a job's add is a round trip of the request.
        const queues = await Promise.all(
          ['checkout', 'service-app'].map((name) => app.get(BullmqJobRunner).queue(name).getBackend().client),
        );
        trips ??= new RoundTripRecorder(
          [redis.client, ...(queues as unknown as Array<typeof redis.client>)],
          app.getHttpServer() as Server,
        );
        trips.start();
      },
      'trips-stop': () => ({ requests: trips?.stop() ?? [] }),
      // On Redis the host's handlers run on the BullMQ worker, which may still hold a backlog when
      // the load stops: wait until its queues are empty (at most `timeoutMs`) before counting them.
      drain: async (message) => {
        if (memory) return { drained: true };
        const runner = app.get(BullmqJobRunner);
        const deadline = Date.now() + Number(message.timeoutMs ?? 60_000);
        for (;;) {
          const counts = await Promise.all(
            ['checkout', 'service-app'].map((name) =>
              runner.queue(name).getJobCounts('wait', 'active', 'delayed', 'prioritized'),
            ),
          );
          const left = counts.reduce((sum, c) => sum + Object.values(c).reduce((a, b) => a + b, 0), 0);
          if (left === 0) return { drained: true };
          if (Date.now() > deadline) return { drained: false, left };
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
      handled: () => ({ counts: { ...probe.counts } }),
      'latency-start': () => probe.start(),
      'latency-stop': () => probe.stop(),
      'latency-pending': () => ({ pending: probe.pending() }),
    },
  };
}
