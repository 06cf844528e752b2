import { type HubtelStore } from 'nestjs-hubtel';
import {
  ADAPTERS,
  FakeCheckoutApi,
  baseOptions,
  callbackBody,
  settle,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';
import { checkoutSettled } from './support/job-settle.js';
import { describeEachStore } from './support/test-stores.js';

/**
 * Malformed and hostile callback bodies: each is answered 4xx with a machine-readable JSON body,
 * and nothing is recorded or emitted. A genuine callback afterwards still works (nothing was
 * polluted or broken).
 */
describeEachStore(ADAPTERS, 'checkout callback: malformed and hostile bodies', (adapter, stores) => {
  let api: FakeCheckoutApi;
  let t: CheckoutTestApp;
  let store: HubtelStore;
  let checkoutId: string;

  beforeAll(async () => {
    api = await FakeCheckoutApi.start();
    store = await stores.create();
    t = await startCheckoutApp(
      adapter,
      baseOptions(api, { store }),
      {},
      undefined,
      false,
      stores.jobRunnerImports(),
    );
    checkoutId = (
      await t.service.createInvoice({ totalAmount: 10, description: 'Target', clientReference: 'target' })
    ).checkoutId;
  });
  afterAll(async () => {
    await t.close();
    await api.close();
    await stores.dispose();
  });

  async function recordedJobs(): Promise<string[]> {
    const keys: string[] = [];
    for await (const [key] of store.scan('hubtel:checkout:job:')) keys.push(key);
    return keys;
  }

  function valid(): Record<string, any> {
    return callbackBody({ ref: 'target', checkoutId, amount: 10 });
  }

  const deep = (levels: number) => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = { a: value };
    return value;
  };

  const cases: Array<[string, () => string, RegExp | number, string | undefined]> = [
    ['invalid JSON', () => '{"ResponseCode": "0000", "Data": {', 400, undefined],
    ['an empty body', () => '', 400, undefined],
    ['a JSON array', () => JSON.stringify([valid()]), 400, 'HUBTEL_INVALID_BODY'],
    ['a JSON string', () => JSON.stringify('0000'), 400, undefined],
    ['JSON null', () => 'null', 400, undefined],
    [
      'an object without Data',
      () => JSON.stringify({ ResponseCode: '0000', Status: 'Success' }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'Data as a string',
      () => JSON.stringify({ ResponseCode: '0000', Data: 'paid' }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'Data as an array',
      () => JSON.stringify({ ResponseCode: '0000', Data: [valid().Data] }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'a missing ClientReference',
      () => JSON.stringify({ ...valid(), Data: { ...valid().Data, ClientReference: undefined } }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'a missing CheckoutId',
      () => JSON.stringify({ ...valid(), Data: { ...valid().Data, CheckoutId: undefined } }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'a missing ResponseCode',
      () => JSON.stringify({ ...valid(), ResponseCode: undefined }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'Amount as text',
      () => JSON.stringify({ ...valid(), Data: { ...valid().Data, Amount: '10' } }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'a negative Amount',
      () => JSON.stringify({ ...valid(), Data: { ...valid().Data, Amount: -10 } }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'ClientReference as a number',
      () => JSON.stringify({ ...valid(), Data: { ...valid().Data, ClientReference: 12345 } }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'ClientReference as an object',
      () => JSON.stringify({ ...valid(), Data: { ...valid().Data, ClientReference: { $ne: null } } }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'a 1000-character ClientReference',
      () => JSON.stringify({ ...valid(), Data: { ...valid().Data, ClientReference: 'x'.repeat(1000) } }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'ResponseCode as a number',
      () => JSON.stringify({ ...valid(), ResponseCode: 0 }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'PaymentDetails as a string',
      () => JSON.stringify({ ...valid(), Data: { ...valid().Data, PaymentDetails: 'momo' } }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'a "__proto__" key',
      () => `{"__proto__":{"polluted":true},${JSON.stringify(valid()).slice(1)}`,
      400,
      undefined,
    ],
    [
      'a nested "__proto__" key',
      () => JSON.stringify(valid()).replace('"Data":{', '"Data":{"__proto__":{"isAdmin":true},'),
      400,
      undefined,
    ],
    [
      'a "constructor.prototype" key',
      () => JSON.stringify({ ...valid(), constructor: { prototype: { polluted: true } } }),
      400,
      undefined,
    ],
    [
      'a body nested 50 levels deep',
      () => JSON.stringify({ ...valid(), Extra: deep(50) }),
      400,
      'HUBTEL_INVALID_BODY',
    ],
    [
      'a body over the callback limit (70 KB)',
      () => JSON.stringify({ ...valid(), Padding: 'x'.repeat(70 * 1024) }),
      413,
      'HUBTEL_BODY_TOO_LARGE',
    ],
    [
      'a body over the server limit (2 MB)',
      () => JSON.stringify({ ...valid(), Padding: 'x'.repeat(2 * 1024 * 1024) }),
      413,
      undefined,
    ],
  ];

  it.each(cases)(
    'answers %s with a machine-readable 4xx, records and emits nothing',
    async (_name, make, status, code) => {
      const res = await t.post(make());
      expect(res.status).toBe(status);
      expect(res.body).toEqual(expect.objectContaining({ statusCode: status }));
      expect(typeof res.body.message).toBe('string');
      if (code) {
        expect(res.body.code).toBe(code);
        if (code === 'HUBTEL_INVALID_BODY')
          expect(Array.isArray(res.body.issues) && res.body.issues.length > 0).toBe(true);
      }
      await checkoutSettled(t.app);
      expect(await recordedJobs()).toEqual([]);
      expect(t.handlers.events).toEqual({
        paid: [],
        failed: [],
        rejected: [],
        expired: [],
        dead: [],
        attention: [],
        plainPaid: [],
      });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    },
  );

  it('names each bad field in issues', async () => {
    const res = await t.post({
      ResponseCode: 7,
      Data: { CheckoutId: '', ClientReference: 5, Status: 'Success', Amount: 'ten' },
    });
    expect(res.status).toBe(400);
    const fields = (res.body.issues as Array<{ field: string }>).map((i) => i.field);
    expect(fields).toEqual(
      expect.arrayContaining(['ResponseCode', 'Data.CheckoutId', 'Data.ClientReference', 'Data.Amount']),
    );
  });

  it('answers one clear message per bad field: a missing field is "required"', async () => {
    const body = valid();
    delete body.Data.CheckoutId;
    body.Data.Amount = 'ten';
    body.Data.ClientReference = '';
    const res = await t.post(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'HUBTEL_INVALID_BODY' });
    expect(res.body.issues).toEqual([
      { field: 'Data.CheckoutId', message: 'Data.CheckoutId is required' },
      { field: 'Data.ClientReference', message: 'Data.ClientReference must not be empty' },
      { field: 'Data.Amount', message: 'Data.Amount must be a number, got a string' },
    ]);
    expect(res.body.message).toBe(
      'Invalid checkout callback: Data.CheckoutId is required; Data.ClientReference must not be empty; Data.Amount must be a number, got a string',
    );
  });

  it('refuses prototype-pollution keys itself, whatever the body parser let through', async () => {
    // JSON.parse keeps "__proto__" as an own key, as Express's parser does.
    for (const text of [
      `{"__proto__":{"polluted":true},${JSON.stringify(valid()).slice(1)}`,
      JSON.stringify({ ...valid(), constructor: { prototype: { polluted: true } } }),
      JSON.stringify(valid()).replace('"PaymentDetails":{', '"PaymentDetails":{"prototype":{},'),
    ]) {
      await expect(t.service.handleCallback(JSON.parse(text))).rejects.toMatchObject({
        code: 'HUBTEL_VALIDATION_FAILED',
        issues: [
          expect.objectContaining({
            message: expect.stringMatching(/key "(__proto__|constructor|prototype)" is not allowed/),
          }),
        ],
      });
    }
    await checkoutSettled(t.app);
    expect(await recordedJobs()).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers a text/plain body 400 as well', async () => {
    const res = await fetch(t.callbackUrl, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'ResponseCode=0000',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { statusCode: number }).statusCode).toBe(400);
  });

  it('still handles the genuine callback afterwards, once', async () => {
    const res = await t.post(valid());
    expect(res.status).toBe(200);
    await t.handlers.waitFor('paid');
    await checkoutSettled(t.app);
    await settle();
    expect(t.handlers.paidCalls).toBe(1);
    expect(await recordedJobs()).toEqual(['hubtel:checkout:job:hubtel.checkout.paid:target']);
  });
});
