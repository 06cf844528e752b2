/**
 * The fulfillment callback's retry could not be queued (issue 30, then issue 34's follow-ups): the
 * callback is recorded before the fulfillment job is settled and sent right after it, from the
 * process that ran the handlers; when that first send fails (the platform answers 503) its retry
 * must be queued, and the runner refuses the request (its queue down) while the store answers.
 * The fulfillment job is then retried (more times than its handler's attempts, never
 * dead-lettered for it) until the callback's retry is queued; the platform gets it once
 * accepted, and the handler ran once. Real HTTP through the merchant app with the sandbox as
 * the platform; the runner is the in-process one, its `enqueue` made to fail (the BullMQ outage
 * itself: test/multi-instance.e2e-spec.ts).
 */
import { randomUUID } from 'node:crypto';
import { Global, Module } from '@nestjs/common';
import { HUBTEL_JOB_RUNNER, InProcessJobRunner, MemoryStore, type JobRunRequest } from 'nestjs-hubtel';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { SERVICE_APP_JOBS, SERVICE_APP_PIPELINE } from '../libs/service-app/src/service-app.constants.js';
import type { InboundPipeline } from '#internal';
import { successCallback } from './support/service-app.fixtures.js';
import { onAppChannel, startMerchant, type Merchant } from './support/service-app.harness.js';

/** The in-process runner, whose queue refuses the next `failing` callback run requests. */
class QueueDownRunner extends InProcessJobRunner {
  failing = 0;
  refused = 0;
  override async enqueue(pipeline: string, request: JobRunRequest): Promise<void> {
    if (request.type === SERVICE_APP_JOBS.callback && this.failing > 0) {
      this.failing--;
      this.refused++;
      throw new Error('the queue is down');
    }
    return super.enqueue(pipeline, request);
  }
}

describe('fulfillment callback not queued when the handlers settled', () => {
  const runner = new QueueDownRunner();
  const store = new MemoryStore({ sweepIntervalMs: 0 });
  let sandbox: HubtelSandbox;
  let merchant: Merchant;

  @Global()
  @Module({ providers: [{ provide: HUBTEL_JOB_RUNNER, useValue: runner }], exports: [HUBTEL_JOB_RUNNER] })
  class RunnerModule {}

  beforeAll(async () => {
    sandbox = onAppChannel(await HubtelSandbox.start());
    merchant = await startMerchant(
      'express',
      {
        callbackUrl: sandbox.baseUrls().fulfillmentCallback,
        callbackTimeoutMs: 2_500,
        callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 6_000 },
        // Fewer attempts than the queue's refusals: what follows a success is never dead-lettered.
        fulfillmentRetry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
        store,
      },
      {},
      { imports: [{ module: RunnerModule }] },
    );
  });

  afterAll(async () => {
    await merchant?.close();
    await sandbox?.stop();
    store.close();
  });

  async function toCart() {
    const session = sandbox.serviceApp(merchant.url);
    await session.start();
    await session.reply('0241234567');
    await session.choose('1gb');
    return session;
  }

  it('the fulfillment job is retried until its callback is queued; the platform gets it once, the handler ran once', async () => {
    const session = await toCart();
    runner.refused = 0;
    runner.failing = 4;
    sandbox.faults.add({ match: { path: '/callback' }, times: 1, status: 503 });
    const { order } = await session.pay();
    const callback = await session.waitForCallback();
    expect(callback.body).toStrictEqual(successCallback(session.sessionId, order.orderId));
    await merchant.app.get<InboundPipeline>(SERVICE_APP_PIPELINE).drain();
    expect(runner.refused).toBe(4);
    expect(merchant.fulfiller.calls.get(order.orderId)).toBe(1);
    expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === order.orderId)).toHaveLength(1);
    expect(await merchant.fulfillment.getOrder(order.orderId)).toMatchObject({
      handler: { status: 'done' },
      // The first send (refused by the platform), then the queued retry.
      callback: { serviceStatus: 'success', status: 'done', attempts: 2 },
    });
  });

  it('a handler that gave up: its "failed" callback is retried until queued, then the order is dead, one dead letter', async () => {
    const session = await toCart();
    const orderId = randomUUID();
    merchant.fulfiller.modes.set(orderId, 'throw');
    runner.refused = 0;
    runner.failing = 3;
    sandbox.faults.add({ match: { path: '/callback' }, times: 1, status: 503 });
    await session.pay({ orderId });
    const callback = await session.waitForCallback();
    expect(callback.body).toMatchObject({ OrderId: orderId, ServiceStatus: 'failed', MetaData: null });
    await merchant.app.get<InboundPipeline>(SERVICE_APP_PIPELINE).drain();
    expect(runner.refused).toBe(3);
    expect(merchant.fulfiller.calls.get(orderId)).toBe(2); // its 2 attempts, not one more
    expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(1);
    expect(merchant.fulfiller.dead.filter((d) => d.key === orderId)).toHaveLength(1);
    expect(await merchant.fulfillment.getOrder(orderId)).toMatchObject({
      handler: { status: 'dead', attempts: 2 },
      callback: { serviceStatus: 'failed', status: 'done', attempts: 2 },
    });
  });
});
