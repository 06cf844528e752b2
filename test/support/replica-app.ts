/*
 * One instance of a merchant app as a user writes it, for the multi-process tests: the three
 * modules on a shared Redis (HubtelRedisModule, no `store` option anywhere), pointed at a sandbox
 * running in another process. Run it with test/support/multi-process.ts (`node --import
 * bench/loader/register.mjs test/support/replica-app.ts`), configured by the environment:
 *
 *   PORT, HOST, PUBLIC_URL   where it listens / how the platform reaches it (checkout callbacks)
 *   REDIS_URL                the shared Redis (or REDIS_CLUSTER_NODES: host:port,... of a cluster)
 *   SANDBOX                  the sandbox CLI's `--json` line (URLs, credentials, POS Sales ID)
 *   INSTANCE                 its name in the lines it prints
 *   FULFILLMENT_CALLBACK_URL where fulfillment callbacks go (default: the sandbox's receiver)
 *   LEASE_MS, SWEEP_MS       job ownership of both modules (default: the modules' defaults)
 *   HOLD_MS                  how long the paid handler of a `hold-…` reference waits after its
 *                            SMS before it returns (prints `RELEASED <ref>` then): a slow handler
 *
 * What it handles is observable from outside only: every handler run prints one line
 * (`HANDLED paid <ref> by <instance>`, `HANDLED fulfillment <orderId> by <instance>`), and a paid
 * invoice's receipt goes out as an SMS through the sandbox (`Receipt <ref>`).
 */
import 'reflect-metadata';
import {
  Body,
  Controller,
  Get,
  Injectable,
  Module,
  Param,
  Post,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import {
  CheckoutModule,
  CheckoutService,
  OnCheckoutPaid,
  type CheckoutPaidEvent,
} from 'nestjs-hubtel/checkout';
import { HubtelRedisModule } from 'nestjs-hubtel/redis';
import {
  FlowContext,
  FlowStep,
  FulfillmentService,
  OnFulfillment,
  ServiceAppModule,
  ServiceFlow,
  fulfilled,
  type FulfillmentRequestedEvent,
} from 'nestjs-hubtel/service-app';
import { SmsModule, SmsService } from 'nestjs-hubtel/sms';
import type { SandboxInfo } from './multi-process.js';

const env = process.env;
const sandbox = JSON.parse(env.SANDBOX ?? '') as SandboxInfo;
const instance = env.INSTANCE ?? 'app';
const publicUrl = env.PUBLIC_URL!;
const ownership = {
  ...(env.LEASE_MS ? { leaseMs: Number(env.LEASE_MS) } : {}),
  ...(env.SWEEP_MS ? { sweepIntervalMs: Number(env.SWEEP_MS) } : {}),
};
/** Where receipts go (one number: the tests tell receipts apart by their reference). */
const RECEIPT_NUMBER = '233241000001';

/** One line per handler run, on stdout: how the test counts runs across processes. */
function handled(what: string, key: string): void {
  process.stdout.write(`HANDLED ${what} ${key} by ${instance}\n`);
}

@Injectable()
class Receipts {
  constructor(private readonly sms: SmsService) {}

  @OnCheckoutPaid()
  async onPaid(event: CheckoutPaidEvent): Promise<void> {
    handled('paid', event.clientReference);
    await this.sms.send({ to: RECEIPT_NUMBER, content: `Receipt ${event.clientReference}` });
    if (event.clientReference.startsWith('hold-')) {
      await new Promise((resolve) => setTimeout(resolve, Number(env.HOLD_MS ?? 1_000)));
      process.stdout.write(`RELEASED ${event.clientReference}\n`);
    }
  }
}

/** Three steps, so a session can move between instances at every answer. */
@ServiceFlow()
class BundleFlow {
  @FlowStep({ start: true })
  phone(ctx: FlowContext) {
    return ctx.input({ message: 'Number to buy data for', fieldType: 'phone', name: 'destination' });
  }

  @FlowStep()
  bundle(ctx: FlowContext<{ destination: string }>) {
    return ctx.select({
      message: `Bundle for ${ctx.data.destination} (asked by ${instance})`,
      name: 'bundle',
      options: [
        { Display: '1GB for GHS 5.00', Value: '1gb', Amount: 5 },
        { Display: '5GB for GHS 20.00', Value: '5gb', Amount: 20 },
      ],
    });
  }

  @FlowStep()
  confirm(ctx: FlowContext<{ destination: string; bundle: string }>) {
    const option = ctx.selected()!;
    return ctx.addToCart({
      message: `${option.Display} for ${ctx.data.destination}`,
      item: {
        ItemName: option.Display,
        Qty: 1,
        Price: option.Amount,
        ServiceData: { destination: ctx.data.destination, bundle: option.Value },
      },
    });
  }
}

@Injectable()
class Deliveries {
  @OnFulfillment()
  deliver(order: FulfillmentRequestedEvent) {
    handled('fulfillment', order.orderId);
    return fulfilled({ deliveredBy: instance });
  }
}

@Controller('replica')
class ReplicaController {
  constructor(
    private readonly checkout: CheckoutService,
    private readonly fulfillment: FulfillmentService,
  ) {}

  @Get()
  info() {
    return { instance };
  }

  @Post('invoices')
  createInvoice(@Body() body: { clientReference: string; amount: number }) {
    return this.checkout.createInvoice({
      clientReference: body.clientReference,
      totalAmount: body.amount,
      description: `Order ${body.clientReference}`,
    });
  }

  @Get('orders/:orderId')
  async order(@Param('orderId') orderId: string) {
    return (await this.fulfillment.getOrder(orderId)) ?? { unknown: orderId };
  }
}

const api = {
  clientId: sandbox.credentials.api.clientId,
  clientSecret: sandbox.credentials.api.clientSecret,
};

@Module({
  imports: [
    EventEmitterModule.forRoot(),
    HubtelRedisModule.forRoot(
      env.REDIS_CLUSTER_NODES
        ? {
            cluster: {
              nodes: env.REDIS_CLUSTER_NODES.split(',').map((node) => {
                const [host, port] = node.split(':');
                return { host: host!, port: Number(port) };
              }),
            },
          }
        : { url: env.REDIS_URL! },
    ),
    SmsModule.forRoot({ ...sandbox.credentials.sms, baseUrl: sandbox.baseUrls.sms, senderId: 'Replica' }),
    CheckoutModule.forRoot({
      ...api,
      posSalesId: sandbox.posSalesId,
      publicBaseUrl: publicUrl,
      returnUrl: `${publicUrl}/paid`,
      cancellationUrl: `${publicUrl}/cancelled`,
      baseUrls: { checkout: sandbox.baseUrls.checkout, status: sandbox.baseUrls.status },
      handlers: { retry: { baseDelayMs: 100, maxDelayMs: 1_000 }, ...ownership },
    }),
    ServiceAppModule.forRoot({
      callbackUrl: env.FULFILLMENT_CALLBACK_URL ?? sandbox.baseUrls.fulfillmentCallback,
      callbackTimeoutMs: 2_000,
      callbackRetry: { baseDelayMs: 200, maxDelayMs: 1_000 },
      statusCheck: { ...api, posSalesId: sandbox.posSalesId, url: sandbox.baseUrls.status },
      verification: { recheckDelay: { baseDelayMs: 100, maxDelayMs: 1_000 } },
      ...ownership,
    }),
  ],
  controllers: [ReplicaController],
  providers: [Receipts, BundleFlow, Deliveries],
})
class ReplicaModule {}

const app: INestApplication = await NestFactory.create(ReplicaModule, { logger: ['error', 'warn', 'log'] });
app.enableShutdownHooks();
await app.listen(Number(env.PORT ?? 0), env.HOST ?? '127.0.0.1');
process.stdout.write(`READY ${instance} ${await app.getUrl()}\n`);
