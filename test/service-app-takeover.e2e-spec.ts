import { randomUUID } from 'node:crypto';
import type { HubtelStore } from 'nestjs-hubtel';
import {
  ServiceAppModule,
  ServiceFlowBuilder,
  type ServiceAppModuleOptions,
} from 'nestjs-hubtel/service-app';
import { createTestSandbox, type TestSandbox } from 'nestjs-hubtel/testing';
import { SERVICE_APP_DEFAULT_MESSAGES } from '../libs/service-app/src/service-app.constants.js';
import { eventually } from './support/job-settle.js';
import {
  APP_OPERATOR,
  postJson as post,
  startMerchant,
  type Merchant,
} from './support/service-app.harness.js';
import { storeFixture } from './support/test-stores.js';

/*
 * Issue 30 item 5 over real HTTP, two replicas on one Redis, the sandbox as the platform: a
 * SessionId known to someone else (it is in the payment) cannot be started again once its cart
 * stands. After the payment and before the platform's fulfillment request, an initiation with the
 * paid session's SessionId, on the same account's path or on another account's, changes nothing:
 * the fulfillment request (sent to the other replica) delivers the paid cart to the payer's number.
 */

const M = SERVICE_APP_DEFAULT_MESSAGES;
const CODE = 'topup';
const VICTIM = '233241110001';
const ATTACKER = '233201110002';
const PACKS = [
  { Display: 'Airtime GHS 5', Value: '5', Amount: 5 },
  { Display: 'Airtime GHS 50', Value: '50', Amount: 50 },
];

/** The number to top up, then the amount, then the cart (its ServiceData says where the goods go). */
const topup = new ServiceFlowBuilder('topup')
  .forServiceCode(CODE)
  .step('number', (ctx) =>
    ctx.input({ message: 'Number to top up', fieldType: 'phone', name: 'destination' }),
  )
  .step('pack', (ctx) => ctx.select({ message: 'Amount', name: 'pack', options: PACKS }))
  .step('cart', async (ctx) => {
    const gate = held.get(ctx.mobile);
    gate?.arrive();
    await gate?.wait;
    const option = ctx.selected()!;
    return ctx.addToCart({
      message: `Pay GHS ${option.Amount}`,
      item: {
        ItemName: option.Display,
        Qty: 1,
        Price: option.Amount,
        ServiceData: { to: ctx.data.destination },
      },
    });
  })
  .build();

/** Cart steps held by the test, by the Mobile whose step it is (a step waiting on a slow back end). */
const held = new Map<string, { arrive(): void; wait: Promise<void> }>();
/** Holds `mobile`'s next cart step: `arrived` once it waits, `release()` lets it go on. */
function hold(mobile: string) {
  let arrive!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  held.set(mobile, { arrive, wait: new Promise<void>((resolve) => (release = resolve)) });
  return {
    arrived,
    release: () => {
      held.delete(mobile);
      release();
    },
  };
}

const stores = storeFixture('redis');
stores.describe('a paid session cannot be started again (two replicas on Redis)', () => {
  let sandbox: TestSandbox;
  let a: Merchant;
  let b: Merchant;

  beforeAll(async () => {
    sandbox = await createTestSandbox({ accounts: [{ name: 'north' }] });
    const replica = async (store: HubtelStore, logger?: Merchant['logger']) => {
      const north = sandbox.forAccount('north').serviceAppOptions();
      const options: ServiceAppModuleOptions = {
        ...sandbox.serviceAppOptions(),
        store,
        callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 5_000 },
        flows: [topup],
      };
      return startMerchant(
        'express',
        options,
        {},
        {
          ...(logger ? { logger } : {}),
          imports: [
            ...stores.jobRunnerImports(),
            ServiceAppModule.registerAccount({
              name: 'north',
              statusCheck: north.statusCheck!,
              ...(north.callbackCredentials ? { callbackCredentials: north.callbackCredentials } : {}),
            }),
          ],
        },
      );
    };
    a = await replica(await stores.create());
    b = await replica(await stores.create(), a.logger);
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await stores.dispose();
    await sandbox?.stop();
  });

  /** One party's requests for `sessionId` on a replica's path (`/api/service-flow[/<account>]`). */
  function party(m: Merchant, sessionId: string, mobile: string, account?: string) {
    const send = (Type: string, Message = '') =>
      post(`${m.url}/api/service-flow${account ? `/${account}` : ''}`, {
        Type,
        Message,
        ServiceCode: CODE,
        Operator: APP_OPERATOR,
        ClientState: '',
        Mobile: mobile,
        SessionId: sessionId,
      });
    return { start: () => send('initiation'), answer: (text: string) => send('Response', text) };
  }

  /** The victim's session on replica a, to its cart of GHS 50 for their own number; paid on the platform. */
  async function paidSession() {
    const sessionId = randomUUID().replace(/-/g, '');
    const victim = party(a, sessionId, VICTIM);
    expect((await victim.start()).body).toMatchObject({ DataType: 'input' });
    expect((await victim.answer(`0${VICTIM.slice(3)}`)).body).toMatchObject({ DataType: 'select' });
    expect((await victim.answer('50')).body).toMatchObject({ Type: 'AddToCart', Item: { Price: 50 } });
    const orderId = randomUUID().replace(/-/g, '');
    sandbox.recordServicePayment(sessionId, { amount: 50, orderId });
    return { sessionId, orderId };
  }

  /** The platform's fulfillment request for the paid order, to replica b; the order delivered once. */
  async function fulfil(sessionId: string, orderId: string) {
    const body = { OrderId: orderId, SessionId: sessionId, ExtraData: {}, OrderInfo: null };
    const answer = await post(`${b.url}/api/fulfillment`, body);
    expect([answer.status, answer.body?.code]).toEqual([200, undefined]);
    await eventually(
      () => sandbox.fulfillmentCallbacks().some((c) => c.orderId === orderId),
      `the callback of order ${orderId}`,
    );
    const delivered = [...a.fulfiller.seen, ...b.fulfiller.seen].filter((o) => o.orderId === orderId);
    expect(delivered).toHaveLength(1);
    return delivered[0]!;
  }

  /** The attacker plays the whole flow with the paid session's SessionId: for their own number, GHS 5. */
  async function takeOver(m: Merchant, sessionId: string, account?: string) {
    const attacker = party(m, sessionId, ATTACKER, account);
    return [
      await attacker.start(),
      await attacker.answer(`0${ATTACKER.slice(3)}`),
      await attacker.answer('5'),
    ];
  }

  it("same account: the attacker's initiation is answered as expired and reaches no cart; the payer's goods go to the payer", async () => {
    const { sessionId, orderId } = await paidSession();
    const [started, ...next] = await takeOver(a, sessionId);

    // The paid cart stands, and the platform's fulfillment request (on the other replica) delivers it.
    expect(await b.fulfillment.getCart(sessionId)).toMatchObject({ mobile: VICTIM, item: { Price: 50 } });
    const order = await fulfil(sessionId, orderId);
    expect(order).toMatchObject({ mobile: VICTIM, serviceData: { to: VICTIM }, item: { Price: 50 } });
    expect(order.account).toBe('default');

    expect([started!.status, started!.body]).toEqual([
      200,
      expect.objectContaining({ Type: 'release', Message: M.sessionExpired }),
    ]);
    // What the attacker typed next found no session: no prompt, no cart.
    for (const answer of next)
      expect(answer.body).toMatchObject({ Type: 'release', Message: M.sessionExpired });
    expect(a.logger.lines.some((l) => l.includes(`Initiation of session ${sessionId}`))).toBe(true);
  });

  it("another account's path: the initiation is refused 409 and changes nothing; the genuine fulfillment request is delivered", async () => {
    const { sessionId, orderId } = await paidSession();
    const [started, ...next] = await takeOver(a, sessionId, 'north');

    const cart = await b.fulfillment.getCart(sessionId);
    expect(cart).toMatchObject({ mobile: VICTIM, item: { Price: 50 } });
    expect(cart?.account).toBeUndefined();
    const order = await fulfil(sessionId, orderId);
    expect(order).toMatchObject({ mobile: VICTIM, serviceData: { to: VICTIM } });

    expect([started!.status, started!.body?.code]).toEqual([409, 'HUBTEL_WRONG_ACCOUNT']);
    // Nothing of north's ran for that SessionId: no session, so no cart of north's.
    for (const answer of next)
      expect(answer.body).toMatchObject({ Type: 'release', Message: M.sessionExpired });
  });

  it("a cart is written once: an attacker's cart step finishing after the payer's never replaces the payer's cart", async () => {
    const sessionId = randomUUID().replace(/-/g, '');
    const victim = party(a, sessionId, VICTIM);
    await victim.start();
    await victim.answer(`0${VICTIM.slice(3)}`);
    // The payer's choice is in its cart step (held) when the attacker starts the same SessionId
    // over (no cart yet: allowed) on the other replica and gets to a cart step of their own.
    const victimStep = hold(VICTIM);
    const victimCart = victim.answer('50');
    await victimStep.arrived;
    const attacker = party(b, sessionId, ATTACKER);
    await attacker.start();
    expect((await attacker.answer(`0${ATTACKER.slice(3)}`)).body).toMatchObject({ DataType: 'select' });
    const attackerStep = hold(ATTACKER);
    const attackerCart = attacker.answer('5');
    await attackerStep.arrived;
    victimStep.release();
    expect((await victimCart).body).toMatchObject({ Type: 'AddToCart', Item: { Price: 50 } });
    attackerStep.release();
    const late = await attackerCart;

    const orderId = randomUUID().replace(/-/g, '');
    sandbox.recordServicePayment(sessionId, { amount: 50, orderId });
    expect(await b.fulfillment.getCart(sessionId)).toMatchObject({ mobile: VICTIM, item: { Price: 50 } });
    const order = await fulfil(sessionId, orderId);
    expect(order).toMatchObject({ mobile: VICTIM, serviceData: { to: VICTIM } });
    expect(late.body).toMatchObject({ Type: 'release', Message: M.sessionExpired });
  });

  it("another account's path while the session is still being answered: refused 409; the session goes on", async () => {
    const sessionId = randomUUID().replace(/-/g, '');
    const victim = party(a, sessionId, VICTIM);
    await victim.start();
    const intruder = await party(b, sessionId, ATTACKER, 'north').start();
    expect([intruder.status, intruder.body?.code]).toEqual([409, 'HUBTEL_WRONG_ACCOUNT']);
    expect((await victim.answer(`0${VICTIM.slice(3)}`)).body).toMatchObject({ DataType: 'select' });
    expect((await a.flows.getSession(sessionId))?.mobile).toBe(VICTIM);
  });
});
