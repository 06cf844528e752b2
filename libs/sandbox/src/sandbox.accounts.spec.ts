import { HubtelConfigError } from 'nestjs-hubtel';
import { HubtelSandbox } from './sandbox.server.js';
import { SandboxNotFoundError } from './sandbox.errors.js';
import { SANDBOX_DEFAULT_CREDENTIALS } from './sandbox.constants.js';
import { resolveSandboxOptions } from './sandbox.options.js';
import { sandboxDotenv, sandboxEnv } from './sandbox.env.js';
import type { HubtelSandboxOptions, SandboxCredentialPair } from './sandbox.option-types.js';
import { call, checkoutRequest, startReceiver, type Receiver } from './__tests__/sandbox.test-helpers.js';

const failure = (options: unknown): string => {
  try {
    resolveSandboxOptions(options as HubtelSandboxOptions);
  } catch (e) {
    if (e instanceof HubtelConfigError) return `${e.option}: ${e.message.split('": ')[1]}`;
    throw e;
  }
  return 'no error';
};

describe('sandbox accounts: options', () => {
  it('a sandbox without `accounts` serves the default account only, named "default"', () => {
    const o = resolveSandboxOptions({});
    expect(o.accounts.map((a) => a.name)).toEqual(['default']);
    expect(o.accounts[0]).toMatchObject({
      posSalesId: '2000000',
      credentials: { ...SANDBOX_DEFAULT_CREDENTIALS, callback: undefined },
      senderIds: [],
    });
  });

  it('fills a named account from its name and place; given values win', () => {
    const o = resolveSandboxOptions({
      accounts: [{ name: 'north' }, { name: 'south', posSalesId: 'S-9', senderIds: ['South', 'South'] }],
    });
    expect(o.accounts.map((a) => [a.name, a.posSalesId, a.senderIds])).toEqual([
      ['default', '2000000', []],
      ['north', '2000001', []],
      ['south', 'S-9', ['South']],
    ]);
    expect(o.accounts[1]!.credentials).toEqual({
      api: { clientId: 'sandbox-north-api', clientSecret: 'sandbox-north-api-secret' },
      sms: { clientId: 'sandbox-north-sms', clientSecret: 'sandbox-north-sms-secret' },
      callback: undefined,
    });
  });

  it.each([
    [{ accounts: {} }, 'accounts: must be an array of at most 100 accounts'],
    [{ accounts: [{}] }, 'accounts[0].name: is required'],
    [
      { accounts: [{ name: 'North' }] },
      'accounts[0].name: must be 1-32 lower-case letters, digits, "-" or "_", starting with a letter',
    ],
    [
      { accounts: [{ name: 'default' }] },
      `accounts[0].name: "default" is reserved for the top-level options' account`,
    ],
    [
      { accounts: [{ name: 'north' }, { name: 'north' }] },
      `accounts[1].name: "north" (HUBTEL_NORTH_*) is already account "north"'s`,
    ],
    // Both read HUBTEL_NORTH_EAST_* in an environment: one would shadow the other.
    [
      { accounts: [{ name: 'north-east' }, { name: 'north_east' }] },
      `accounts[1].name: "north_east" (HUBTEL_NORTH_EAST_*) is already account "north-east"'s`,
    ],
    [
      { accounts: [{ name: 'north', posSalesId: '2000000' }] },
      `accounts[0].posSalesId: POS Sales ID "2000000" is already the default account's`,
    ],
    [
      {
        accounts: [
          { name: 'north', posSalesId: '7' },
          { name: 'south', posSalesId: '7' },
        ],
      },
      `accounts[1].posSalesId: POS Sales ID "7" is already account "north"'s`,
    ],
    [
      { accounts: [{ name: 'north', posSalesId: 'a b' }] },
      'accounts[0].posSalesId: must be 1-64 letters, digits, "-" or "_"',
    ],
    [
      { accounts: [{ name: 'north', credentials: { api: { clientId: 'sandbox-api', clientSecret: 'x' } } }] },
      `accounts[0].credentials.api.clientId: this API key is already the default account's`,
    ],
    [
      { accounts: [{ name: 'north', credentials: { sms: { clientId: 'k', clientSecret: '' } } }] },
      'accounts[0].credentials.sms.clientSecret: must not be empty',
    ],
    [
      { sms: { senderIds: ['Shop'] }, accounts: [{ name: 'north', senderIds: ['shop'] }] },
      `accounts[0].senderIds[0]: sender id "shop" is already the default account's`,
    ],
    [
      { accounts: [{ name: 'north', senderIds: 'North' }] },
      'accounts[0].senderIds: must be an array of at most 100 sender ids',
    ],
    [
      { accounts: [{ name: 'north', senderIds: ['TwelveChars!'] }] },
      'accounts[0].senderIds[0]: must be a sender id of 1 to 11 characters',
    ],
    [{ sms: { senderIds: [''] } }, 'sms.senderIds[0]: must be a sender id of 1 to 11 characters'],
  ])('%j fails with %s', (options, expected) => {
    expect(failure(options)).toBe(expected);
  });
});

describe('sandbox accounts: two accounts over HTTP', () => {
  let sandbox: HubtelSandbox;
  let merchant: Receiver;
  let north: { api: SandboxCredentialPair; sms: SandboxCredentialPair; pos: string };
  let main: { api: SandboxCredentialPair; sms: SandboxCredentialPair; pos: string };

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start({
      sms: { senderIds: ['MainShop'] },
      accounts: [{ name: 'north', senderIds: ['NorthShop'], merchantName: 'North Shop' }],
    });
    merchant = await startReceiver();
    const n = sandbox.account('north');
    north = { ...n.credentials, pos: n.posSalesId };
    main = { ...sandbox.credentials, pos: sandbox.posSalesId };
  });
  afterEach(() => sandbox.reset());
  afterAll(async () => {
    await sandbox.stop();
    await merchant.close();
  });

  const initiate = (auth: SandboxCredentialPair, merchantAccountNumber: string) => {
    const body = checkoutRequest(merchant, { merchantAccountNumber });
    return call(sandbox, 'POST', '/items/initiate', { body, auth }).then((res) => ({
      res,
      ref: body.clientReference as string,
    }));
  };
  const status = (auth: SandboxCredentialPair, pos: string, ref: string) =>
    call(sandbox, 'GET', `/transactions/${pos}/status?clientReference=${encodeURIComponent(ref)}`, { auth });

  it('lists its accounts (copies), and refuses a name it does not serve', () => {
    expect(sandbox.accounts().map((a) => [a.name, a.posSalesId, a.senderIds])).toEqual([
      ['default', '2000000', ['MainShop']],
      ['north', '2000001', ['NorthShop']],
    ]);
    sandbox.account('north').credentials.api.clientId = 'changed';
    expect(sandbox.account('north').credentials.api.clientId).toBe('sandbox-north-api');
    expect(() => sandbox.account('south')).toThrow(SandboxNotFoundError);
    expect(() => sandbox.invoices({ account: 'south' })).toThrow(SandboxNotFoundError);
  });

  it("each account's keys create an invoice on its own POS Sales ID and check its status there", async () => {
    const a = await initiate(main.api, main.pos);
    const b = await initiate(north.api, north.pos);
    expect([a.res.status, b.res.status]).toEqual([200, 200]);
    expect(sandbox.invoice(a.ref)!.account).toBe('default');
    expect(sandbox.invoice(b.ref)!.account).toBe('north');
    await sandbox.pay(b.ref);
    const checked = await status(north.api, north.pos, b.ref);
    expect(checked.status).toBe(200);
    expect(checked.json.data).toMatchObject({ clientReference: b.ref, status: 'Paid' });
    expect((await status(main.api, main.pos, a.ref)).json.data).toMatchObject({ status: 'Unpaid' });
    // The payment page shows the account's own merchant name.
    const page = await fetch(sandbox.invoice(b.ref)!.checkoutUrl).then((r) => r.text());
    expect(page).toContain('North Shop');
    expect(sandbox.invoices({ account: 'north' }).map((i) => i.clientReference)).toEqual([b.ref]);
    expect(sandbox.invoices({ account: 'default' }).map((i) => i.clientReference)).toEqual([a.ref]);
    expect(sandbox.deliveries({ account: 'north' }).map((d) => d.clientReference)).toEqual([b.ref]);
    expect(sandbox.deliveries({ account: 'default' })).toEqual([]);
  });

  it("one account's keys on the other's POS Sales ID: 4101 at creation and at the status check; nothing created", async () => {
    const created = await initiate(north.api, main.pos);
    expect(created.res.status).toBe(403);
    expect(created.res.json).toMatchObject({ responseCode: '4101', status: 'Error' });
    expect(sandbox.invoices()).toEqual([]);

    const mine = await initiate(main.api, main.pos);
    const wrongPos = await status(north.api, main.pos, mine.ref);
    expect(wrongPos.status).toBe(403);
    expect(wrongPos.json).toMatchObject({ responseCode: '4101', data: null });
    // On its own POS Sales ID, the other account's invoice is unknown, as one never created.
    const ownPos = await status(north.api, north.pos, mine.ref);
    expect(ownPos.status).toBe(404);
  });

  it("a programmable-services order: the other account's keys on its POS Sales ID are 4105", async () => {
    const session = sandbox.recordServicePayment('svc-north-1', { amount: 5, account: 'north' });
    expect(session.account).toBe('north');
    expect((await status(north.api, north.pos, 'svc-north-1')).json.data).toMatchObject({
      status: 'Paid',
      amount: 5,
    });
    const refused = await status(main.api, north.pos, 'svc-north-1');
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ responseCode: '4105', data: null });
    expect((await status(main.api, main.pos, 'svc-north-1')).status).toBe(404);
    expect(sandbox.sessions({ account: 'north' }).map((s) => s.sessionId)).toEqual(['svc-north-1']);
    expect(sandbox.sessions({ account: 'default' })).toEqual([]);
    let error: unknown;
    try {
      sandbox.recordServicePayment('svc-north-1', { amount: 5, account: 'default' });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      code: 'HUBTEL_VALIDATION_FAILED',
      issues: [{ field: 'account', message: 'the session belongs to account "north"' }],
    });
  });

  it("SMS: each account's keys send from its own sender ids; another's is a bad sender (400, sub-code 2)", async () => {
    const send = (auth: SandboxCredentialPair, From: string) =>
      call(sandbox, 'POST', '/v1/messages/batch/simple/send', {
        auth,
        body: { From, Recipients: ['0241234567'], Content: `from ${From}` },
      });
    expect((await send(north.sms, 'NorthShop')).status).toBe(200);
    expect((await send(main.sms, 'MainShop')).status).toBe(200);
    const crossed = await send(north.sms, 'MainShop');
    expect(crossed.status).toBe(400);
    expect(crossed.json).toMatchObject({ status: 2, errors: [{ field: 'From' }] });
    expect((await send(main.sms, 'Elsewhere')).status).toBe(400);
    expect(sandbox.messages({ account: 'north' }).map((m) => m.from)).toEqual(['NorthShop']);
    expect(sandbox.messages({ account: 'default' }).map((m) => m.from)).toEqual(['MainShop']);
    expect(sandbox.messagesTo('233241234567', { account: 'north' })).toHaveLength(1);
    // A message is looked up with its own account's keys only.
    const [northMessage] = sandbox.messages({ account: 'north' });
    expect(
      (await call(sandbox, 'GET', `/v1/messages/${northMessage!.messageId}`, { auth: north.sms })).status,
    ).toBe(200);
    expect(
      (await call(sandbox, 'GET', `/v1/messages/${northMessage!.messageId}`, { auth: main.sms })).status,
    ).toBe(404);
  });

  it('the admin API lists by account, and names an unknown one (404)', async () => {
    await initiate(north.api, north.pos);
    const all = await call(sandbox, 'GET', '/_sandbox/invoices');
    const northOnly = await call(sandbox, 'GET', '/_sandbox/invoices?account=north');
    const mainOnly = await call(sandbox, 'GET', '/_sandbox/invoices?account=default');
    expect([all.json.length, northOnly.json.length, mainOnly.json.length]).toEqual([1, 1, 0]);
    const unknown = await call(sandbox, 'GET', '/_sandbox/messages?account=south');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: 'HUBTEL_NOT_FOUND' });
    const info = await call(sandbox, 'GET', '/_sandbox/accounts');
    expect(info.json.map((a: { name: string }) => a.name)).toEqual(['default', 'north']);
    expect((await call(sandbox, 'GET', '/_sandbox')).json.accounts).toEqual(info.json);
  });

  it('the dashboard offers an account filter (a single-account sandbox has none)', async () => {
    const page = await fetch(`${sandbox.url}/_dashboard`).then((r) => r.text());
    expect(page).toContain('data-testid="account-filter"');
    expect(page).toContain('<option value="north">north</option>');
    const single = await HubtelSandbox.start();
    try {
      expect(await fetch(`${single.url}/_dashboard`).then((r) => r.text())).not.toContain(
        'data-testid="account-filter"',
      );
    } finally {
      await single.stop();
    }
  });

  it("prints a named account's variables: HUBTEL_ACCOUNTS and HUBTEL_NORTH_* mirroring the default's names", () => {
    const single = sandboxEnv(sandbox);
    const env = sandboxEnv(sandbox, { accounts: ['north'] });
    const expected = Object.fromEntries(
      Object.keys(single).map((name) => [name.replace(/^HUBTEL_/, 'HUBTEL_NORTH_'), expect.any(String)]),
    );
    expect(env).toEqual({ HUBTEL_ACCOUNTS: 'north', ...expected });
    expect(env).toMatchObject({
      HUBTEL_NORTH_CLIENT_ID: 'sandbox-north-api',
      HUBTEL_NORTH_CLIENT_SECRET: 'sandbox-north-api-secret',
      HUBTEL_NORTH_POS_SALES_ID: '2000001',
      HUBTEL_NORTH_MERCHANT_ACCOUNT_NUMBER: '2000001',
      HUBTEL_NORTH_SMS_CLIENT_ID: 'sandbox-north-sms',
      HUBTEL_NORTH_SMS_CLIENT_SECRET: 'sandbox-north-sms-secret',
      HUBTEL_NORTH_SMS_SENDER_ID: 'NorthShop',
      HUBTEL_NORTH_CHECKOUT_URL: sandbox.url,
    });
    expect(single.HUBTEL_SMS_SENDER_ID).toBe('MainShop');
    const both = sandboxEnv(sandbox, { accounts: ['default', 'north'] });
    expect(both).toEqual({ ...single, ...env });
    expect(sandboxDotenv(sandbox, { accounts: ['north'] })).toContain(
      '\nHUBTEL_NORTH_POS_SALES_ID=2000001\n',
    );
    expect(() => sandboxEnv(sandbox, { accounts: ['south'] })).toThrow(SandboxNotFoundError);
  });
});

describe('sandbox accounts: fulfillment callbacks with callback credentials', () => {
  let sandbox: HubtelSandbox;
  const northCallback = { clientId: 'north-cb', clientSecret: 'north-cb-secret' };
  const mainCallback = { clientId: 'main-cb', clientSecret: 'main-cb-secret' };

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start({
      credentials: { callback: mainCallback },
      accounts: [{ name: 'north', credentials: { callback: northCallback } }, { name: 'south' }],
    });
  });
  afterAll(() => sandbox.stop());

  const callback = (sessionId: string, auth?: SandboxCredentialPair) =>
    call(sandbox, 'POST', '/callback', {
      body: { SessionId: sessionId, OrderId: 'o-1', ServiceStatus: 'success', MetaData: null },
      ...(auth ? { auth } : {}),
    });

  it("prints each account's callback key pair (none where the receiver asks for none)", () => {
    const env = sandboxEnv(sandbox, { accounts: ['default', 'north', 'south'] });
    expect(env).toMatchObject({
      HUBTEL_CALLBACK_CLIENT_ID: 'main-cb',
      HUBTEL_CALLBACK_CLIENT_SECRET: 'main-cb-secret',
      HUBTEL_NORTH_CALLBACK_CLIENT_ID: 'north-cb',
      HUBTEL_NORTH_CALLBACK_CLIENT_SECRET: 'north-cb-secret',
    });
    expect(env).not.toHaveProperty('HUBTEL_SOUTH_CALLBACK_CLIENT_ID'); // south's receiver asks for none
  });

  it("accepts a callback for the account's session with its credentials, and records the account", async () => {
    sandbox.recordServicePayment('cb-north', { amount: 2, orderId: 'o-1', account: 'north' });
    const res = await callback('cb-north', northCallback);
    expect(res.status).toBe(200);
    expect(sandbox.fulfillmentCallbacks({ account: 'north' })).toEqual([
      expect.objectContaining({ sessionId: 'cb-north', matched: true, account: 'north' }),
    ]);
  });

  it("refuses another account's callback credentials (403 4105) and none or wrong ones (401 0001)", async () => {
    sandbox.recordServicePayment('cb-north-2', { amount: 2, orderId: 'o-1', account: 'north' });
    const crossed = await callback('cb-north-2', mainCallback);
    expect(crossed.status).toBe(403);
    expect(crossed.json).toMatchObject({ responseCode: '4105', data: null });
    expect((await callback('cb-north-2')).json).toMatchObject({ responseCode: '0001' });
    expect((await callback('cb-north-2', { clientId: 'north-cb', clientSecret: 'nope' })).status).toBe(401);
    expect(sandbox.fulfillmentCallbacks().filter((c) => c.sessionId === 'cb-north-2')).toEqual([]);
    expect(sandbox.session('cb-north-2')!.state).toBe('paid');
  });

  it('an account without callback credentials takes callbacks without any, as the contract shows', async () => {
    sandbox.recordServicePayment('cb-south', { amount: 2, orderId: 'o-1', account: 'south' });
    expect((await callback('cb-south')).status).toBe(200);
    expect((await callback('cb-south', northCallback)).status).toBe(403);
  });
});
