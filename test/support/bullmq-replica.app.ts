/**
 * One replica of a small shop for the multi-process BullMQ tests (test/bullmq-replicas.e2e-spec.ts):
 * run as its own process with `node --import ./bench/loader/register.mjs`, it shares Redis (the
 * store and the BullMQ queues) with its sibling replicas and talks to a sandbox process.
 *
 * Environment: REDIS_URL (or REDIS_CLUSTER_NODES, `host:port,...` of a Redis Cluster), SANDBOX (the sandbox CLI's --json line), REPLICA (its name), and
 * HANG_IN (a handler name: that handler never returns on this replica, until the process is
 * killed), FAIL_IN (a handler name that always throws here), RECONCILE_MS (reconcile that often),
 * RECHECK_MS (a paid callback the status check does not show yet is checked again that long
 * after the first check, then twice as long after that: two re-checks).
 *
 * It prints one JSON line per thing the test waits for: `{"ready":url}`, then
 * `{"replica","handler","phase":"start"|"end","ref"}` around each paid handler.
 */
import 'reflect-metadata';
import { Body, Controller, Injectable, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import {
  CheckoutModule,
  CheckoutService,
  OnCheckoutDeadLetter,
  OnCheckoutPaid,
  type CheckoutDeadLetterEvent,
  type CheckoutPaidEvent,
} from 'nestjs-hubtel/checkout';
import { HubtelRedisModule } from 'nestjs-hubtel/redis';
import { OnFulfillment, ServiceAppModule, type FulfillmentRequestedEvent } from 'nestjs-hubtel/service-app';
import { SmsModule, SmsService } from 'nestjs-hubtel/sms';

interface SandboxInfo {
  url: string;
  credentials: {
    sms: { clientId: string; clientSecret: string };
    api: { clientId: string; clientSecret: string };
  };
  posSalesId: string;
}

const sandbox = JSON.parse(process.env.SANDBOX ?? '{}') as SandboxInfo;
const replica = process.env.REPLICA ?? 'replica';
let callbackUrl = '';

function report(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ replica, ...line })}\n`);
}

async function step(handler: string, ref: string, work: () => Promise<void>): Promise<void> {
  report({ handler, phase: 'start', ref });
  if (process.env.HANG_IN === handler) await new Promise(() => undefined);
  if (process.env.FAIL_IN === handler) {
    report({ handler, phase: 'fail', ref });
    throw new Error(`${handler} always fails here`);
  }
  await work();
  report({ handler, phase: 'end', ref });
}

@Injectable()
class ShopHandlers {
  constructor(private readonly sms: SmsService) {}

  /** First: the buyer's receipt (an SMS through the sandbox, which counts it). */
  @OnCheckoutPaid()
  async receipt(event: CheckoutPaidEvent): Promise<void> {
    await step('receipt', event.clientReference, async () => {
      await this.sms.send({ to: '0241234567', content: `Receipt for ${event.clientReference}` });
    });
  }

  /** Then: the order is fulfilled (slow; where HANG_IN=fulfil, it never ends). */
  @OnCheckoutPaid()
  async fulfil(event: CheckoutPaidEvent): Promise<void> {
    await step('fulfil', event.clientReference, async () => undefined);
  }

  /** A fulfillment request's handler: its answer is the callback's MetaData. */
  @OnFulfillment()
  async deliver(order: FulfillmentRequestedEvent): Promise<unknown> {
    await step('deliver', order.orderId, async () => undefined);
    return { voucher: `V-${order.orderId}` };
  }

  @OnCheckoutDeadLetter()
  dead(event: CheckoutDeadLetterEvent): void {
    report({ deadLetter: event.key, attempts: event.attempts });
  }
}

@Controller('test')
class TestController {
  constructor(private readonly checkout: CheckoutService) {}

  @Post('invoices')
  async create(@Body() body: { ref: string }): Promise<unknown> {
    return this.checkout.createInvoice({
      totalAmount: 10,
      description: 'Data bundle',
      clientReference: body.ref,
      callbackUrl,
      payeeMobileNumber: '0241234567',
    });
  }
}

/** One Redis (REDIS_URL) or a cluster (REDIS_CLUSTER_NODES): the same app on either. */
const clusterNodes = process.env.REDIS_CLUSTER_NODES?.split(',').map((node) => {
  const [host, port] = node.split(':');
  return { host: host!, port: Number(port) };
});
const redis = clusterNodes ? { cluster: { nodes: clusterNodes } } : { url: process.env.REDIS_URL! };
const reconcileMs = Number(process.env.RECONCILE_MS ?? 0);
const recheckMs = Number(process.env.RECHECK_MS ?? 0);

@Module({
  imports: [
    EventEmitterModule.forRoot(),
    HubtelRedisModule.forRoot(redis),
    // Short locks (the spec passes them: it bounds the takeover by them): a killed replica's job
    // is taken over within about two seconds here.
    HubtelBullmqModule.forRoot({
      ...redis,
      lockDurationMs: Number(process.env.LOCK_MS ?? 1_500),
      stalledIntervalMs: Number(process.env.STALLED_MS ?? 500),
    }),
    SmsModule.forRoot({ baseUrl: sandbox.url, ...sandbox.credentials.sms, senderId: 'Shop' }),
    CheckoutModule.forRoot({
      ...sandbox.credentials.api,
      baseUrls: { checkout: sandbox.url, status: sandbox.url },
      posSalesId: sandbox.posSalesId,
      merchantAccountNumber: sandbox.posSalesId,
      returnUrl: 'https://shop.example.test/return',
      cancellationUrl: 'https://shop.example.test/cancel',
      handlers: { retry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 400 } },
      // RECONCILE_MS: every invoice not paid is status-checked that often (first check at once).
      reconciliation: reconcileMs
        ? { enabled: true, delayMs: 0, intervalMs: reconcileMs, maxIntervalMs: reconcileMs }
        : { enabled: false },
      ...(recheckMs
        ? { verification: { recheck: { attempts: 2, delayMs: recheckMs, maxDelayMs: 2 * recheckMs } } }
        : {}),
    }),
    // Fulfillment requests posted straight to /api/fulfillment (no USSD session before them).
    ServiceAppModule.forRoot({ callbackUrl: sandbox.url, requireCart: false }),
  ],
  controllers: [TestController],
  providers: [ShopHandlers],
})
class ReplicaModule {}

const app = await NestFactory.create(ReplicaModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
const url = await app.getUrl();
callbackUrl = `${url.replace('[::1]', '127.0.0.1')}/hubtel/checkout/callback`;
report({ ready: url });
