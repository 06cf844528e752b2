import { randomUUID } from 'node:crypto';
import type { HubtelStore } from 'nestjs-hubtel';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { ServiceFlowBuilder, type ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import { SERVICE_APP_DEFAULT_MESSAGES } from '../libs/service-app/src/service-app.constants.js';
import {
  APP_OPERATOR,
  postJson as post,
  startMerchant,
  type Adapter,
  type Merchant,
} from './support/service-app.harness.js';
import { eventually } from './support/job-settle.js';
import { STORE_KINDS, storeFixture } from './support/test-stores.js';

/*
 * Issue 22's resumable sessions over real HTTP (Express and Fastify, memory and Redis store): a
 * session abandoned at step 2 is offered on the next dial of the same Mobile and ServiceCode within
 * the window, continued to the cart and paid; after the window, or after a paid session, the dial
 * starts fresh; on Redis a redial reaching another replica resumes too.
 */

const M = SERVICE_APP_DEFAULT_MESSAGES;
const WINDOW_MS = 1_500;
const CODE = 'res';
const BUNDLES = Array.from({ length: 12 }, (_, i) => ({
  Display: `${i + 1}GB data bundle valid 30 days GHS ${(i + 1) * 5}.00`,
  Value: `b${i + 1}`,
  Amount: (i + 1) * 5,
}));

const resumable = new ServiceFlowBuilder('resumable')
  .forServiceCode(CODE)
  .resumable({ withinMs: WINDOW_MS })
  .step('phone', (ctx) =>
    ctx.input({ message: 'Number to buy data for', fieldType: 'phone', name: 'destination' }),
  )
  .step('bundle', (ctx) =>
    ctx.select({ message: `Bundles for ${String(ctx.data.destination)}:`, name: 'bundle', options: BUNDLES }),
  )
  .step('cart', (ctx) => {
    const option = ctx.selected()!;
    return ctx.addToCart({
      message: `Pay GHS ${option.Amount}.00 for ${option.Display}`,
      item: {
        ItemName: option.Display,
        Qty: 1,
        Price: option.Amount,
        ServiceData: { destination: ctx.data.destination, bundle: option.Value },
      },
    });
  })
  .build();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const kind of STORE_KINDS) {
  const stores = storeFixture(kind);
  stores.describe(`resumable sessions (${kind} store)`, () => {
    let sandbox: HubtelSandbox;
    let storeA: HubtelStore;
    let storeB: HubtelStore | undefined;

    beforeAll(async () => {
      sandbox = await HubtelSandbox.start();
      storeA = await stores.create();
      // Redis: a second client of the same server, as another replica has. Memory: one process,
      // one app (a memory store is no store two replicas share).
      storeB = kind === 'redis' ? await stores.create() : undefined;
    });

    afterAll(async () => {
      await stores.dispose();
      await sandbox?.stop();
    });

    describe.each<Adapter>(['express', 'fastify'])('over %s', (adapter) => {
      let a: Merchant;
      /** The other replica (Redis only). */
      let b: Merchant | undefined;

      const options = (store: HubtelStore): ServiceAppModuleOptions => ({
        store,
        callbackUrl: sandbox.baseUrls().fulfillmentCallback,
        callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 5_000 },
        statusCheck: {
          ...sandbox.credentials.api,
          posSalesId: sandbox.posSalesId,
          url: sandbox.baseUrls().status,
        },
        flows: [resumable],
        // Resume is offered only behind an allow-list or a path secret (issue 30).
        access: { allowedIps: ['127.0.0.1'] },
      });

      beforeAll(async () => {
        // A Redis store's jobs run on BullMQ, on the same Redis, shared by both replicas.
        a = await startMerchant(adapter, options(storeA), {}, { imports: stores.jobRunnerImports() });
        if (storeB)
          b = await startMerchant(
            adapter,
            options(storeB),
            {},
            { logger: a.logger, imports: stores.jobRunnerImports() },
          );
      });

      afterAll(async () => {
        await b?.close();
        await a?.close();
      });

      /** A dial of `mobile` on the channel; `send` posts one request of this session. */
      function dial(m: Merchant, mobile: string, channel: Record<string, string> = { Operator: 'mtn' }) {
        const sessionId = randomUUID();
        const send = async (Type: string, Message = '') => {
          const res = await post(`${m.url}/api/service-flow`, {
            Type,
            Message,
            ServiceCode: CODE,
            ClientState: '',
            Mobile: mobile,
            SessionId: sessionId,
            ...channel,
          });
          expect(res.status).toBe(200);
          return res.body;
        };
        return {
          sessionId,
          send,
          start: () => send('initiation'),
          answer: (text: string) => send('Response', text),
        };
      }

      /** A fresh mobile per test: the resume record is per Mobile and ServiceCode. */
      const mobile = () => `23324${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

      /** Starts a session and answers step 1: it waits at step 2 (the bundle menu). */
      async function abandonAtStep2(m: Merchant, number: string, channel?: Record<string, string>) {
        const session = dial(m, number, channel);
        expect(await session.start()).toMatchObject({ DataType: 'input', Message: 'Number to buy data for' });
        const menu = await session.answer(`0${number.slice(3)}`);
        expect(menu).toMatchObject({ DataType: 'select' });
        return { session, menu };
      }

      /**
       * The replica whose handler ran the order, once; the other ran none. (On Redis the job is
       * BullMQ's to give to either replica's worker.)
       */
      function ranOnce(orderId: string): Merchant {
        const replicas = b ? [a, b] : [a];
        const calls = replicas.map((m) => m.fulfiller.calls.get(orderId) ?? 0);
        expect(calls.filter((n) => n > 0)).toEqual([1]);
        return replicas[calls.indexOf(1)]!;
      }

      const QUESTION = `${M.resume}\n1. ${M.resumeYes}\n2. ${M.resumeNo}`;

      async function payAndFulfil(m: Merchant, sessionId: string, amount: number) {
        const orderId = randomUUID().replace(/-/g, '');
        sandbox.recordServicePayment(sessionId, { amount, orderId });
        const body = { OrderId: orderId, SessionId: sessionId, ExtraData: {}, OrderInfo: null };
        expect((await post(`${m.url}/api/fulfillment`, body)).status).toBe(200);
        // Fulfilled by whichever replica's worker took the job (on Redis, BullMQ's choice).
        await eventually(
          () => sandbox.fulfillmentCallbacks().some((c) => c.orderId === orderId),
          `the callback of order ${orderId}`,
        );
        return orderId;
      }

      it('abandoned at step 2 (silence), redialled within the window: continued from the menu to the cart, and paid', async () => {
        const number = mobile();
        const { menu } = await abandonAtStep2(a, number);
        // The user is gone without a word; a new dial (a new SessionId) of the same Mobile and code.
        const redial = dial(a, number);
        const question = await redial.start();
        expect(question).toMatchObject({ Type: 'Response', DataType: 'select', Message: QUESTION });
        const restored = await redial.answer('1');
        expect(restored.Message).toBe(menu.Message);
        // The state of step 2 is back: the chosen bundle goes into a cart with step 1's number.
        let page = restored;
        const find = () => (page.Message as string).split('\n').find((l) => l.includes(BUNDLES[10]!.Display));
        while (!find() && page.Message.includes('9. More')) page = await redial.answer('9');
        expect(page.Message).toContain('8. Back');
        const line = find()!;
        const cart = await redial.answer(line.split('. ')[0]!);
        expect(cart).toMatchObject({
          Type: 'Release',
          Item: { Price: 55, ServiceData: { destination: number, bundle: 'b11' } },
        });
        const orderId = await payAndFulfil(a, redial.sessionId, 55);
        expect(ranOnce(orderId).fulfiller.seen.find((e) => e.orderId === orderId)).toMatchObject({
          sessionId: redial.sessionId,
          data: { destination: number, bundle: 'b11' },
        });
        // A paid session is never offered: the next dial starts fresh.
        expect(await dial(a, number).start()).toMatchObject({ Message: 'Number to buy data for' });
      });

      it('offers it after a release or a timeout too; "no" starts fresh; on the app channel the question is a select', async () => {
        const number = mobile();
        const first = await abandonAtStep2(a, number);
        expect(await first.session.send('release')).toMatchObject({ Type: 'release' });
        const declined = dial(a, number);
        expect((await declined.start()).Message).toBe(QUESTION);
        expect(await declined.answer('2')).toMatchObject({
          DataType: 'input',
          Message: 'Number to buy data for',
        });

        // The fresh session in turn answered step 1, then timed out.
        await declined.answer(`0${number.slice(3)}`);
        await declined.send('timeout');
        const app = dial(a, number, { Operator: APP_OPERATOR });
        expect(await app.start()).toMatchObject({
          Message: M.resume,
          DataType: 'select',
          Data: [
            { Display: M.resumeYes, Value: 'yes', Amount: 0 },
            { Display: M.resumeNo, Value: 'no', Amount: 0 },
          ],
        });
        expect(await app.answer('yes')).toMatchObject({ DataType: 'select', Data: BUNDLES });
        expect(await app.answer('b2')).toMatchObject({ Type: 'AddToCart', Item: { Price: 10 } });
      });

      it('starts fresh when redialled after the window', async () => {
        const number = mobile();
        await abandonAtStep2(a, number);
        await sleep(WINDOW_MS + 300);
        expect(await dial(a, number).start()).toMatchObject({
          DataType: 'input',
          Message: 'Number to buy data for',
        });
      });

      it('never offers a carted session, even one whose cart is not paid yet', async () => {
        const number = mobile();
        const { session } = await abandonAtStep2(a, number);
        expect(await session.answer('1')).toMatchObject({ Type: 'Release' });
        expect(await dial(a, number).start()).toMatchObject({ Message: 'Number to buy data for' });
      });

      it('offers an abandoned session once: of two starts at once (on both replicas on Redis), one is asked, the other starts fresh', async () => {
        const number = mobile();
        const { menu } = await abandonAtStep2(a, number);
        const first = dial(a, number);
        const second = dial(b ?? a, number);
        const answers = await Promise.all([first.start(), second.start()]);
        const asked = answers.filter((answer) => answer.Message === QUESTION);
        expect(asked).toHaveLength(1);
        expect(answers.filter((answer) => answer.Message === 'Number to buy data for')).toHaveLength(1);
        // The one asked restores it; the other is a fresh session that knows nothing of it.
        const [winner, loser] = answers[0].Message === QUESTION ? [first, second] : [second, first];
        expect((await winner.answer('1')).Message).toBe(menu.Message);
        expect(await loser.answer('1')).toMatchObject({
          DataType: 'input',
          Message: `${M.phone}\nNumber to buy data for`,
        });
      });

      it('offers it again after a dial that left at the question (released before answering)', async () => {
        const number = mobile();
        const { menu } = await abandonAtStep2(a, number);
        const left = dial(a, number);
        expect((await left.start()).Message).toBe(QUESTION);
        await left.send('release');
        const redial = dial(b ?? a, number);
        expect((await redial.start()).Message).toBe(QUESTION);
        expect((await redial.answer('1')).Message).toBe(menu.Message);
      });

      // Replicas share a store on Redis only.
      if (kind === 'redis')
        it('resumes a redial that reaches the other replica (shared store)', async () => {
          const other = b!;
          const number = mobile();
          const { menu } = await abandonAtStep2(a, number);
          const redial = dial(other, number);
          expect((await redial.start()).Message).toBe(QUESTION);
          expect((await redial.answer('1')).Message).toBe(menu.Message);
          const cart = await redial.answer('3');
          expect(cart).toMatchObject({
            Type: 'Release',
            Item: { ServiceData: { destination: number, bundle: 'b3' } },
          });
          const orderId = await payAndFulfil(other, redial.sessionId, 15);
          expect(ranOnce(orderId).fulfiller.seen.find((e) => e.orderId === orderId)).toMatchObject({
            sessionId: redial.sessionId,
            data: { destination: number, bundle: 'b3' },
          });
          expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(1);
        });
    });

    describe('behind an open endpoint (no path secret, no allow-list)', () => {
      let open: Merchant;

      beforeAll(async () => {
        open = await startMerchant(
          'express',
          {
            store: storeA,
            callbackUrl: sandbox.baseUrls().fulfillmentCallback,
            flows: [resumable],
          },
          {},
          { imports: stores.jobRunnerImports() },
        );
      });

      afterAll(() => open?.close());

      it('is said at start-up, and resume is off: whoever sends a Mobile never sees what its owner typed', async () => {
        const number = `23324${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
        const send = (sessionId: string, Type: string, Message = '') =>
          post(`${open.url}/api/service-flow`, {
            Type,
            Message,
            ServiceCode: CODE,
            Operator: 'mtn',
            ClientState: '',
            Mobile: number,
            SessionId: sessionId,
          });
        const owner = randomUUID();
        await send(owner, 'initiation');
        expect((await send(owner, 'Response', `0${number.slice(3)}`)).body).toMatchObject({
          DataType: 'select',
        });
        await send(owner, 'release');
        // Someone else with the owner's number, within the window.
        const other = await send(randomUUID(), 'initiation');
        expect(other.body).toMatchObject({ DataType: 'input', Message: 'Number to buy data for' });
        expect(JSON.stringify(other.body)).not.toContain(number.slice(3));
        expect(
          open.logger.lines.filter(
            (l) => l.includes('resumable') && l.includes('neither a path secret nor an IP allow-list'),
          ),
        ).toHaveLength(1);
      });
    });
  });
}
