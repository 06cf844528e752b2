/*
 * Dead letters, end to end, on the memory store, on Redis and on a Redis Cluster (jobs on BullMQ
 * there): a real Nest app (checkout against the test sandbox, real HTTP) with two paid handlers,
 * one of which fails until the test "fixes" it. The job is dead-lettered; listed (naming the
 * handler that succeeded); replayed once fixed (by CheckoutService, and on Redis by
 * `hubtel-trigger dead-letters` from outside the app, which queues the run on BullMQ for the
 * running app to take): only the failed handler runs again, the job ends done, the dead letter
 * leaves the list.
 */
import { PassThrough } from 'node:stream';
import { Injectable, type INestApplication } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import {
  HubtelDeadLetterNotFoundError,
  HubtelError,
  HubtelNotDeadLetterError,
  HUBTEL_JOB_RUNNER,
  type HubtelStore,
} from 'nestjs-hubtel';
import { type InboundPipeline, type JobRecord } from '#internal';
import { SERVICE_APP_PIPELINE } from '../libs/service-app/src/service-app.constants.js';
import { bullmqJobId } from '../libs/bullmq/src/bullmq.jobs.js';
import { BullmqJobRunner } from 'nestjs-hubtel/bullmq';
import {
  CheckoutModule,
  CheckoutEvents,
  CheckoutService,
  OnCheckoutPaid,
  type CheckoutPaidEvent,
} from 'nestjs-hubtel/checkout';
import {
  FulfillmentService,
  OnFulfillment,
  ServiceAppModule,
  fulfilled,
  type FulfillmentRequestedEvent,
} from 'nestjs-hubtel/service-app';
import {
  buildFulfillmentRequest,
  createTestSandbox,
  runTriggerCli,
  sendFulfillmentRequest,
  type TestSandbox,
} from 'nestjs-hubtel/testing';
import { FakeHttpServer } from './support/fake-http-server.js';
import { eventually } from './support/multi-process.js';
import { STORE_KINDS_WITH_CLUSTER, storeFixture } from './support/test-stores.js';

/** `receipt` always succeeds; `ship` fails while `broken` (the fix is to set it false). */
@Injectable()
class Fulfilment {
  readonly receipts: string[] = [];
  readonly shipments: string[] = [];
  broken = true;

  @OnCheckoutPaid()
  receipt(event: CheckoutPaidEvent): void {
    this.receipts.push(event.clientReference);
  }

  @OnCheckoutPaid()
  ship(event: CheckoutPaidEvent): void {
    this.shipments.push(event.clientReference);
    if (this.broken) throw new Error('the warehouse API is down');
  }
}

const PAID = CheckoutEvents.Paid;
const RECEIPT = `Fulfilment.receipt@${PAID}`;

function streams() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  return { io: { stdin: new PassThrough(), stdout, stderr, env: {} }, out: () => out, err: () => err };
}

// On the cluster too: dead letters spread over its masters, and are listed from every one.
for (const kind of STORE_KINDS_WITH_CLUSTER) {
  const stores = storeFixture(kind);
  stores.describe(`dead letters: list and replay (${kind} store)`, () => {
    let hubtel: TestSandbox;
    let store: HubtelStore;
    let app: INestApplication;
    let checkout: CheckoutService;
    let fulfilment: Fulfilment;

    beforeAll(async () => {
      hubtel = await createTestSandbox();
      store = await stores.create();
      const moduleRef = await Test.createTestingModule({
        imports: [
          EventEmitterModule.forRoot(),
          // Redis, Cluster: the app's jobs run on BullMQ (its workers take a replay queued by the CLI).
          ...stores.jobRunnerImports(),
          CheckoutModule.forRoot(
            hubtel.checkoutOptions({
              store,
              // Two runs, then dead.
              handlers: { retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 } },
            }),
          ),
        ],
        providers: [Fulfilment],
      }).compile();
      app = moduleRef.createNestApplication({ logger: false });
      await app.listen(0, '127.0.0.1');
      hubtel.attach(app);
      checkout = app.get(CheckoutService);
      fulfilment = app.get(Fulfilment);
    }, 60_000);

    afterAll(async () => {
      await app?.close();
      await hubtel?.stop();
      await stores.dispose();
    });

    /**
     * The record of a job once it settled (done or dead). Memory: the runs are this process's
     * (drain). BullMQ: a run queued in Redis is not this process's until a worker takes it, so
     * the record itself is watched.
     */
    async function settled(id: string): Promise<JobRecord> {
      if (kind === 'memory') await checkout.drain();
      return eventually(`job ${id} to settle`, async () => {
        const record = (await store.get<JobRecord>(`hubtel:checkout:job:${id}`))?.value;
        return record?.status === 'done' || record?.status === 'dead' ? record : undefined;
      });
    }

    /** An invoice paid at the sandbox (callback delivered); resolves once its job settled. */
    async function paid(): Promise<string> {
      const invoice = await checkout.createInvoice({ totalAmount: 12, description: 'Bundle' });
      await hubtel.pay(invoice.clientReference);
      await settled(`${PAID}:${invoice.clientReference}`);
      return invoice.clientReference;
    }

    it('replays a dead letter through CheckoutService: only the failed handler runs again', async () => {
      fulfilment.broken = true;
      const ref = await paid();
      expect(fulfilment.receipts.filter((r) => r === ref)).toHaveLength(1);
      expect(fulfilment.shipments.filter((r) => r === ref)).toHaveLength(2);

      const letters = (await checkout.listDeadLetters()).filter((letter) => letter.key.startsWith(ref));
      expect(letters).toEqual([
        expect.objectContaining({
          pipeline: 'checkout',
          type: PAID,
          attempts: 2,
          lastError: 'the warehouse API is down',
          succeededHandlers: [RECEIPT],
        }),
      ]);

      fulfilment.broken = false;
      await checkout.replayDeadLetter(letters[0]!.id);
      expect((await settled(letters[0]!.id)).status).toBe('done');

      expect(fulfilment.receipts.filter((r) => r === ref)).toHaveLength(1);
      expect(fulfilment.shipments.filter((r) => r === ref)).toHaveLength(3);
      expect((await checkout.listDeadLetters()).filter((letter) => letter.key.startsWith(ref))).toEqual([]);
    });

    it('a replay of an unknown id, or of a job that is not dead, is refused with a typed error', async () => {
      await expect(checkout.replayDeadLetter(`${PAID}:no-such-ref`)).rejects.toBeInstanceOf(
        HubtelDeadLetterNotFoundError,
      );
      await expect(checkout.replayDeadLetter(`${PAID}:no-such-ref`)).rejects.toMatchObject({
        code: 'HUBTEL_NOT_FOUND',
      });
      fulfilment.broken = false;
      const ref = await paid();
      const id = `${PAID}:${ref}`;
      expect((await settled(id)).status).toBe('done');
      await expect(checkout.replayDeadLetter(id)).rejects.toBeInstanceOf(HubtelNotDeadLetterError);
    });

    if (kind === 'redis-cluster') {
      it('lists the dead letters of every master of the cluster (one node held about a third)', async () => {
        fulfilment.broken = true;
        const refs = await Promise.all(Array.from({ length: 24 }, () => paid()));
        const listed = new Set((await checkout.listDeadLetters()).map((letter) => letter.key.split(':')[0]));
        for (const ref of refs) expect(listed.has(ref)).toBe(true);
        // They spread: every master holds some of the records.
        for (const count of await stores.cluster!.keysPerMaster()) expect(count).toBeGreaterThan(0);
      }, 60_000);
    }

    if (kind !== 'memory') {
      const where = () =>
        kind === 'redis-cluster'
          ? ['--redis-cluster-nodes', stores.cluster!.nodesEnv]
          : ['--redis-url', stores.redisUrl!];
      /** The app's BullMQ job of a run of the job `id`, read from the app's own runner. */
      const appJob = (id: string, run: number) =>
        app
          .get<BullmqJobRunner>(HUBTEL_JOB_RUNNER)
          .queue('checkout')
          .getJob(bullmqJobId(`hubtel:checkout:job:${id}`, run));

      it('hubtel-trigger dead-letters lists, and its replay is run at once by the running app on BullMQ', async () => {
        fulfilment.broken = true;
        const ref = await paid();

        const list = streams();
        expect(await runTriggerCli(['dead-letters', 'list', ...where(), '--json'], list.io)).toBe(0);
        const listed = (
          JSON.parse(list.out()) as Array<{ id: string; key: string; succeededHandlers: string[] }>
        ).filter((letter) => letter.key.startsWith(ref));
        expect(listed).toEqual([expect.objectContaining({ succeededHandlers: [RECEIPT] })]);
        const id = listed[0]!.id;

        fulfilment.broken = false;
        const replay = streams();
        expect(
          await runTriggerCli(
            ['dead-letters', 'replay', id, ...where(), '--wait', '--timeout', '30000'],
            replay.io,
          ),
        ).toBe(0);
        expect(replay.out()).toContain(`Done ${id}`);
        expect(replay.err()).toBe('');
        // Run by the app (the CLI has no handlers), as soon as --wait saw it done: the shipment
        // once more, the receipt not again.
        expect(fulfilment.shipments.filter((r) => r === ref)).toHaveLength(3);
        expect(fulfilment.receipts.filter((r) => r === ref)).toHaveLength(1);
        // Its run 3 (2 attempts + 1) is a BullMQ job the app's worker completed.
        const job = await appJob(id, 3);
        expect(job).toBeDefined();
        expect(await job!.isCompleted()).toBe(true);
        const after = streams();
        expect(await runTriggerCli(['dead-letters', 'list', ...where(), '--json'], after.io)).toBe(0);
        expect(
          (JSON.parse(after.out()) as Array<{ key: string }>).filter((l) => l.key.startsWith(ref)),
        ).toEqual([]);

        const unknown = streams();
        expect(await runTriggerCli(['dead-letters', 'replay', `${PAID}:nope`, ...where()], unknown.io)).toBe(
          1,
        );
        expect(unknown.err()).toContain('HUBTEL_NOT_FOUND');
        const done = streams();
        expect(await runTriggerCli(['dead-letters', 'replay', id, ...where()], done.io)).toBe(1);
        expect(done.err()).toContain('HUBTEL_STORE_CONFLICT');
      }, 60_000);

      it('replay --wait: a replay that fails again is dead again (exit 1), and replayed once more it is done', async () => {
        fulfilment.broken = true;
        const ref = await paid();
        const id = `${PAID}:${ref}`;

        const again = streams();
        expect(
          await runTriggerCli(['dead-letters', 'replay', id, ...where(), '--wait', '--json'], again.io),
        ).toBe(1);
        expect(JSON.parse(again.out())).toEqual({
          id,
          status: 'dead',
          lastError: 'the warehouse API is down',
        });
        // One run of the failed handler only (the replay is dead again after it), no receipt.
        expect(fulfilment.shipments.filter((r) => r === ref)).toHaveLength(3);
        expect(fulfilment.receipts.filter((r) => r === ref)).toHaveLength(1);

        fulfilment.broken = false;
        const fixed = streams();
        expect(await runTriggerCli(['dead-letters', 'replay', id, ...where(), '--wait'], fixed.io)).toBe(0);
        expect(fulfilment.shipments.filter((r) => r === ref)).toHaveLength(4);
        expect(fulfilment.receipts.filter((r) => r === ref)).toHaveLength(1);
      }, 60_000);

      it('replay --bullmq-prefix queues the run under that prefix: no app works there, so --wait ends still pending (exit 4)', async () => {
        fulfilment.broken = true;
        const ref = await paid();
        const id = `${PAID}:${ref}`;
        fulfilment.broken = false;

        if (kind === 'redis-cluster') {
          // A prefix BullMQ cannot use on a cluster is refused before the record is touched.
          const refused = streams();
          expect(
            await runTriggerCli(
              ['dead-letters', 'replay', id, ...where(), '--bullmq-prefix', 'bull'],
              refused.io,
            ),
          ).toBe(2);
          expect(refused.err()).toContain('--bullmq-prefix "bull" has no {hash tag}');
          expect((await store.get<JobRecord>(`hubtel:checkout:job:${id}`))?.value.status).toBe('dead');
        }

        const prefix = '{elsewhere}:bull';
        const pending = streams();
        expect(
          await runTriggerCli(
            [
              'dead-letters',
              'replay',
              id,
              ...where(),
              '--bullmq-prefix',
              prefix,
              '--wait',
              '--timeout',
              '500', // no worker exists under the prefix: the job checked below shows nothing took it
            ],
            pending.io,
          ),
        ).toBe(4);
        expect(pending.out()).toContain(`Still pending after 500 ms`);
        expect(pending.out()).toContain(prefix);
        // The run is a job under that prefix, not under the app's; the app ran nothing.
        const elsewhere = new BullmqJobRunner({
          ...(kind === 'redis-cluster'
            ? { cluster: { nodes: stores.cluster!.nodes } }
            : { url: stores.redisUrl! }),
          prefix,
          work: false,
        });
        try {
          const job = await elsewhere.queue('checkout').getJob(bullmqJobId(`hubtel:checkout:job:${id}`, 3));
          expect(await job?.isWaiting()).toBe(true);
        } finally {
          await elsewhere.close();
        }
        expect(await appJob(id, 3)).toBeUndefined();
        expect(fulfilment.shipments.filter((r) => r === ref)).toHaveLength(2);
        expect((await store.get<JobRecord>(`hubtel:checkout:job:${id}`))?.value.status).toBe('pending');
      }, 60_000);
    }
  });
}

/** Fulfils every order but those whose OrderId starts with `broken-` (they always throw). */
@Injectable()
class Deliveries {
  @OnFulfillment()
  deliver(order: FulfillmentRequestedEvent) {
    if (order.orderId.startsWith('broken-')) throw new Error('the top-up API is down');
    return fulfilled({ delivered: true });
  }
}

describe('dead letters of the service app (memory store)', () => {
  /** The platform's fulfillment callback receiver, which can be out of order (answers 500). */
  let platform: FakeHttpServer;
  let platformDown = true;
  let app: INestApplication;
  let fulfillment: FulfillmentService;

  beforeAll(async () => {
    platform = await FakeHttpServer.start();
    platform.route('POST', '/callback', () =>
      platformDown
        ? { status: 500, body: { message: 'down' } }
        : { status: 200, body: { ResponseCode: '0000' } },
    );
    const moduleRef = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        ServiceAppModule.forRoot({
          callbackUrl: platform.url,
          requireCart: false,
          callbackRetry: { baseDelayMs: 10, maxDelayMs: 20, deadlineMs: 200 },
          fulfillmentRetry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
        }),
      ],
      providers: [Deliveries],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    fulfillment = app.get(FulfillmentService);
  });

  afterAll(async () => {
    await app?.close();
    await platform?.close();
  });

  const settled = () => app.get<InboundPipeline>(SERVICE_APP_PIPELINE).drain();

  it('a callback the platform never accepted is replayed once it is back: sent, done, off the list', async () => {
    platformDown = true;
    const answer = await sendFulfillmentRequest(
      app,
      buildFulfillmentRequest({ sessionId: 'session-a', orderId: 'order-a' }),
    );
    expect(answer.status).toBe(200);
    await settled();
    expect(await fulfillment.listDeadLetters()).toEqual([
      expect.objectContaining({ id: 'callback:order-a', type: 'callback', key: 'order-a' }),
    ]);

    platformDown = false;
    await fulfillment.replayDeadLetter('callback:order-a');
    await settled();
    expect((await fulfillment.getOrder('order-a'))?.callback).toMatchObject({
      serviceStatus: 'success',
      status: 'done',
    });
    expect(platform.requestsTo('POST', '/callback').at(-1)?.body).toMatchObject({
      OrderId: 'order-a',
      ServiceStatus: 'success',
    });
    expect(await fulfillment.listDeadLetters()).toEqual([]);
  });

  it('an order whose handlers gave up was reported failed: its replay is refused', async () => {
    platformDown = false;
    await sendFulfillmentRequest(
      app,
      buildFulfillmentRequest({ sessionId: 'session-b', orderId: 'broken-b' }),
    );
    await settled();
    expect(await fulfillment.listDeadLetters()).toEqual([
      expect.objectContaining({ id: 'fulfillment:broken-b', lastError: 'the top-up API is down' }),
    ]);
    const replay = fulfillment.replayDeadLetter('fulfillment:broken-b');
    await expect(replay).rejects.toBeInstanceOf(HubtelError);
    await expect(replay).rejects.toMatchObject({ code: 'HUBTEL_STORE_CONFLICT' });
    await expect(fulfillment.replayDeadLetter('callback:unknown')).rejects.toBeInstanceOf(
      HubtelDeadLetterNotFoundError,
    );
  });
});
