import { randomUUID } from 'node:crypto';
import { MemoryStore, type HubtelStore } from 'nestjs-hubtel';
import { type InboundPipeline } from '#internal';
import type { RedisStore } from 'nestjs-hubtel/redis';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import {
  SERVICE_APP_DEFAULT_MESSAGES,
  SERVICE_APP_KEYS,
  SERVICE_APP_PIPELINE,
} from '../libs/service-app/src/service-app.constants.js';
import type { ServiceFlowResponse } from 'nestjs-hubtel/service-app';
import { BLOCKED_NUMBER, BUNDLES, successCallback } from './support/service-app.fixtures.js';
import {
  flowRequest,
  postJson as post,
  startMerchant,
  type Adapter,
  type Merchant,
  onAppChannel,
  APP_OPERATOR,
} from './support/service-app.harness.js';
import { jobsSettled, untilRunnerUp } from './support/job-settle.js';
import { describeEachStore } from './support/test-stores.js';

/*
 * The ServiceAppModule end to end, over real HTTP, on Express and on Fastify: the sandbox plays
 * the platform (client app driver, fulfillment requests, the callback receiver with faults), the
 * merchant app is a real Nest app on a real port. Every response is compared field by field with
 * the contract's "Service-flow response" table and its "Service-session exchange" steps.
 */

const M = SERVICE_APP_DEFAULT_MESSAGES;
const MOBILE = '233241234567';
const SESSION_TTL_MS = 60_000;

/**
 * A service-flow response with every field of the contract's table: the ones given, the rest as
 * the contract fixes them (Mask, MaskNextRoute, ServiceCode, ClientState null; Item null).
 */
function contractResponse(
  sessionId: string,
  fields: Pick<
    ServiceFlowResponse,
    'Type' | 'Message' | 'Label' | 'DataType' | 'FieldType' | 'FieldName' | 'Data'
  >,
): ServiceFlowResponse {
  return {
    SessionId: sessionId,
    Type: fields.Type,
    Message: fields.Message,
    Mask: null,
    MaskNextRoute: null,
    Item: null,
    ServiceCode: null,
    Label: fields.Label,
    DataType: fields.DataType,
    FieldType: fields.FieldType,
    FieldName: fields.FieldName,
    ClientState: null,
    Data: fields.Data,
  };
}

/** An input prompt: `Data` null, `FieldName` the field. */
function inputPrompt(
  sessionId: string,
  fields: { Message: string; Label: string; FieldType: string; FieldName: string },
): ServiceFlowResponse {
  return contractResponse(sessionId, { Type: 'Response', DataType: 'input', Data: null, ...fields });
}

/** A select prompt: `Data` the options, `FieldName` ''. */
function selectPrompt(
  sessionId: string,
  fields: { Message: string; Label: string; Data: unknown[] },
): ServiceFlowResponse {
  return contractResponse(sessionId, {
    Type: 'Response',
    DataType: 'select',
    FieldType: 'text',
    FieldName: '',
    ...fields,
    Data: fields.Data as ServiceFlowResponse['Data'],
  });
}

/** The final message (`release`): display, no field, no options. */
function release(sessionId: string, message: string, label: string | null = null): ServiceFlowResponse {
  return contractResponse(sessionId, {
    Type: 'release',
    Message: message,
    Label: label,
    DataType: 'display',
    FieldType: 'text',
    FieldName: null,
    Data: null,
  });
}

const PHONE_PROMPT = {
  Message: 'Enter the mobile number to buy data for',
  Label: 'Mobile number',
  FieldType: 'phone',
  FieldName: 'destination',
};
const bundlePrompt = (destination: string) => ({
  Message: `Choose a bundle for ${destination}`,
  Label: 'Bundles',
  Data: BUNDLES,
});

// A test below stops Redis: a server of its own, not a database of the worker's.
const titled = { title: 'ServiceAppModule', ownServer: true };
describeEachStore<Adapter>(['express', 'fastify'], titled, (adapter, stores) => {
  let sandbox: HubtelSandbox;
  let merchant: Merchant;
  let skew = 0;
  // The memory store's clock can be moved; Redis expires on its own clock (the store contract
  // suite covers that), so there expiry is stood in for by what it does: the entries are gone.
  const memory = new MemoryStore({ sweepIntervalMs: 0, now: () => Date.now() + skew });
  let store: HubtelStore;
  const expireSessions = async () => {
    skew = SESSION_TTL_MS + 1_000;
    if (stores.kind === 'memory') return;
    for await (const [key] of store.scan(SERVICE_APP_KEYS.session)) await store.delete(key);
  };
  const flowUrl = () => `${merchant.url}/api/service-flow`;
  const fulfillmentUrl = () => `${merchant.url}/api/fulfillment`;
  const pipeline = () => merchant.app.get<InboundPipeline>(SERVICE_APP_PIPELINE);
  /** Nothing left to run (on Redis: nothing in BullMQ's queue either; drain() sees this process only). */
  const settled = () => jobsSettled(pipeline(), 'service-app');

  beforeAll(async () => {
    store = stores.kind === 'memory' ? memory : await stores.create();
    sandbox = onAppChannel(await HubtelSandbox.start());
    merchant = await startMerchant(
      adapter,
      {
        callbackUrl: sandbox.baseUrls().fulfillmentCallback,
        // Generous enough that a healthy callback never times out on a loaded machine; the
        // deadline leaves the retry test (a time-out among its faults) over 1 s to spare, and is
        // what the dead-letter test waits for (in each of the four runs: so no longer).
        callbackTimeoutMs: 1_500,
        callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 3_000 },
        fulfillmentRetry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 },
        stepBudgetMs: 100,
        sessionTtlMs: SESSION_TTL_MS,
        store,
      },
      {},
      // A Redis store's jobs run on BullMQ, on the same Redis.
      { imports: stores.jobRunnerImports() },
    );
  });

  afterEach(async () => {
    skew = 0;
    merchant.gate.open();
    merchant.fulfiller.releaseHeld();
    await settled();
    sandbox.reset();
  });

  afterAll(async () => {
    await merchant?.close();
    await sandbox?.stop();
    memory.close();
    await stores.dispose();
  });

  describe('the contract use case: phone input, bundle select, AddToCart, fulfillment, callback', () => {
    it('answers every step exactly as the contract tables say, fulfils once and posts the callback', async () => {
      const session = sandbox.serviceApp(merchant.url, { mobile: MOBILE });
      const id = session.sessionId;

      // Step 1: initiation (Sequence set, Message empty) → input prompt, FieldType phone, Data null.
      expect(await session.start()).toStrictEqual(inputPrompt(id, PHONE_PROMPT));
      // Step 2: the user's entry (a national number) → select prompt with the options; FieldName ''.
      expect(await session.reply('024 123 4567')).toStrictEqual(selectPrompt(id, bundlePrompt(MOBILE)));
      // Step 3: the chosen option's Value → AddToCart, DataType display, Item set, Data [], FieldName null.
      expect(await session.choose('5gb')).toStrictEqual({
        SessionId: id,
        Type: 'AddToCart',
        Message: `You are buying 5GB for GHS 20.00 for ${MOBILE}`,
        Mask: null,
        MaskNextRoute: null,
        Item: {
          ItemName: '5GB for GHS 20.00',
          Qty: 1,
          Price: 20,
          ServiceData: { destination: MOBILE, amount: '20.00', bundle: '5gb' },
        },
        ServiceCode: null,
        Label: 'Confirm purchase',
        DataType: 'display',
        FieldType: 'text',
        FieldName: null,
        ClientState: null,
        Data: [],
      });
      // The sandbox's own contract check found nothing to object to.
      expect(sandbox.session(id)!.exchanges.flatMap((e) => e.issues)).toEqual([]);

      // Step 4: the user pays; the platform POSTs {OrderId, SessionId, ExtraData: {}, OrderInfo: null}.
      const { order, deliveries } = await session.pay();
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({
        kind: 'fulfillment-request',
        state: 'delivered',
        statusCode: 200,
      });
      expect(JSON.parse(deliveries[0]!.responseBody!)).toEqual({
        OrderId: order.orderId,
        SessionId: id,
        Status: 'received',
      });

      // Step 5: the handler ran; the callback {SessionId, OrderId, ServiceStatus: success, MetaData} reached {callback_url}/callback.
      const callback = await session.waitForCallback();
      expect(callback.body).toStrictEqual(successCallback(id, order.orderId));
      expect(callback.matched).toBe(true);
      expect(sandbox.session(id)!.state).toBe('fulfilled');

      // The event the handler got: OrderId, SessionId, the cart item and its ServiceData, ServiceCode, Mobile.
      const seen = merchant.fulfiller.seen.filter((e) => e.orderId === order.orderId);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({
        orderId: order.orderId,
        sessionId: id,
        serviceCode: 'sandbox-service',
        flow: 'BundleFlow',
        mobile: MOBILE,
        operator: APP_OPERATOR,
        item: { ItemName: '5GB for GHS 20.00', Qty: 1, Price: 20 },
        serviceData: { destination: MOBILE, amount: '20.00', bundle: '5gb' },
        data: { destination: MOBILE, bundle: '5gb' },
        extraData: {},
        orderInfo: null,
      });
      // ServiceCode-specific handlers only see their code.
      expect(merchant.fulfiller.seen711.some((e) => e.orderId === order.orderId)).toBe(false);

      await merchant.fulfiller.until(() => merchant.fulfiller.sent.some((e) => e.orderId === order.orderId));
      expect(merchant.fulfiller.sent.find((e) => e.orderId === order.orderId)).toMatchObject({
        serviceStatus: 'success',
        reportedBy: 'handler',
        attempts: 1,
      });
      expect(await merchant.fulfillment.getOrder(order.orderId)).toMatchObject({
        handler: { status: 'done', attempts: 1 },
        awaitingCompletion: false,
        callback: { serviceStatus: 'success', status: 'done', attempts: 1 },
      });

      // The user's number never reaches a log line unmasked.
      const logs = merchant.logger.lines.join('\n');
      expect(logs).not.toContain(MOBILE);
      expect(logs).toContain('233******567');
    });

    it('accepts the raw contract requests: Type in any case, Sequence only first, unknown extra fields ignored', async () => {
      const id = randomUUID();
      const base = {
        ServiceCode: 'raw-code',
        // An app channel (vodafone, or Platform USSD, is the USSD channel: test/service-app-ussd.e2e-spec.ts).
        Operator: 'Hubtel-iOS',
        ClientState: '',
        Mobile: MOBILE,
        SessionId: id,
      };
      const first = await post(flowUrl(), {
        Sequence: 1,
        Type: 'Initiation',
        Message: '',
        ...base,
        Timeout: 30,
        Platform: 'Hubtel-App',
        Unknown: { nested: [1] },
      });
      expect(first.status).toBe(200);
      expect(first.type).toContain('application/json');
      expect(first.body).toStrictEqual(inputPrompt(id, PHONE_PROMPT));
      const second = await post(flowUrl(), {
        Type: 'response',
        Message: '+233 24 123 4567',
        ...base,
        Platform: 'Hubtel-App',
      });
      expect(second.body).toStrictEqual(selectPrompt(id, bundlePrompt(MOBILE)));
      const third = await post(flowUrl(), { Type: 'RESPONSE', Message: '1gb', ...base });
      expect(third.status).toBe(200);
      expect(third.body).toMatchObject({
        Type: 'AddToCart',
        DataType: 'display',
        Data: [],
        FieldName: null,
        Item: { Price: 5, Qty: 1 },
      });
    });
  });

  describe('serving the session', () => {
    it('re-asks an input that does not validate, with an explanation, and a select answer that is not an option', async () => {
      const session = sandbox.serviceApp(merchant.url);
      const id = session.sessionId;
      await session.start();
      expect(await session.reply('not a number')).toStrictEqual(
        inputPrompt(id, { ...PHONE_PROMPT, Message: `${M.phone}\n${PHONE_PROMPT.Message}` }),
      );
      expect(await session.reply('')).toStrictEqual(
        inputPrompt(id, { ...PHONE_PROMPT, Message: `${M.required}\n${PHONE_PROMPT.Message}` }),
      );
      // A step's own check (ctx.reject) re-asks the previous prompt with its reason.
      expect(await session.reply(BLOCKED_NUMBER)).toStrictEqual(
        inputPrompt(id, {
          ...PHONE_PROMPT,
          Message: `This number cannot receive bundles.\n${PHONE_PROMPT.Message}`,
        }),
      );
      expect(await session.reply('0241234567')).toStrictEqual(selectPrompt(id, bundlePrompt(MOBILE)));
      expect(await session.reply('10gb')).toStrictEqual(
        selectPrompt(id, {
          ...bundlePrompt(MOBILE),
          Message: `${M.select}\n${bundlePrompt(MOBILE).Message}`,
        }),
      );
      // Still at the select: a valid choice goes on.
      expect((await session.reply('1GB')).Type).toBe('AddToCart');
    });

    it('re-asks a decimal outside its bounds, then goes on', async () => {
      const session = sandbox.serviceApp(merchant.url, { serviceCode: '711' });
      const id = session.sessionId;
      const prompt = {
        Message: 'Amount of airtime (GHS 1 to 100)',
        Label: 'Amount of airtime (GHS 1 to 100)',
        FieldType: 'decimal',
        FieldName: 'amount',
      };
      expect(await session.start()).toStrictEqual(inputPrompt(id, prompt));
      expect(await session.reply('ten')).toStrictEqual(
        inputPrompt(id, { ...prompt, Message: `${M.decimal}\n${prompt.Message}` }),
      );
      expect(await session.reply('500')).toStrictEqual(
        inputPrompt(id, { ...prompt, Message: `Please enter 100 or less.\n${prompt.Message}` }),
      );
      expect(await session.reply('12.5')).toMatchObject({
        Type: 'AddToCart',
        Item: { ItemName: `Airtime for ${MOBILE}`, Qty: 1, Price: 12.5 },
      });
    });

    it('goes back to the previous prompt on the back input ("0"), forgetting its answer', async () => {
      const session = sandbox.serviceApp(merchant.url);
      const id = session.sessionId;
      // Back on the first prompt shows it again.
      await session.start();
      expect(await session.reply('0')).toStrictEqual(inputPrompt(id, PHONE_PROMPT));
      expect(await session.reply('0241234567')).toStrictEqual(selectPrompt(id, bundlePrompt(MOBILE)));
      expect(await session.reply('0')).toStrictEqual(inputPrompt(id, PHONE_PROMPT));
      expect((await merchant.flows.getSession(id))?.data).toEqual({});
      expect(await session.reply('0501234567')).toStrictEqual(selectPrompt(id, bundlePrompt('233501234567')));
      const cart = await session.choose('1gb');
      expect(cart.Item).toMatchObject({ ServiceData: { destination: '233501234567', bundle: '1gb' } });
    });

    it('routes several services by ServiceCode, with the default flow for codes not routed', async () => {
      const airtime = sandbox.serviceApp(merchant.url, { serviceCode: '711' });
      expect(await airtime.start()).toMatchObject({
        DataType: 'input',
        FieldType: 'decimal',
        FieldName: 'amount',
      });

      const unrouted = sandbox.serviceApp(merchant.url, { serviceCode: 'code-nobody-routed' });
      expect(await unrouted.start()).toStrictEqual(inputPrompt(unrouted.sessionId, PHONE_PROMPT));

      // A builder flow, with goTo and a final message (release).
      const quiz = sandbox.serviceApp(merchant.url, { serviceCode: 'quiz' });
      expect(await quiz.start()).toStrictEqual(
        selectPrompt(quiz.sessionId, {
          Message: 'Capital of Ghana?',
          Label: 'Capital of Ghana?',
          Data: [
            { Display: 'Accra', Value: 'accra', Amount: 0 },
            { Display: 'Kumasi', Value: 'kumasi', Amount: 0 },
          ],
        }),
      );
      expect(await quiz.choose('Kumasi')).toStrictEqual(
        release(quiz.sessionId, 'Wrong: not Kumasi', 'Wrong: not Kumasi'),
      );
      // The session is over: it was released from the store.
      expect(await merchant.flows.getSession(quiz.sessionId)).toBeUndefined();
    });

    it('routes fulfillment per ServiceCode: @OnFulfillment("711") and the catch-all both run, the code-specific first', async () => {
      const session = sandbox.serviceApp(merchant.url, { serviceCode: '711' });
      await session.start();
      await session.reply('7');
      const { order } = await session.pay();
      const callback = await session.waitForCallback();
      expect(callback.body).toStrictEqual(successCallback(session.sessionId, order.orderId));
      expect(merchant.fulfiller.seen711.filter((e) => e.orderId === order.orderId)).toHaveLength(1);
      expect(merchant.fulfiller.seen.filter((e) => e.orderId === order.orderId)).toMatchObject([
        { serviceCode: '711', serviceData: { amount: '7.00' } },
      ]);
      expect(merchant.fulfiller.trace.filter((t) => t.endsWith(order.orderId))).toEqual([
        `711:${order.orderId}`,
        `all:${order.orderId}`,
      ]);
      // The cart's item name carries the user's number (built by the flow): masked in the logs.
      const logs = merchant.logger.lines.filter((l) => l.includes(session.sessionId));
      expect(logs.some((l) => l.includes('Airtime for 233******567'))).toBe(true);
      expect(logs.join('\n')).not.toContain(MOBILE);
    });

    it('answers a Response for an unknown session, and for an expired one, with a clear message (not a 500)', async () => {
      const unknown = randomUUID();
      const res = await post(flowUrl(), flowRequest('Response', unknown, { Message: '1' }));
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual(release(unknown, M.sessionExpired));

      const session = sandbox.serviceApp(merchant.url);
      await session.start();
      await expireSessions(); // the store's clock moves past the session's TTL
      expect(await session.reply('0241234567')).toStrictEqual(release(session.sessionId, M.sessionExpired));
    });

    it('forgets the session on release and answers the release', async () => {
      const session = sandbox.serviceApp(merchant.url);
      const id = session.sessionId;
      await session.start();
      await session.reply('0241234567');
      expect(await merchant.flows.getSession(id)).toBeDefined();
      expect(await session.release()).toStrictEqual(release(id, ''));
      expect(await merchant.flows.getSession(id)).toBeUndefined();
      const after = await post(
        flowUrl(),
        flowRequest('Response', id, { Message: '1gb', ServiceCode: 'sandbox-service' }),
      );
      expect(after.body).toStrictEqual(release(id, M.sessionExpired));
      // `timeout` (seen from the platform too) ends a session the same way.
      const other = randomUUID();
      await post(flowUrl(), flowRequest('initiation', other));
      expect((await post(flowUrl(), flowRequest('Timeout', other))).body).toStrictEqual(release(other, ''));
      expect(await merchant.flows.getSession(other)).toBeUndefined();
    });

    it('answers a step slower than the budget with a polite "try again" on the same prompt, before the step ends', async () => {
      const session = sandbox.serviceApp(merchant.url, { serviceCode: 'slow' });
      const id = session.sessionId;
      const prompt = { Message: 'Your name?', Label: 'Your name?', FieldType: 'text', FieldName: 'name' };
      expect(await session.start()).toStrictEqual(inputPrompt(id, prompt));
      merchant.gate.hold(); // the next step waits until the gate opens: it cannot finish in time
      expect(await session.reply('Ama')).toStrictEqual(
        inputPrompt(id, { ...prompt, Message: `${M.busy}\n${prompt.Message}` }),
      );
      merchant.gate.open(); // the late answer is dropped
      expect((await merchant.flows.getSession(id))?.screen.step).toBe('name');
      const age = 'Hello Ama, how old are you?';
      expect(await session.reply('Ama')).toStrictEqual(
        inputPrompt(id, { Message: age, Label: age, FieldType: 'number', FieldName: 'age' }),
      );
      expect(await session.reply('30')).toStrictEqual(release(id, 'Ama is 30', 'Ama is 30'));
    });

    it('lets only one of two concurrent answers for a session advance it (compare-and-set in the store)', async () => {
      // Its own app, with a budget long enough to hold two steps at the gate at once (same logger:
      // Nest's logger is global, the main app's lines must keep reaching it).
      const racing = await startMerchant(adapter, { stepBudgetMs: 30_000 }, {}, { logger: merchant.logger });
      try {
        const session = sandbox.serviceApp(racing.url, { serviceCode: 'slow' });
        const id = session.sessionId;
        await session.start();
        racing.gate.hold(2);
        const answer = (name: string) =>
          post(
            `${racing.url}/api/service-flow`,
            flowRequest('Response', id, { Message: name, ServiceCode: 'slow' }),
          );
        const answers = Promise.all([answer('Ama'), answer('Kofi')]);
        await racing.gate.waiting(2); // both read the same session version before either writes
        racing.gate.open();
        const [ama, kofi] = await answers;
        expect([ama.status, kofi.status]).toEqual([200, 200]);
        // Both are answered the winner's prompt; the session holds the winner's answer only.
        expect(ama.body).toStrictEqual(kofi.body);
        const stored = await racing.flows.getSession(id);
        expect(stored?.screen.step).toBe('age');
        expect(stored?.history).toHaveLength(1);
        expect(ama.body.Message).toBe(`Hello ${String(stored?.data.name)}, how old are you?`);
        expect(['Ama', 'Kofi']).toContain(stored?.data.name);
        expect(racing.logger.lines.some((l) => l.includes(`Concurrent answers for session ${id}`))).toBe(
          true,
        );
      } finally {
        await racing.close();
      }
    });

    it('answers malformed and hostile service-flow bodies with a machine-readable 4xx, never a 500', async () => {
      const valid = flowRequest('initiation', 's-1');
      const cases: Array<[string, unknown]> = [
        ['an array', []],
        ['an empty object', {}],
        ['a numeric Type', { ...valid, Type: 5 }],
        ['an empty Type', { ...valid, Type: '' }],
        ['a missing SessionId', { ...valid, SessionId: undefined }],
        ['an object SessionId', { ...valid, SessionId: { $ne: null } }],
        ['an empty Mobile', { ...valid, Mobile: '' }],
        ['a 5000-character Message', { ...valid, Message: 'x'.repeat(5_000) }],
        ['a null Message', { ...valid, Message: null }],
      ];
      for (const [what, body] of cases) {
        const res = await post(flowUrl(), body);
        expect({ what, status: res.status }).toEqual({ what, status: 400 });
        expect(res.body).toMatchObject({
          statusCode: 400,
          error: 'Bad Request',
          code: 'HUBTEL_INVALID_BODY',
          message: expect.stringContaining('Invalid service-flow request'),
        });
        expect(Array.isArray(res.body.issues) && res.body.issues.length > 0).toBe(true);
      }
      // One message per field; a missing one says it is required.
      const missing = await post(flowUrl(), {});
      expect(missing.body.issues).toEqual(
        ['Type', 'Message', 'ServiceCode', 'Mobile', 'SessionId'].map((field) => ({
          field,
          message: `${field} is required`,
        })),
      );

      // Broken JSON, a body too large, a foreign content type: the framework's 4xx.
      for (const [what, expected, res] of [
        ['broken JSON', 400, await post(flowUrl(), '{"Type": "initiation",')],
        ['2 MB body', 413, await post(flowUrl(), { ...valid, Message: 'x'.repeat(2_000_000) })],
        ['text/plain', 400, await post(flowUrl(), 'Type=initiation', { 'Content-Type': 'text/plain' })],
      ] as const) {
        expect({ what, status: res.status, json: res.body?.statusCode }).toEqual({
          what,
          status: expected,
          json: expected,
        });
      }

      // A prototype-pollution attempt: refused on both adapters (Fastify's parser refuses
      // `__proto__` keys itself; on Express the module does), nothing polluted, no session started.
      const polluted = await post(
        flowUrl(),
        `{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, ${JSON.stringify(valid).slice(1)}`,
      );
      expect(polluted.status).toBe(400);
      if (adapter === 'express')
        expect(polluted.body).toMatchObject({
          code: 'HUBTEL_INVALID_BODY',
          issues: [{ field: '__proto__', message: 'key "__proto__" is not allowed' }],
        });
      expect(await merchant.flows.getSession('s-1')).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('fulfillment', () => {
    async function toCart(orderHint?: string) {
      const session = sandbox.serviceApp(merchant.url);
      await session.start();
      await session.reply('0241234567');
      await session.choose('1gb');
      return { session, orderId: orderHint ?? randomUUID() };
    }

    // Redis only: a store that is down is a real server stopped, not a stand-in.
    if (stores.kind === 'redis') {
      it('answers 503 while Redis is stopped (nothing emitted), then handles the order sent again once, after Redis is back', async () => {
        const server = stores.server!;
        const { session, orderId } = await toCart();
        const order = { OrderId: orderId, SessionId: session.sessionId, ExtraData: {}, OrderInfo: null };
        await (store as RedisStore).client.save(); // persistence: what was written survives the restart
        await server.stop();
        try {
          const refused = await post(fulfillmentUrl(), order);
          expect(refused.status).toBe(503);
          expect(refused.body).toMatchObject({ statusCode: 503, code: 'HUBTEL_UNAVAILABLE' });
          // The USSD session answers a release the phone can show, not an error.
          const flow = await post(flowUrl(), flowRequest('Response', session.sessionId, { Message: '1' }));
          expect(flow.status).toBe(200);
          expect(flow.body).toMatchObject({ Type: 'release', SessionId: session.sessionId });
          // Refused before anything was recorded or queued (BullMQ's Redis is down too): nothing
          // can run anywhere, and nothing runs here.
          await pipeline().drain();
          expect(merchant.fulfiller.calls.get(orderId)).toBeUndefined();
        } finally {
          await server.restart();
        }
        for (;;) {
          if (
            await store.get('probe').then(
              () => true,
              () => false,
            )
          )
            break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await untilRunnerUp(pipeline());
        const accepted = await post(fulfillmentUrl(), order);
        expect(accepted.body).toEqual({ OrderId: orderId, SessionId: session.sessionId, Status: 'received' });
        await session.waitForCallback();
        await settled();
        expect(merchant.fulfiller.calls.get(orderId)).toBe(1);
        expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(1);
      });
    }

    it('refuses a fulfillment request whose session did not end in an AddToCart here: 404, nothing emitted', async () => {
      const before = merchant.fulfiller.seen.length;
      const orderId = randomUUID();
      const res = await post(fulfillmentUrl(), {
        OrderId: orderId,
        SessionId: randomUUID(),
        ExtraData: {},
        OrderInfo: null,
      });
      expect(res.status).toBe(404);
      expect(res.body).toStrictEqual({
        statusCode: 404,
        error: 'Not Found',
        code: 'HUBTEL_UNKNOWN_SESSION',
        message: expect.stringContaining('did not end in an AddToCart'),
      });
      // A session that exists but is still at a prompt has no cart either.
      const session = sandbox.serviceApp(merchant.url);
      await session.start();
      expect(
        (
          await post(fulfillmentUrl(), {
            OrderId: orderId,
            SessionId: session.sessionId,
            ExtraData: {},
            OrderInfo: null,
          })
        ).status,
      ).toBe(404);
      await settled();
      expect(merchant.fulfiller.seen.length).toBe(before);
      expect(await merchant.fulfillment.getOrder(orderId)).toBeUndefined();
    });

    it('acknowledges a fulfillment request once recorded, before the handler finishes, and carries the order in a typed event', async () => {
      const { session, orderId } = await toCart();
      merchant.fulfiller.modes.set(orderId, 'hold'); // the handler does not return until released
      const { deliveries } = await session.pay({ orderId });
      expect(deliveries[0]).toMatchObject({ statusCode: 200 });
      expect(JSON.parse(deliveries[0]!.responseBody!)).toEqual({
        OrderId: orderId,
        SessionId: session.sessionId,
        Status: 'received',
      });
      await merchant.fulfiller.until(() => merchant.fulfiller.calls.get(orderId) === 1);
      // Recorded, not run to its end: the record stays pending (never run) while the handler runs.
      expect(await merchant.fulfillment.getOrder(orderId)).toMatchObject({
        handler: { status: 'pending', attempts: 0 },
      });
      expect(merchant.fulfiller.seen.find((e) => e.orderId === orderId)).toMatchObject({
        orderId,
        sessionId: session.sessionId,
        item: { ItemName: '1GB for GHS 5.00', Qty: 1, Price: 5 },
        serviceData: { destination: MOBILE, amount: '5.00', bundle: '1gb' },
      });
      expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(0);
      merchant.fulfiller.releaseHeld();
      expect((await session.waitForCallback()).body).toMatchObject({
        OrderId: orderId,
        ServiceStatus: 'success',
      });
    });

    it('runs the handler once for 10 concurrent duplicate requests (and a later one), and posts one callback', async () => {
      const { session, orderId } = await toCart();
      const { deliveries } = await session.pay({ orderId, fault: { duplicate: 10, concurrent: true } });
      expect(deliveries).toHaveLength(10);
      expect(deliveries.every((d) => d.statusCode === 200)).toBe(true);
      const statuses = deliveries.map((d) => JSON.parse(d.responseBody!).Status).sort();
      expect(statuses).toEqual(['received', ...Array(9).fill('duplicate')].sort());
      await session.waitForCallback();
      const later = await post(fulfillmentUrl(), {
        OrderId: orderId,
        SessionId: session.sessionId,
        ExtraData: {},
        OrderInfo: null,
      });
      expect(later.body).toEqual({ OrderId: orderId, SessionId: session.sessionId, Status: 'duplicate' });
      // Its cart gone (expired): a known OrderId is still answered as the duplicate it is, not
      // refused as an unknown session (the record is read before the cart's refusal).
      await store.delete(`${SERVICE_APP_KEYS.cart}${session.sessionId}`);
      const afterCart = await post(fulfillmentUrl(), {
        OrderId: orderId,
        SessionId: session.sessionId,
        ExtraData: {},
        OrderInfo: null,
      });
      expect(afterCart.body).toEqual({ OrderId: orderId, SessionId: session.sessionId, Status: 'duplicate' });
      await settled();
      expect(merchant.fulfiller.calls.get(orderId)).toBe(1);
      expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(1);
    });

    it("delivers a session once: a second OrderId runs no handler and gets the first one's outcome; a known OrderId for another session is refused (409)", async () => {
      const { session, orderId } = await toCart();
      await session.pay({ orderId });
      await session.waitForCallback();
      const otherId = randomUUID();
      const other = await post(fulfillmentUrl(), {
        OrderId: otherId,
        SessionId: session.sessionId,
        ExtraData: {},
        OrderInfo: null,
      });
      expect(other.status).toBe(200);
      await settled();
      expect(merchant.fulfiller.calls.get(otherId)).toBeUndefined();
      expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === otherId)).toEqual([
        expect.objectContaining({ orderId: otherId, serviceStatus: 'success' }),
      ]);
      const { session: second } = await toCart();
      const reused = await post(fulfillmentUrl(), {
        OrderId: orderId,
        SessionId: second.sessionId,
        ExtraData: {},
        OrderInfo: null,
      });
      expect(reused.status).toBe(409);
      expect(reused.body).toMatchObject({ statusCode: 409, code: 'HUBTEL_ORDER_CONFLICT' });
      await settled();
      expect(merchant.fulfiller.calls.get(orderId)).toBe(1);
      // The refused request did not take the second session: its real order still goes through.
      const { order } = await second.pay();
      expect((await second.waitForCallback()).body).toMatchObject({
        OrderId: order.orderId,
        ServiceStatus: 'success',
      });
    });

    it('keeps only a summary of a done order and of its accepted callback; duplicates, getOrder() and complete() answer as before', async () => {
      const jobKey = (type: string, orderId: string) => `hubtel:service-app:job:${type}:${orderId}`;
      const { session, orderId } = await toCart();
      await session.pay({ orderId });
      const sent = await session.waitForCallback();
      await merchant.fulfiller.until(() => merchant.fulfiller.sent.some((e) => e.orderId === orderId));
      await settled();

      // What is kept for the record's 7 days: what recognises the OrderId and what getOrder() shows.
      const order = (await store.get<Record<string, unknown>>(jobKey('fulfillment', orderId)))!.value;
      expect(order).toMatchObject({ key: orderId, status: 'done', attempts: 1, compacted: true });
      expect(order.payload).toStrictEqual({ sessionId: session.sessionId, serviceCode: 'sandbox-service' });
      expect(order.results).toBeUndefined();
      const callback = (await store.get<Record<string, unknown>>(jobKey('callback', orderId)))!.value;
      expect(callback).toMatchObject({ status: 'done', compacted: true });
      expect(callback.payload).toStrictEqual({ ServiceStatus: 'success', MetaData: sent.body.MetaData });

      // A re-sent request is still a duplicate (nothing runs), another session's is still a conflict.
      const again = await post(fulfillmentUrl(), {
        OrderId: orderId,
        SessionId: session.sessionId,
        ExtraData: {},
        OrderInfo: null,
      });
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ OrderId: orderId, SessionId: session.sessionId, Status: 'duplicate' });
      const { session: other } = await toCart();
      const reused = await post(fulfillmentUrl(), { OrderId: orderId, SessionId: other.sessionId });
      expect(reused.status).toBe(409);
      expect(reused.body).toMatchObject({ code: 'HUBTEL_ORDER_CONFLICT' });
      await settled();
      expect(merchant.fulfiller.calls.get(orderId)).toBe(1);

      expect(await merchant.fulfillment.getOrder(orderId)).toStrictEqual({
        orderId,
        sessionId: session.sessionId,
        serviceCode: 'sandbox-service',
        handler: { status: 'done', attempts: 1 },
        awaitingCompletion: false,
        callback: {
          serviceStatus: 'success',
          metaData: sent.body.MetaData,
          status: 'done',
          attempts: 1,
        },
      });
      // The compacted callback still says what was reported: the same status is a no-op, another a conflict.
      await expect(merchant.fulfillment.complete(orderId, 'success')).resolves.toBeUndefined();
      await expect(merchant.fulfillment.complete(orderId, 'failed')).rejects.toMatchObject({
        code: 'HUBTEL_STORE_CONFLICT',
      });
      await settled();
      expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(1);

      // A deferred order is compacted too, and still reads as awaiting completion until complete().
      const { session: deferred, orderId: deferredId } = await toCart();
      merchant.fulfiller.modes.set(deferredId, 'defer');
      await deferred.pay({ orderId: deferredId });
      await merchant.fulfiller.until(() => merchant.fulfiller.calls.get(deferredId) === 1);
      await settled();
      expect(
        (await store.get<Record<string, unknown>>(jobKey('fulfillment', deferredId)))!.value,
      ).toMatchObject({
        status: 'done',
        compacted: true,
      });
      expect(await merchant.fulfillment.getOrder(deferredId)).toStrictEqual({
        orderId: deferredId,
        sessionId: deferred.sessionId,
        serviceCode: 'sandbox-service',
        handler: { status: 'done', attempts: 1 },
        awaitingCompletion: true,
      });
      await merchant.fulfillment.complete(deferredId, 'failed', { reason: 'late' });
      expect((await deferred.waitForCallback()).body).toStrictEqual({
        SessionId: deferred.sessionId,
        OrderId: deferredId,
        ServiceStatus: 'failed',
        MetaData: { reason: 'late' },
      });
      await settled();
      expect(await merchant.fulfillment.getOrder(deferredId)).toMatchObject({
        awaitingCompletion: false,
        callback: { serviceStatus: 'failed', metaData: { reason: 'late' }, status: 'done' },
      });
    });

    it('retries a throwing handler with backoff, then reports "failed" and dead-letters it', async () => {
      const { session, orderId } = await toCart();
      merchant.fulfiller.modes.set(orderId, 'throw');
      await session.pay({ orderId });
      const callback = await session.waitForCallback();
      expect(callback.body).toStrictEqual({
        SessionId: session.sessionId,
        OrderId: orderId,
        ServiceStatus: 'failed',
        MetaData: null,
      });
      expect(merchant.fulfiller.calls.get(orderId)).toBe(3);
      await merchant.fulfiller.until(() => merchant.fulfiller.dead.some((d) => d.key === orderId));
      // A dead order keeps its whole payload (it may be replayed by hand): only done ones are compacted.
      const record = (await store.get<Record<string, unknown>>(
        `hubtel:service-app:job:fulfillment:${orderId}`,
      ))!.value;
      expect(record.status).toBe('dead');
      expect(record.compacted).toBeUndefined();
      expect(record.payload).toMatchObject({
        orderId,
        sessionId: session.sessionId,
        flow: 'BundleFlow',
        item: { ItemName: '1GB for GHS 5.00', Qty: 1, Price: 5 },
        serviceData: { destination: MOBILE, amount: '5.00', bundle: '1gb' },
      });
      expect(merchant.fulfiller.dead.find((d) => d.key === orderId)).toMatchObject({
        type: 'fulfillment',
        attempts: 3,
        error: `vendor API down for ${orderId}`,
      });
      expect(sandbox.session(session.sessionId)!.state).toBe('fulfillment-failed');
    });

    it('reports "failed" at once, with MetaData, when the handler returns failFulfillment()', async () => {
      const { session, orderId } = await toCart();
      merchant.fulfiller.modes.set(orderId, 'fail');
      await session.pay({ orderId });
      expect((await session.waitForCallback()).body).toStrictEqual({
        SessionId: session.sessionId,
        OrderId: orderId,
        ServiceStatus: 'failed',
        MetaData: { reason: 'out of stock' },
      });
      expect(merchant.fulfiller.calls.get(orderId)).toBe(1);
    });

    it('lets a handler defer, then FulfillmentService.complete() posts the outcome once', async () => {
      const { session, orderId } = await toCart();
      merchant.fulfiller.modes.set(orderId, 'defer');
      await session.pay({ orderId });
      await merchant.fulfiller.until(() => merchant.fulfiller.calls.get(orderId) === 1);
      await settled();
      expect(await merchant.fulfillment.getOrder(orderId)).toMatchObject({
        awaitingCompletion: true,
        handler: { status: 'done' },
      });
      expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(0);

      await merchant.fulfillment.complete(orderId, 'success', { serial: 'SN-1' });
      expect((await session.waitForCallback()).body).toStrictEqual({
        SessionId: session.sessionId,
        OrderId: orderId,
        ServiceStatus: 'success',
        MetaData: { serial: 'SN-1' },
      });
      await merchant.fulfiller.until(() => merchant.fulfiller.sent.some((e) => e.orderId === orderId));
      expect(merchant.fulfiller.sent.find((e) => e.orderId === orderId)).toMatchObject({
        reportedBy: 'app',
        serviceStatus: 'success',
      });

      await expect(
        merchant.fulfillment.complete(orderId, 'success', { serial: 'SN-1' }),
      ).resolves.toBeUndefined();
      await expect(merchant.fulfillment.complete(orderId, 'failed')).rejects.toMatchObject({
        code: 'HUBTEL_STORE_CONFLICT',
      });
      await expect(merchant.fulfillment.complete('no-such-order', 'success')).rejects.toMatchObject({
        code: 'HUBTEL_NOT_FOUND',
      });
      await expect(merchant.fulfillment.complete(orderId, 'done' as never)).rejects.toMatchObject({
        code: 'HUBTEL_VALIDATION_FAILED',
      });
      await settled();
      expect(sandbox.fulfillmentCallbacks().filter((c) => c.orderId === orderId)).toHaveLength(1);
    });

    it('retries the callback through platform 5xx and time-outs until it is accepted', async () => {
      const { session, orderId } = await toCart();
      sandbox.faults.add({ match: { path: '/callback' }, times: 1, status: 503 });
      sandbox.faults.add({ match: { path: '/callback' }, times: 1, timeout: true });
      sandbox.faults.add({ match: { path: '/callback' }, times: 1, status: 500 });
      await session.pay({ orderId });
      const callback = await session.waitForCallback();
      expect(callback.body).toMatchObject({ OrderId: orderId, ServiceStatus: 'success' });
      await merchant.fulfiller.until(() => merchant.fulfiller.sent.some((e) => e.orderId === orderId));
      const attempts = sandbox.requests().filter((r) => r.path === '/callback');
      // Three faulted attempts, then the one the platform accepted (more only if a healthy attempt
      // was slower than the time-out, which is retried just the same).
      const faulted = attempts.map((r) => r.faultId !== null);
      expect(faulted.slice(0, 3)).toEqual([true, true, true]);
      expect(faulted.slice(3)).toContain(false);
      expect(merchant.fulfiller.sent.find((e) => e.orderId === orderId)?.attempts).toBe(attempts.length);
      expect(merchant.fulfiller.calls.get(orderId)).toBe(1); // the handler is not re-run for the callback
    });

    it('dead-letters the callback at the deadline when the platform never accepts it, without crashing', async () => {
      const { session, orderId } = await toCart();
      const fault = sandbox.faults.add({ match: { path: '/callback' }, status: 502 });
      await session.pay({ orderId });
      await merchant.fulfiller.until(() =>
        merchant.fulfiller.dead.some((d) => d.key === orderId && d.type === 'callback'),
      );
      fault.remove();
      const dead = merchant.fulfiller.dead.find((d) => d.key === orderId && d.type === 'callback')!;
      expect(dead.attempts).toBeGreaterThan(1);
      expect(dead.payload).toMatchObject({ callback: { OrderId: orderId, ServiceStatus: 'success' } });
      expect(sandbox.requests().filter((r) => r.path === '/callback').length).toBe(dead.attempts);
      expect(await merchant.fulfillment.getOrder(orderId)).toMatchObject({
        callback: { status: 'dead', serviceStatus: 'success' },
      });
      expect(merchant.logger.lines.some((l) => l.includes(orderId) && l.includes('dead-lettered'))).toBe(
        true,
      );
      // The app is still serving.
      expect((await sandbox.serviceApp(merchant.url).start()).Type).toBe('Response');
    });

    it('answers malformed and hostile fulfillment bodies with a machine-readable 4xx, nothing emitted', async () => {
      const before = merchant.fulfiller.seen.length;
      const cases: Array<[string, unknown]> = [
        ['an array', [{ OrderId: 'o', SessionId: 's' }]],
        ['an empty object', {}],
        ['a numeric OrderId', { OrderId: 42, SessionId: 's' }],
        ['an object OrderId', { OrderId: { $gt: '' }, SessionId: 's' }],
        ['an empty SessionId', { OrderId: 'o', SessionId: '' }],
        ['a huge OrderId', { OrderId: 'o'.repeat(1_000), SessionId: 's' }],
        ['ExtraData not an object', { OrderId: 'o', SessionId: 's', ExtraData: 'x' }],
        ['ExtraData an array', { OrderId: 'o', SessionId: 's', ExtraData: [] }],
      ];
      for (const [what, body] of cases) {
        const res = await post(fulfillmentUrl(), body);
        expect({ what, status: res.status }).toEqual({ what, status: 400 });
        expect(res.body).toMatchObject({
          statusCode: 400,
          code: 'HUBTEL_INVALID_BODY',
          message: expect.stringContaining('Invalid fulfillment request'),
        });
      }
      for (const [what, expected, res] of [
        ['broken JSON', 400, await post(fulfillmentUrl(), '{"OrderId": ')],
        [
          '2 MB body',
          413,
          await post(fulfillmentUrl(), {
            OrderId: 'o',
            SessionId: 's',
            ExtraData: { blob: 'x'.repeat(2_000_000) },
          }),
        ],
        ['text/plain', 400, await post(fulfillmentUrl(), 'OrderId=o', { 'Content-Type': 'text/plain' })],
      ] as const) {
        expect({ what, status: res.status, json: res.body?.statusCode }).toEqual({
          what,
          status: expected,
          json: expected,
        });
      }

      // Prototype-pollution keys, even for a real cart: refused on both adapters (400), nothing
      // polluted, the cart not claimed.
      const { session } = await toCart();
      for (const hostile of [
        `{"__proto__": {"polluted": true}, "OrderId": "${randomUUID()}", "SessionId": "${session.sessionId}"}`,
        `{"OrderId": "${randomUUID()}", "SessionId": "${session.sessionId}", "ExtraData": {"constructor": {"prototype": {"polluted": true}}}}`,
      ]) {
        const res = await post(fulfillmentUrl(), hostile);
        expect(res.status).toBe(400);
        if (adapter === 'express')
          expect(res.body).toMatchObject({
            code: 'HUBTEL_INVALID_BODY',
            issues: [{ message: expect.stringMatching(/^key "(__proto__|constructor)" is not allowed$/) }],
          });
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      // Deeply nested ExtraData (a stack-exhaustion attempt), even for a real cart: 400, nothing
      // claimed, and the app keeps serving.
      const deepOrder = randomUUID();
      const deep = await post(
        fulfillmentUrl(),
        `{"OrderId": "${deepOrder}", "SessionId": "${session.sessionId}", "ExtraData": ${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`,
      );
      expect(deep.status).toBe(400);
      expect(deep.body).toMatchObject({
        code: 'HUBTEL_INVALID_BODY',
        issues: [{ message: expect.stringContaining('nested deeper') }],
      });
      expect((await sandbox.serviceApp(merchant.url).start()).Type).toBe('Response');

      await settled();
      expect(merchant.fulfiller.seen.length).toBe(before);
      expect(await merchant.fulfillment.getOrder(deepOrder)).toBeUndefined();
    });
  });
});
