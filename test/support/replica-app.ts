/*
 * One replica of a merchant app as a user writes it, for the multi-process tests
 * (test/multi-instance.e2e-spec.ts, test/bullmq-outage.e2e-spec.ts): the three modules on a
 * shared Redis, one Redis or a Redis Cluster (HubtelRedisModule for the records, no `store` option
 * anywhere; HubtelBullmqModule on the same Redis runs the jobs), pointed at a sandbox running in
 * another process. Run it with test/support/multi-process.ts (`node --import
 * bench/loader/register.mjs test/support/replica-app.ts`), configured by the environment:
 *
 *   PORT, HOST, PUBLIC_URL   where it listens / how the platform reaches it (checkout callbacks)
 *   REDIS_URL                the shared Redis (or REDIS_CLUSTER_NODES: host:port,... of a cluster)
 *   SANDBOX                  the sandbox CLI's `--json` line (URLs, credentials, POS Sales ID)
 *   INSTANCE                 its name in the lines it prints
 *   LOCK_MS, STALLED_MS      BullMQ's lockDurationMs and stalledIntervalMs (default: the runner's
 *                            defaults, 10 s and 5 s): a killed replica's job runs elsewhere within
 *                            their sum
 *   BULLMQ_PREFIX            the runner's `prefix` (default: its own, `{hubtel}:bull`)
 *   BULLMQ_REDIS_URL         a Redis of BullMQ's own (default: the shared one): the queues can then
 *                            be down while the records' Redis answers
 *   CONFIRM_CALLBACKS        `0`: checkout callbacks count without the status check
 *                            (`verification.confirmWithStatusCheck: false`)
 *   FULFILLMENT_CALLBACK_URL where fulfillment callbacks go (default: the sandbox's receiver)
 *   HOLD_MS                  how long the receipt handler of a `hold-…` reference waits after its
 *                            SMS before it returns (prints `RELEASED <ref>` then): a slow handler
 *   RECONCILE_MS             reconcile every unpaid invoice that often (default: no reconciliation)
 *   RECHECK_MS               a paid callback the status check does not show yet is checked again
 *                            that long after the first check, then twice as long after that
 *   MARKS_DIR                a directory all replicas share (default: the system's temporary one),
 *                            where the first run of a `hang-…` handler leaves its mark
 *   ACCOUNTS                 named checkout accounts to register (`north,south`), each with its
 *                            keys and POS Sales ID from the sandbox's `--json` line (`accounts`,
 *                            a sandbox started with `--accounts`); see "Checkout accounts" below
 *
 * What a reference (or order id) is called decides how its handlers behave, on every replica:
 *   hold-…          the receipt handler holds HOLD_MS after its SMS (see above)
 *   hang-…          the first run of the paid `fulfil` handler, and of the fulfillment handler,
 *                   never returns (until its replica is killed), on whichever replica it runs;
 *                   every later run returns (a crash inside a handler, once)
 *   fail-…          the paid `fulfil` handler always throws (3 attempts, then a dead letter)
 *
 * What it handles is observable from outside only, one line per thing on stdout:
 *   HANDLED <handler> <key> by <instance>   a run of a handler starts (receipt, fulfil, failed, deliver)
 *   HANGING <handler> <key> by <instance>   it is the first run of a `hang-…` key: it never returns
 *   DONE <handler> <key> by <instance>      it returned
 *   FAILED <handler> <key> by <instance>    it threw
 *   DEAD <key> attempts <n> by <instance>   a checkout job was dead-lettered
 * and a paid invoice's receipt goes out as an SMS through the sandbox (`Receipt <ref>`).
 */
import 'reflect-metadata';
import { closeSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  Body,
  Controller,
  Get,
  Injectable,
  Module,
  Param,
  Post,
  type DynamicModule,
  type INestApplication,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import {
  CheckoutModule,
  CheckoutService,
  OnCheckoutDeadLetter,
  OnCheckoutFailed,
  OnCheckoutPaid,
  type CheckoutDeadLetterEvent,
  type CheckoutFailedEvent,
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
  type ServiceAppAccountOverrides,
} from 'nestjs-hubtel/service-app';
import { SmsModule, SmsService } from 'nestjs-hubtel/sms';
import type { SandboxInfo } from './multi-process.js';

const env = process.env;
const sandbox = JSON.parse(env.SANDBOX ?? '') as SandboxInfo;
const instance = env.INSTANCE ?? 'app';
const publicUrl = env.PUBLIC_URL!;
/** Where receipts go (one number: the tests tell receipts apart by their reference). */
const RECEIPT_NUMBER = '233241000001';

function line(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** True for the first caller across all replicas (a file created exclusively), false after. */
function first(handler: string, key: string): boolean {
  try {
    closeSync(openSync(path.join(env.MARKS_DIR ?? tmpdir(), `${handler}-${key}`), 'wx'));
    return true;
  } catch {
    return false;
  }
}

/**
 * One handler run, framed by its lines: `HANDLED` when it starts, then `DONE` or `FAILED`. The
 * first run of a `hang-…` key never gets past the start (in the handlers that allow it).
 */
async function step<T>(
  handler: string,
  key: string,
  work: () => Promise<T>,
  { mayHang = false, mayFail = false } = {},
): Promise<T> {
  // Marked before it says so: a replica killed as soon as it printed HANGING has taken the mark.
  const hang = mayHang && key.startsWith('hang-') && first(handler, key);
  line(`HANDLED ${handler} ${key} by ${instance}`);
  if (hang) {
    line(`HANGING ${handler} ${key} by ${instance}`);
    await new Promise(() => undefined);
  }
  if (mayFail && key.startsWith('fail-')) {
    line(`FAILED ${handler} ${key} by ${instance}`);
    throw new Error(`${handler} always fails for ${key}`);
  }
  const result = await work();
  line(`DONE ${handler} ${key} by ${instance}`);
  return result;
}

@Injectable()
class ShopHandlers {
  constructor(private readonly sms: SmsService) {}

  /** First: the buyer's receipt (an SMS through the sandbox, which counts it), from the invoice's account. */
  @OnCheckoutPaid()
  async receipt(event: CheckoutPaidEvent): Promise<void> {
    const ref = event.clientReference;
    await step('receipt', ref, async () => {
      await this.sms.forAccount(event.account).send({ to: RECEIPT_NUMBER, content: `Receipt ${ref}` });
      if (ref.startsWith('hold-')) {
        await new Promise((resolve) => setTimeout(resolve, Number(env.HOLD_MS ?? 1_000)));
        line(`RELEASED ${ref}`);
      }
    });
  }

  /** Then: the order is fulfilled (the first run of `hang-…` never ends; `fail-…` always throws). */
  @OnCheckoutPaid()
  async fulfil(event: CheckoutPaidEvent): Promise<void> {
    await step('fulfil', event.clientReference, async () => undefined, { mayHang: true, mayFail: true });
  }

  /** A payment attempt that failed (the invoice's `failed` event). */
  @OnCheckoutFailed()
  async failed(event: CheckoutFailedEvent): Promise<void> {
    await step('failed', event.clientReference, async () => undefined);
  }

  /** A fulfillment request's handler: its answer is the callback's MetaData. */
  @OnFulfillment()
  async deliver(order: FulfillmentRequestedEvent) {
    return step('deliver', order.orderId, async () => fulfilled({ deliveredBy: instance }), {
      mayHang: true,
    });
  }

  @OnCheckoutDeadLetter()
  dead(event: CheckoutDeadLetterEvent): void {
    line(`DEAD ${event.key} attempts ${event.attempts} by ${instance}`);
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
/** One Redis (REDIS_URL) or a cluster (REDIS_CLUSTER_NODES): the same app on either. */
const redis = env.REDIS_CLUSTER_NODES
  ? {
      cluster: {
        nodes: env.REDIS_CLUSTER_NODES.split(',').map((node) => {
          const [host, port] = node.split(':');
          return { host: host!, port: Number(port) };
        }),
      },
    }
  : { url: env.REDIS_URL! };
/* ------------------------------------------------------------------------------------------------
 * A named service-app account (issue 24), only when SERVICE_APP_ACCOUNT is set:
 *   SERVICE_APP_ACCOUNT          its name (`north`): its endpoints are /api/service-flow/<name> and
 *                                /api/fulfillment/<name> (the module's one controller)
 *   SERVICE_APP_ACCOUNT_OPTIONS  its `registerAccount` options as JSON (statusCheck with its keys and
 *                                POS Sales ID, callbackCredentials, callbackUrl...)
 * A handler filtered on that account prints `ACCOUNT <account> <orderId> by <instance>` when it runs.
 * ---------------------------------------------------------------------------------------------- */
function serviceAccountBlock(): { imports: DynamicModule[]; providers: Array<new () => unknown> } {
  const name = env.SERVICE_APP_ACCOUNT;
  if (!name) return { imports: [], providers: [] };

  @Injectable()
  class ServiceAccountHandlers {
    @OnFulfillment(undefined, { account: name, id: 'replica-account-fulfillment' })
    seen(order: FulfillmentRequestedEvent): void {
      line(`ACCOUNT ${order.account ?? 'default'} ${order.orderId} by ${instance}`);
    }
  }

  const options = JSON.parse(env.SERVICE_APP_ACCOUNT_OPTIONS ?? '{}') as ServiceAppAccountOverrides;
  return {
    imports: [ServiceAppModule.registerAccount({ name, ...options })],
    providers: [ServiceAccountHandlers],
  };
}
const serviceAccount = serviceAccountBlock();
/* --------------------------------------------------------------------------------------------- */

const reconcileMs = Number(env.RECONCILE_MS ?? 0);
const recheckMs = Number(env.RECHECK_MS ?? 0);

/* ===================== Checkout accounts (issue 24): ACCOUNTS=north,... ======================
 * Each name is registered as a named checkout account with its own keys and POS Sales ID, and as a
 * named SMS account with its own SMS keys, which sends its invoices' receipts (the sandbox's
 * `--json` `accounts`). Additions, all of them here:
 *   POST /replica/accounts/:account/invoices  { clientReference, amount }: an invoice of that account
 *   PAID <ref> <account> by <instance>        a paid event's line, with the account it carries
 */
const checkoutAccountNames = (env.ACCOUNTS ?? '')
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean);

@Injectable()
class AccountLines {
  @OnCheckoutPaid()
  paid(event: CheckoutPaidEvent): void {
    line(`PAID ${event.clientReference} ${event.account} by ${instance}`);
  }
}

@Controller('replica/accounts')
class ReplicaAccountsController {
  constructor(private readonly checkout: CheckoutService) {}

  @Post(':account/invoices')
  createInvoice(
    @Param('account') account: string,
    @Body() body: { clientReference: string; amount: number },
  ) {
    return this.checkout.forAccount(account).createInvoice({
      clientReference: body.clientReference,
      totalAmount: body.amount,
      description: `Order ${body.clientReference}`,
    });
  }
}

const checkoutAccounts: { imports: DynamicModule[]; controllers: Type[]; providers: Type[] } = {
  imports: checkoutAccountNames.flatMap((name) => {
    const account = sandbox.accounts?.find((candidate) => candidate.name === name);
    if (!account)
      throw new Error(`ACCOUNTS: the sandbox serves no account "${name}" (start it with --accounts)`);
    return [
      CheckoutModule.registerAccount({
        name,
        ...account.credentials.api,
        posSalesId: account.posSalesId,
        merchantAccountNumber: account.posSalesId,
      }),
      SmsModule.registerAccount({
        name,
        ...account.credentials.sms,
        senderId: `Replica${name}`.slice(0, 11),
      }),
    ];
  }),
  controllers: checkoutAccountNames.length > 0 ? [ReplicaAccountsController] : [],
  providers: checkoutAccountNames.length > 0 ? [AccountLines] : [],
};
/* ============================ end of the checkout accounts block ============================ */

@Module({
  imports: [
    EventEmitterModule.forRoot(),
    HubtelRedisModule.forRoot(redis),
    HubtelBullmqModule.forRoot({
      ...(env.BULLMQ_REDIS_URL ? { url: env.BULLMQ_REDIS_URL } : redis),
      ...(env.LOCK_MS ? { lockDurationMs: Number(env.LOCK_MS) } : {}),
      ...(env.STALLED_MS ? { stalledIntervalMs: Number(env.STALLED_MS) } : {}),
      ...(env.BULLMQ_PREFIX ? { prefix: env.BULLMQ_PREFIX } : {}),
    }),
    SmsModule.forRoot({ ...sandbox.credentials.sms, baseUrl: sandbox.baseUrls.sms, senderId: 'Replica' }),
    CheckoutModule.forRoot({
      ...api,
      posSalesId: sandbox.posSalesId,
      publicBaseUrl: publicUrl,
      returnUrl: `${publicUrl}/paid`,
      cancellationUrl: `${publicUrl}/cancelled`,
      baseUrls: { checkout: sandbox.baseUrls.checkout, status: sandbox.baseUrls.status },
      handlers: { retry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 400 } },
      // RECONCILE_MS: every invoice not paid is status-checked that often (first check at once).
      reconciliation: reconcileMs
        ? { enabled: true, delayMs: 0, intervalMs: reconcileMs, maxIntervalMs: reconcileMs }
        : { enabled: false },
      verification: {
        ...(recheckMs
          ? {
              recheck: {
                attempts: 2,
                delayMs: recheckMs,
                maxDelayMs: 2 * recheckMs,
                minIntervalMs: recheckMs,
              },
            }
          : {}),
        ...(env.CONFIRM_CALLBACKS === '0' ? { confirmWithStatusCheck: false } : {}),
      },
    }),
    ServiceAppModule.forRoot({
      callbackUrl: env.FULFILLMENT_CALLBACK_URL ?? sandbox.baseUrls.fulfillmentCallback,
      callbackTimeoutMs: 2_000,
      callbackRetry: { baseDelayMs: 200, maxDelayMs: 1_000 },
      statusCheck: { ...api, posSalesId: sandbox.posSalesId, url: sandbox.baseUrls.status },
      verification: { recheckDelay: { baseDelayMs: 100, maxDelayMs: 1_000 } },
    }),
    ...serviceAccount.imports,
    ...checkoutAccounts.imports,
  ],
  controllers: [ReplicaController, ...checkoutAccounts.controllers],
  providers: [ShopHandlers, BundleFlow, ...serviceAccount.providers, ...checkoutAccounts.providers],
})
class ReplicaModule {}

const app: INestApplication = await NestFactory.create(ReplicaModule, { logger: ['error', 'warn', 'log'] });
app.enableShutdownHooks();
await app.listen(Number(env.PORT ?? 0), env.HOST ?? '127.0.0.1');
line(`READY ${instance} ${await app.getUrl()}`);
