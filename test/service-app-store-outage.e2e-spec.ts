/**
 * A USSD step while Redis is down or stalled, over real HTTP on Express and Fastify: the
 * service-flow endpoint answers 200 with a polite end screen (`release`, `messages.outage`) within
 * the step budget — the platform shows it to the user, where a 503 would show nothing — emits
 * nothing, and once Redis is back the next session works.
 */
import { randomUUID } from 'node:crypto';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { RedisStore } from 'nestjs-hubtel/redis';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { SERVICE_APP_DEFAULT_MESSAGES as M } from '../libs/service-app/src/service-app.constants.js';
import {
  flowRequest,
  postJson as post,
  startMerchant,
  type Adapter,
  type Merchant,
  onAppChannel,
} from './support/service-app.harness.js';
import { RedisServer, redisBinary } from './support/redis-server.js';

const OUTAGE = {
  SessionId: expect.any(String),
  Type: 'release',
  Message: M.outage,
  DataType: 'display',
  Data: null,
  Item: null,
};

for (const adapter of ['express', 'fastify'] as Adapter[]) {
  redisBinary.describe(`service flow while the store is unavailable (${adapter})`, () => {
    let server: RedisServer;
    let store: RedisStore;
    let sandbox: HubtelSandbox;
    let merchant: Merchant;
    const flowUrl = () => `${merchant.url}/api/service-flow`;

    beforeAll(async () => {
      server = await RedisServer.start();
      // A long command time-out, as on a client of yours without one: only the module's own step
      // deadline can keep a stalled Redis from holding the answer.
      store = new RedisStore({ url: server.url, commandTimeoutMs: 120_000 });
      await store.connect();
      sandbox = onAppChannel(await HubtelSandbox.start());
      merchant = await startMerchant(
        adapter,
        { callbackUrl: sandbox.baseUrls().fulfillmentCallback, store, stepBudgetMs: 1_000 },
        {},
        // A Redis store's jobs run on BullMQ, on the same Redis.
        { imports: [HubtelBullmqModule.forRoot({ url: server.url })] },
      );
    });

    afterAll(async () => {
      server?.resume();
      await merchant?.close();
      await store?.close();
      await sandbox?.stop();
      await server?.dispose();
    });

    async function untilReachable(): Promise<void> {
      while (
        !(await store.get('probe').then(
          () => true,
          () => false,
        ))
      )
        await new Promise((resolve) => setTimeout(resolve, 20));
    }

    /** A new session works end to end: the phone prompt, then the bundle list. */
    async function sessionWorks(): Promise<void> {
      const id = randomUUID();
      const started = await post(flowUrl(), flowRequest('Initiation', id, { Message: '*713#' }));
      expect(started.body).toMatchObject({ Type: 'Response', DataType: 'input', FieldName: 'destination' });
      const next = await post(flowUrl(), flowRequest('Response', id, { Message: '0241234567' }));
      expect(next.body).toMatchObject({ Type: 'Response', DataType: 'select' });
    }

    it('Redis stopped: every step is answered 200 with the outage end screen, nothing emitted; then the next session works', async () => {
      const id = randomUUID();
      expect((await post(flowUrl(), flowRequest('Initiation', id, { Message: '*713#' }))).status).toBe(200);
      await server.stop();
      try {
        for (const request of [
          flowRequest('Response', id, { Message: '0241234567' }),
          flowRequest('Initiation', randomUUID(), { Message: '*713#' }),
        ]) {
          const answer = await post(flowUrl(), request);
          expect(answer.status).toBe(200);
          expect(answer.body).toMatchObject({ ...OUTAGE, SessionId: request.SessionId });
        }
        // The fulfillment endpoint keeps its documented 503 (the platform sends the order again).
        const order = await post(`${merchant.url}/api/fulfillment`, {
          OrderId: randomUUID(),
          SessionId: id,
          ExtraData: {},
          OrderInfo: null,
        });
        expect(order.status).toBe(503);
        expect(merchant.fulfiller.seen).toEqual([]);
      } finally {
        await server.restart();
      }
      await untilReachable();
      await sessionWorks();
      expect(merchant.fulfiller.seen).toEqual([]);
    });

    it('Redis stalled: answered with the outage end screen within the step budget, not held; then the next session works', async () => {
      const id = randomUUID();
      expect((await post(flowUrl(), flowRequest('Initiation', id, { Message: '*713#' }))).status).toBe(200);
      server.pause();
      try {
        for (const request of [
          flowRequest('Response', id, { Message: '0241234567' }),
          flowRequest('Initiation', randomUUID(), { Message: '*713#' }),
        ]) {
          const answer = await post(flowUrl(), request);
          expect(answer.status).toBe(200);
          expect(answer.body).toMatchObject({ ...OUTAGE, SessionId: request.SessionId });
        }
      } finally {
        server.resume();
      }
      await untilReachable();
      await sessionWorks();
      expect(merchant.fulfiller.seen).toEqual([]);
    });
  });
}
