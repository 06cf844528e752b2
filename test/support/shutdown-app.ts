/*
 * A merchant app for the shutdown test (test/shutdown.e2e-spec.ts), run in its own process and
 * stopped with SIGTERM as an orchestrator does. Checkout and the service app on the default
 * (memory) store, or on Redis with REDIS_URL (the jobs then on BullMQ, on the same Redis); pointed
 * at a sandbox in another process.
 *
 *   PORT, HOST, PUBLIC_URL   where it listens / how the platform reaches it
 *   SANDBOX                  the sandbox CLI's `--json` line
 *   ADAPTER                  `express` (default) or `fastify`
 *   HOLD_MS                  how long the paid handler of a `slow-…` reference takes (default:
 *                            until the process gets SIGUSR2, when the test is done with it)
 *   GRACE_MS                 the modules' shutdownGraceMs
 *   REDIS_URL                keep records in Redis (HubtelRedisModule) and run the jobs on BullMQ
 *                            (HubtelBullmqModule) instead of memory and this process
 *   LOCK_MS, STALLED_MS      BullMQ's lockDurationMs and stalledIntervalMs (default: the runner's,
 *                            10 s and 5 s): a job left running here is taken over within their sum
 *
 * Two paid handlers, in this order: the first prints `NOTED <ref>` (it always succeeds, at once);
 * the second prints `STARTED <ref>` when it starts and `FINISHED <ref>` when it ends, after
 * sending a receipt SMS through the sandbox (`Receipt <ref>`); it throws for a `fail-…` reference
 * (retried after a minute: still waiting at shutdown).
 */
import 'reflect-metadata';
import { Body, Controller, Injectable, Module, Post, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import {
  CheckoutModule,
  CheckoutService,
  OnCheckoutPaid,
  type CheckoutPaidEvent,
} from 'nestjs-hubtel/checkout';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { HubtelRedisModule } from 'nestjs-hubtel/redis';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import { SmsModule, SmsService } from 'nestjs-hubtel/sms';
import type { SandboxInfo } from './multi-process.js';

const env = process.env;
const sandbox = JSON.parse(env.SANDBOX ?? '') as SandboxInfo;
const publicUrl = env.PUBLIC_URL!;
const graceMs = Number(env.GRACE_MS ?? 10_000);

@Injectable()
class Receipts {
  constructor(private readonly sms: SmsService) {}

  @OnCheckoutPaid()
  noted(event: CheckoutPaidEvent): void {
    process.stdout.write(`NOTED ${event.clientReference}\n`);
  }

  @OnCheckoutPaid()
  async onPaid(event: CheckoutPaidEvent): Promise<void> {
    const ref = event.clientReference;
    process.stdout.write(`STARTED ${ref}\n`);
    if (ref.startsWith('fail-')) throw new Error(`handler of ${ref} failed`);
    if (ref.startsWith('slow-'))
      await new Promise((resolve) =>
        env.HOLD_MS ? setTimeout(resolve, Number(env.HOLD_MS)) : process.once('SIGUSR2', resolve),
      );
    await this.sms.send({ to: '233241000001', content: `Receipt ${ref}` });
    process.stdout.write(`FINISHED ${ref}\n`);
  }
}

@Controller('shutdown-test')
class InvoicesController {
  constructor(private readonly checkout: CheckoutService) {}

  @Post('invoices')
  createInvoice(@Body() body: { clientReference: string; amount: number }) {
    return this.checkout.createInvoice({
      clientReference: body.clientReference,
      totalAmount: body.amount,
      description: `Order ${body.clientReference}`,
    });
  }
}

const store: DynamicModule[] = env.REDIS_URL
  ? [
      HubtelRedisModule.forRoot({ url: env.REDIS_URL }),
      HubtelBullmqModule.forRoot({
        url: env.REDIS_URL,
        ...(env.LOCK_MS ? { lockDurationMs: Number(env.LOCK_MS) } : {}),
        ...(env.STALLED_MS ? { stalledIntervalMs: Number(env.STALLED_MS) } : {}),
      }),
    ]
  : [];

@Module({
  imports: [
    EventEmitterModule.forRoot(),
    ...store,
    SmsModule.forRoot({ ...sandbox.credentials.sms, baseUrl: sandbox.baseUrls.sms, senderId: 'Shop' }),
    CheckoutModule.forRoot({
      ...sandbox.credentials.api,
      posSalesId: sandbox.posSalesId,
      publicBaseUrl: publicUrl,
      returnUrl: `${publicUrl}/paid`,
      cancellationUrl: `${publicUrl}/cancelled`,
      baseUrls: { checkout: sandbox.baseUrls.checkout, status: sandbox.baseUrls.status },
      handlers: { retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 }, shutdownGraceMs: graceMs },
    }),
    ServiceAppModule.forRoot({ callbackUrl: sandbox.baseUrls.fulfillmentCallback, shutdownGraceMs: graceMs }),
  ],
  controllers: [InvoicesController],
  providers: [Receipts],
})
class ShopModule {}

const app =
  env.ADAPTER === 'fastify'
    ? await NestFactory.create(ShopModule, new FastifyAdapter(), { logger: ['error', 'warn', 'log'] })
    : await NestFactory.create(ShopModule, { logger: ['error', 'warn', 'log'] });
// What the README asks: handlers in flight finish on SIGTERM. useProcessExit (Nest 12): exit 0
// once closed, rather than re-raising the signal.
app.enableShutdownHooks(['SIGTERM'], { useProcessExit: true });
await app.listen(Number(env.PORT ?? 0), env.HOST ?? '127.0.0.1');
process.stdout.write(`READY ${await app.getUrl()}\n`);
