/**
 * The example app with REDIS_URL: its records in Redis and its recorded jobs on BullMQ workers
 * (one process here; several replicas are test/bullmq-replicas.e2e-spec.ts).
 */
import { Queue } from 'bullmq';
import { HUBTEL_JOB_RUNNER, HUBTEL_STORE } from 'nestjs-hubtel';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { BullmqJobRunner } from 'nestjs-hubtel/bullmq';
import { RedisStore } from 'nestjs-hubtel/redis';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { startExampleApp, type ExampleApp } from '../src/bootstrap.js';
import {
  FAST_OVERRIDES,
  placeOrder,
  pressPayPageButton,
  waitForOrder,
} from './support/example-app.harness.js';
import { RedisServer, redisBinary } from './support/redis-server.js';

redisBinary.describe('the example app with REDIS_URL', () => {
  let redis: RedisServer;
  let sandbox: HubtelSandbox;
  let example: ExampleApp;

  beforeAll(async () => {
    redis = await RedisServer.start();
    sandbox = await HubtelSandbox.start();
    example = await startExampleApp(
      {
        port: 0,
        host: '127.0.0.1',
        shopName: 'Test Shop',
        redisUrl: redis.url,
        platform: { kind: 'sandbox', instance: sandbox },
        overrides: FAST_OVERRIDES,
      },
      { logger: false },
    );
  });
  afterAll(async () => {
    await example?.close();
    await sandbox?.stop();
    await redis?.dispose();
  });

  it('keeps its records in Redis and runs its jobs on BullMQ: a paid order gets its receipt, through a BullMQ job; reconciliation is a BullMQ job scheduler', async () => {
    expect(example.app.get(HUBTEL_STORE, { strict: false })).toBeInstanceOf(RedisStore);
    expect(example.app.get(HUBTEL_JOB_RUNNER, { strict: false })).toBeInstanceOf(BullmqJobRunner);

    const { orderId, checkoutUrl } = await placeOrder(example.url, {
      product: 'adinkra-tote',
      phone: '0277000111',
    });
    await pressPayPageButton(checkoutUrl, 'pay-momo');
    await waitForOrder(
      example.url,
      orderId,
      (order) => order.status === 'paid' && order.receipt.status === 'sent',
    );
    expect(sandbox.messagesTo('233277000111')).toHaveLength(1);

    // The paid event ran as a BullMQ job (the default: every run, the first included, is one).
    const queue = new Queue('checkout', {
      connection: { url: redis.url },
      prefix: BULLMQ_RUNNER_DEFAULTS.prefix,
    });
    // The reconciliation passes are a BullMQ job scheduler, one pass per interval whatever the
    // number of replicas.
    const reconcile = new Queue('checkout-reconcile', {
      connection: { url: redis.url },
      prefix: BULLMQ_RUNNER_DEFAULTS.prefix,
    });
    try {
      const runs = await queue.getJobs(['completed']);
      expect(runs.map((job) => job.name)).toContain('hubtel.checkout.paid');
      expect(await reconcile.getJobSchedulers()).toEqual([
        expect.objectContaining({ key: 'checkout-reconcile' }),
      ]);
    } finally {
      await Promise.all([queue.close(), reconcile.close()]);
    }
  });
});
