/**
 * The example app with REDIS_URL: every record in Redis and every recorded job on BullMQ on the
 * same Redis (src/platform/job-runner.modules.ts), so two replicas serve one shop.
 *   - REDIS_URL is read and checked (a bad value names the variable, never echoes a password);
 *   - two replicas in real-platform mode (HUBTEL_* variables naming one external sandbox, one
 *     PUBLIC_URL in front of both), each with the Redis store and the BullMQ runner: an order
 *     placed through one is seen, paid and receipted through the other, its paid event run as a
 *     BullMQ job; reconciliation is one BullMQ job scheduler for both; two replicas changing one
 *     order at once lose no change;
 *   - the banner says which store is in use (the Redis URL with its password masked);
 *   - the example app as `npm start` runs it (its own process) stops and exits at once with Redis gone;
 *   - the same on a Redis Cluster (REDIS_CLUSTER_NODES).
 * (Several replicas taking over each other's jobs: test/multi-instance.e2e-spec.ts.)
 */
import { Queue } from 'bullmq';
import { HUBTEL_JOB_RUNNER, HUBTEL_STORE, HubtelConfigError, HubtelRedisConfigError } from 'nestjs-hubtel';
import { BullmqJobRunner } from 'nestjs-hubtel/bullmq';
import { CheckoutEvents } from 'nestjs-hubtel/checkout';
import { RedisStore } from 'nestjs-hubtel/redis';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { bullmqJobId } from '../libs/bullmq/src/bullmq.jobs.js';
import { exampleConfigFromEnv } from '../src/app.config.js';
import { banner } from '../src/banner.js';
import { startExampleApp, type ExampleApp } from '../src/bootstrap.js';
import { maskRedisUrl } from '../src/platform/store.module.js';
import { findProduct } from '../src/shop/catalog.js';
import { OrdersService } from '../src/shop/orders.service.js';
import {
  FAST_OVERRIDES,
  getOrder,
  placeOrder,
  pressPayPageButton,
  startExampleInProcess,
  waitForOrder,
} from './support/example-app.harness.js';
import { RedisCluster, redisClusterBinaries } from './support/redis-cluster.js';
import { RedisServer, freePort, redisBinary } from './support/redis-server.js';
import { AppProcess } from './support/multi-process.js';

/** The example merchant app, as `npm start` runs it. */
const EXAMPLE_APP = new URL('../src/main.ts', import.meta.url).pathname;

function configError(env: Record<string, string>): unknown {
  try {
    exampleConfigFromEnv(env);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('REDIS_URL', () => {
  it('is taken as given, in sandbox and in real-platform mode', () => {
    expect(exampleConfigFromEnv({ REDIS_URL: 'redis://127.0.0.1:6379' })).toMatchObject({
      redisUrl: 'redis://127.0.0.1:6379',
      platform: { kind: 'sandbox' },
    });
    expect(exampleConfigFromEnv({}).redisUrl).toBeUndefined();
    expect(
      exampleConfigFromEnv({
        HUBTEL_CLIENT_ID: 'id',
        HUBTEL_CLIENT_SECRET: 'secret',
        HUBTEL_SMS_CLIENT_ID: 'sid',
        HUBTEL_SMS_CLIENT_SECRET: 'ssecret',
        HUBTEL_SMS_SENDER_ID: 'Shop',
        PUBLIC_URL: 'https://shop.example.com',
        REDIS_URL: 'rediss://:pw@redis.example.com:6380/2',
      }),
    ).toMatchObject({ redisUrl: 'rediss://:pw@redis.example.com:6380/2', platform: { kind: 'hubtel' } });
  });

  it.each([
    'http://127.0.0.1:6379',
    '127.0.0.1:6379',
    'redis://',
    'redis://:hunter2-secret@127.0.0.1:6379/not-a-db',
  ])('refuses %s, naming REDIS_URL and echoing no password', (value) => {
    const error = configError({ REDIS_URL: value });
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as Error).message).toContain('REDIS_URL');
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('is shown with its password masked', () => {
    expect(maskRedisUrl('redis://:hunter2@127.0.0.1:6379')).toBe('redis://:****@127.0.0.1:6379');
    expect(maskRedisUrl('rediss://app:hunter2@redis.example.com:6380/1')).toBe(
      'rediss://app:****@redis.example.com:6380/1',
    );
    expect(maskRedisUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });
});

describe('REDIS_CLUSTER_NODES', () => {
  it('lists some nodes of a cluster, host:port comma-separated (IPv6 in brackets)', () => {
    expect(
      exampleConfigFromEnv({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-2.internal:7001,[::1]:7002' }),
    ).toMatchObject({
      redisClusterNodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-2.internal', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
  });

  it.each(['10.0.0.1', '10.0.0.1:0', 'redis://10.0.0.1:7000', '10.0.0.1:7000,,'])(
    'refuses %s, naming it',
    (value) => {
      expect(configError({ REDIS_CLUSTER_NODES: value })).toMatchObject({
        message: expect.stringContaining('REDIS_CLUSTER_NODES'),
      });
    },
  );

  it('is not taken with REDIS_URL', () => {
    expect(
      configError({ REDIS_CLUSTER_NODES: '10.0.0.1:7000', REDIS_URL: 'redis://10.0.0.1:7000' }),
    ).toMatchObject({
      message: expect.stringContaining('set one'),
    });
  });
});

describe('without REDIS_URL', () => {
  it('the banner says the records are in memory', async () => {
    const shop = await startExampleInProcess();
    try {
      expect(shop.example.store.kind).toBe('memory');
      expect(banner(shop.example)).toMatch(/^ {2}Store: +memory \(records lost on restart\)$/m);
    } finally {
      await shop.close();
    }
  });
});

redisBinary.describe('two replicas of the example on one Redis and one external sandbox', () => {
  const CREDENTIALS = {
    sms: { clientId: 'replica-sms-id', clientSecret: 'replica-sms-secret' },
    api: { clientId: 'replica-api-id', clientSecret: 'replica-api-secret' },
  };
  let redis: RedisServer;
  let platform: HubtelSandbox;
  let a: ExampleApp;
  let b: ExampleApp;
  /** The one public address of the shop (a load balancer would sit there; here it is replica B). */
  let publicUrl: string;

  /** The variables naming the external sandbox as the platform. */
  const platformEnv = () => ({
    HUBTEL_CLIENT_ID: CREDENTIALS.api.clientId,
    HUBTEL_CLIENT_SECRET: CREDENTIALS.api.clientSecret,
    HUBTEL_SMS_CLIENT_ID: CREDENTIALS.sms.clientId,
    HUBTEL_SMS_CLIENT_SECRET: CREDENTIALS.sms.clientSecret,
    HUBTEL_SMS_SENDER_ID: 'Replicas',
    HUBTEL_SMS_URL: platform.url,
    HUBTEL_CHECKOUT_URL: platform.url,
    HUBTEL_STATUS_URL: platform.url,
    HUBTEL_CALLBACK_URL: platform.url,
    HUBTEL_POS_SALES_ID: '11684',
    HUBTEL_MERCHANT_ACCOUNT_NUMBER: '11684',
    HUBTEL_RETRY_BASE_DELAY_MS: '5',
  });

  /** A replica configured the way `npm start` is: environment variables only. */
  async function replica(port: number): Promise<ExampleApp> {
    const config = exampleConfigFromEnv({
      ...platformEnv(),
      PORT: String(port),
      // A free port for /health and /metrics: the default, PORT + 1, may be another process's.
      OPS_PORT: '0',
      PUBLIC_URL: publicUrl,
      REDIS_URL: redis.url,
    });
    return startExampleApp(
      {
        ...config,
        overrides: { checkout: FAST_OVERRIDES.checkout, serviceApp: FAST_OVERRIDES.serviceApp },
      },
      { logger: false },
    );
  }

  beforeAll(async () => {
    redis = await RedisServer.start();
    platform = await HubtelSandbox.start({ credentials: CREDENTIALS, posSalesId: '11684' });
    const portB = await freePort();
    publicUrl = `http://127.0.0.1:${portB}`;
    b = await replica(portB);
    a = await replica(await freePort());
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await platform?.stop();
    await redis?.dispose();
  });

  /** A BullMQ queue of the replicas (the runner's default prefix), closed after `use`. */
  async function withQueue<T>(name: string, use: (queue: Queue) => Promise<T>): Promise<T> {
    const queue = new Queue(name, { connection: { url: redis.url }, prefix: BULLMQ_RUNNER_DEFAULTS.prefix });
    try {
      return await use(queue);
    } finally {
      await queue.close();
    }
  }

  it('both keep their records in Redis and run their jobs on BullMQ, and say so', () => {
    for (const replica of [a, b]) {
      expect(replica.mode).toBe('hubtel');
      expect(replica.app.get(HUBTEL_STORE, { strict: false })).toBeInstanceOf(RedisStore);
      expect(replica.app.get(HUBTEL_JOB_RUNNER, { strict: false })).toBeInstanceOf(BullmqJobRunner);
      expect(replica.store).toMatchObject({ kind: 'redis', redisUrl: redis.url });
      expect(banner(replica)).toContain(`  Store:                 Redis ${redis.url}\n`);
    }
  });

  it('reconciliation is one BullMQ job scheduler for both replicas (one pass per interval, not one per replica)', async () => {
    expect(await withQueue('checkout-reconcile', (queue) => queue.getJobSchedulers())).toEqual([
      expect.objectContaining({ key: 'checkout-reconcile' }),
    ]);
  });

  it('an order placed through one replica is seen, paid and receipted through the other', async () => {
    const { orderId, checkoutUrl } = await placeOrder(a.url, {
      product: 'adinkra-tote',
      phone: '0277000222',
    });
    // Replica B knows the order before anything happened to it.
    expect(await getOrder(b.url, orderId)).toMatchObject({ id: orderId, status: 'awaiting-payment' });
    // The payer returns to the public address; the callback goes there too (replica B).
    expect(platform.invoice(orderId)).toMatchObject({ callbackUrl: `${publicUrl}/hubtel/checkout/callback` });
    expect(await pressPayPageButton(checkoutUrl, 'pay-momo')).toBe(`${publicUrl}/orders/${orderId}`);
    const paid = await waitForOrder(
      a.url,
      orderId,
      (o) => o.status === 'paid' && o.receipt.status === 'sent',
    );
    expect(paid.payment).toMatchObject({ amountPaid: 60, confirmedByStatusCheck: true });
    expect(await getOrder(b.url, orderId)).toEqual(paid);
    await platform.settled();
    expect(platform.messagesTo('233277000222')).toHaveLength(1);
    // The paid event (which sends the receipt) ran as a BullMQ job: its first run, completed.
    const run = await withQueue('checkout', async (queue) => {
      const job = await queue.getJob(bullmqJobId(`hubtel:checkout:job:${CheckoutEvents.Paid}:${orderId}`, 1));
      return job && { name: job.name, state: await job.getState() };
    });
    expect(run).toEqual({ name: CheckoutEvents.Paid, state: 'completed' });
  });

  it('two replicas changing one order at once lose neither change', async () => {
    const ordersA = a.app.get(OrdersService);
    const ordersB = b.app.get(OrdersService);
    const product = findProduct('shea-soap')!;
    const orders = await Promise.all(
      Array.from({ length: 20 }, () => ordersA.create(product, '233277000333')),
    );
    await Promise.all(
      orders.flatMap((order) => [
        ordersB.markPaid(order.id, {
          amountPaid: order.amount,
          source: 'callback',
          confirmedByStatusCheck: true,
        }),
        ordersA.claimReceipt(order.id, '233277000333'),
        ordersB.checkoutStarted(order.id, { checkoutId: `chk_${order.id}`, checkoutUrl: 'https://pay' }),
      ]),
    );
    for (const order of orders) {
      expect(await ordersA.get(order.id)).toMatchObject({
        status: 'paid',
        receipt: { status: 'sending' },
        checkoutId: `chk_${order.id}`,
      });
    }
  });

  // Last: the server restarts empty (no persistence in tests).
  it('while Redis is down the shop answers 503 (not 500) and starts no checkout; once it is back, it sells again', async () => {
    const invoicesBefore = platform.invoices().length;
    await redis.stop();
    try {
      const ordered = await fetch(`${a.url}/orders`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ product: 'shea-soap', phone: '0277000444' }),
      });
      expect(ordered.status).toBe(503);
      expect(await ordered.json()).toEqual({
        statusCode: 503,
        code: 'STORE_UNAVAILABLE',
        message: expect.stringContaining('try again'),
      });
      const page = await fetch(`${b.url}/api/orders/ord_${'0'.repeat(24)}`);
      expect(page.status).toBe(503);
      expect(platform.invoices()).toHaveLength(invoicesBefore);
    } finally {
      await redis.restart();
    }
    // Each replica reconnects on its own: wait until both read the store again (404: no such order).
    for (const replica of [a, b]) {
      for (;;) {
        const res = await fetch(`${replica.url}/api/orders/ord_${'0'.repeat(24)}`);
        if (res.status === 404) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    const { orderId } = await placeOrder(a.url, { product: 'shea-soap', phone: '0277000444' });
    expect(await getOrder(b.url, orderId)).toMatchObject({ status: 'awaiting-payment' });
  });

  it('the example app (src/main.ts) whose Redis is away stops on SIGTERM and exits at once, code 0', async () => {
    // Its store's client used to wait for an end a retried connection never sends (close() hung),
    // each BullMQ worker waited out its close before the next module's, and then a closed worker's
    // wait for a job (a timer of BullMQ's own) kept the process up to 11 s after "Stopped.".
    const shop = await AppProcess.start('example', {
      entry: EXAMPLE_APP,
      env: { ...platformEnv(), REDIS_URL: redis.url, NO_COLOR: '1' },
    });
    await redis.stop();
    try {
      const from = shop.output.mark;
      const stopping = shop.process.stop(20_000);
      await shop.output.waitFor(/^Stopped\.$/m, { from, timeoutMs: 20_000 });
      const exited = await Promise.race([
        shop.process.whenExited().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(resolve, 2_000, false)),
      ]);
      expect(exited).toBe(true);
      await stopping;
      expect(shop.output.all.slice(from)).toContain('[example: exited, code 0]');
    } finally {
      await shop.kill();
      await redis.restart();
    }
  });
});

redisClusterBinaries.describe('the example on a 3-master Redis Cluster (REDIS_CLUSTER_NODES)', () => {
  let cluster: RedisCluster;
  const started: ExampleApp[] = [];
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 30_000);
  afterAll(async () => {
    for (const app of started) await app.close();
    await cluster?.dispose();
  });

  async function start(env: Record<string, string>): Promise<ExampleApp> {
    const config = exampleConfigFromEnv({ PORT: '0', ...env });
    const app = await startExampleApp(
      {
        ...config,
        platform: { kind: 'sandbox', port: 0, host: '127.0.0.1' },
        overrides: { checkout: FAST_OVERRIDES.checkout, serviceApp: FAST_OVERRIDES.serviceApp },
      },
      { logger: false },
    );
    started.push(app);
    return app;
  }

  it('refuses at startup a REDIS_URL at one node of the cluster, naming REDIS_CLUSTER_NODES', async () => {
    // Real-platform mode (nothing called at startup): no embedded sandbox left running by the
    // failed start.
    const config = exampleConfigFromEnv({
      HUBTEL_CLIENT_ID: 'id',
      HUBTEL_CLIENT_SECRET: 'secret',
      HUBTEL_SMS_CLIENT_ID: 'sid',
      HUBTEL_SMS_CLIENT_SECRET: 'ssecret',
      HUBTEL_SMS_SENDER_ID: 'Shop',
      PUBLIC_URL: 'https://shop.example.com',
      PORT: '0',
      REDIS_URL: `redis://127.0.0.1:${cluster.nodes[0]!.port}`,
    });
    const refused = await startExampleApp(config, { logger: false }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(HubtelRedisConfigError);
    expect(refused).toMatchObject({
      code: 'HUBTEL_REDIS_UNUSABLE',
      option: 'REDIS_URL',
      reason: 'CLUSTER_NODE_WITHOUT_CLUSTER_CLIENT',
      message: expect.stringContaining('REDIS_CLUSTER_NODES=host:port,host:port'),
    });
  });

  it('sells on the cluster: an order is placed, paid and receipted, its records spread over every master', async () => {
    const shop = await start({ REDIS_CLUSTER_NODES: cluster.nodesEnv });
    expect(shop.store.kind).toBe('redis');
    expect(banner(shop)).toContain(`Redis Cluster ${cluster.nodesEnv}`);
    const { orderId, checkoutUrl } = await placeOrder(shop.url, {
      product: 'adinkra-tote',
      phone: '0277000333',
    });
    expect(await pressPayPageButton(checkoutUrl, 'pay-momo')).toBe(`${shop.publicUrl}/orders/${orderId}`);
    const paid = await waitForOrder(
      shop.url,
      orderId,
      (o) => o.status === 'paid' && o.receipt.status === 'sent',
    );
    expect(paid.payment).toMatchObject({ amountPaid: 60 });
    // /health: the store and the BullMQ runner up on the cluster.
    const health = await fetch(`${shop.opsUrl}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      info: {
        hubtel_store: { status: 'up', stores: expect.arrayContaining(['RedisStore']) },
        hubtel_runner: { status: 'up', runner: 'BullmqJobRunner' },
      },
    });
    // Spread, not one hash tag for all: records of one order land on more than one master.
    const holding = (await cluster.keysPerMaster()).filter((count) => count > 0);
    expect(holding.length).toBeGreaterThanOrEqual(2);
  });
});
