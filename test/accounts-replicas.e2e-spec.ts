/**
 * Named accounts on two replicas in separate processes, on one real Redis and on a 3-master Redis
 * Cluster (records, and the BullMQ queues the jobs run on), the sandbox CLI serving the default
 * account and `north` in a third process (test/support/replica-app.ts with ACCOUNTS=north for
 * checkout and SERVICE_APP_ACCOUNT=north for the service app): a checkout invoice is confirmed with
 * its own account whichever replica its callback reaches and runs its jobs; a service-app order of
 * north's is verified with north's keys and called back with north's credentials whichever
 * replica runs it, a kill -9 included. One system per topology for both modules' accounts (the
 * single-process cases: test/checkout-accounts.e2e-spec.ts, test/service-app-accounts.e2e-spec.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  buildFulfillmentRequest,
  buildServiceFlowRequest,
  sendCheckoutCallback,
  sendJson,
} from 'nestjs-hubtel/testing';
import { eventually, type AppProcess, type SandboxProcess } from './support/multi-process.js';
import {
  ReplicaSystem,
  TAKEOVER_BOUND_MS,
  TOPOLOGIES,
  fileSandbox,
  fileSpaces,
  id,
} from './support/replica-system.js';

/** Records each fulfillment callback with the Basic auth it came with. */
async function callbackReceiver() {
  const received: Array<{ authorization: string | undefined; body: Record<string, unknown> }> = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/callback')
        received.push({ authorization: req.headers.authorization, body: JSON.parse(raw) });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ResponseCode":"0000"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

interface CliAccount {
  name: string;
  credentials: { api: { clientId: string; clientSecret: string } };
  posSalesId: string;
}

// The sandbox CLI serving north too (its own keys and POS Sales ID), in its own process: one for
// both topologies (each test resets what it counts).
const sharedSandbox = fileSandbox({ args: ['--accounts', 'north'] });
afterAll(() => sharedSandbox.stop(), 60_000);
// Each topology's Redis, the cluster's started while the first system runs.
const spaces = fileSpaces();
afterAll(() => spaces.dispose(), 60_000);

for (const topology of TOPOLOGIES)
  topology.binary.describe(
    `named checkout and service-app accounts on two replicas, ${topology.name}, the sandbox in a third process`,
    () => {
      const system = new ReplicaSystem(topology, { sandbox: sharedSandbox.get, space: spaces.get });
      const northCallback = { clientId: 'north-callback', clientSecret: 'north-callback-secret' };
      let sandbox: SandboxProcess;
      let receiver: Awaited<ReturnType<typeof callbackReceiver>>;
      let north: CliAccount;
      let a: AppProcess;
      let b: AppProcess;

      beforeAll(async () => {
        await system.start();
        sandbox = system.sandbox;
        north = (sandbox.info as unknown as { accounts: CliAccount[] }).accounts.find(
          (x) => x.name === 'north',
        )!;
        receiver = await callbackReceiver();
        const env = {
          ACCOUNTS: 'north',
          SERVICE_APP_ACCOUNT: 'north',
          SERVICE_APP_ACCOUNT_OPTIONS: JSON.stringify({
            statusCheck: {
              ...north.credentials.api,
              posSalesId: north.posSalesId,
              url: sandbox.info.baseUrls.status,
            },
            callbackCredentials: northCallback,
            callbackUrl: receiver.url,
          }),
        };
        [a, b] = await Promise.all([system.replica('a', env), system.replica('b', env)]);
      }, 180_000);
      // Each test counts the status checks it caused.
      beforeEach(() => system.sandbox.post('reset'));

      afterAll(async () => {
        await receiver?.close();
        await system.dispose();
      }, 60_000);

      const info = () => system.sandbox.info;
      const northPos = () => info().accounts!.find((account) => account.name === 'north')!.posSalesId;
      const paidLines = (ref: string) =>
        system.replicas.flatMap((app) =>
          [...app.output.all.matchAll(new RegExp(`^PAID ${ref} (\\S+) by (\\S+)$`, 'gm'))].map((m) => m[1]),
        );
      const statusChecks = async () =>
        (await system.sandbox.get<Array<{ path: string; statusCode: number }>>('requests'))
          .filter((r) => /^\/transactions\/[^/]+\/status$/.test(r.path))
          .map((r) => `${r.path.split('/')[2]} ${r.statusCode}`);

      it("pays and confirms both accounts' invoices with their own keys, whichever replica gets the callback", async () => {
        const main = id('acct-main');
        const north = id('acct-north');
        await system.createInvoice(a, main, 10);
        const created = await sendJson<{ checkoutId: string }>(
          b.url,
          { clientReference: north, amount: 20 },
          { path: '/replica/accounts/north/invoices' },
        );
        expect(created.status).toBe(201);
        const invoices =
          await system.sandbox.get<Array<{ clientReference: string; account: string; callbackUrl: string }>>(
            'invoices',
          );
        expect(invoices.find((i) => i.clientReference === north)).toMatchObject({
          account: 'north',
          callbackUrl: `${b.url}/hubtel/checkout/callback/north`,
        });
        expect(invoices.find((i) => i.clientReference === main)!.account).toBe('default');

        // Each callback to the replica that did not create the invoice, on its account's path.
        const mainBody = await system.paidCallback(main);
        const northBody = await system.paidCallback(north);
        expect((await sendCheckoutCallback(b.url, mainBody)).status).toBe(200);
        expect(
          (await sendCheckoutCallback(a.url, northBody, { path: 'hubtel/checkout/callback/north' })).status,
        ).toBe(200);
        await eventually('both paid', async () =>
          paidLines(main).length && paidLines(north).length ? true : undefined,
        );
        await system.settled('checkout', north);
        await system.settled('checkout', main);
        expect(paidLines(main)).toEqual(['default']);
        expect(paidLines(north)).toEqual(['north']);
        expect((await statusChecks()).sort()).toEqual(
          [`${info().posSalesId} 200`, `${northPos()} 200`].sort(),
        );
        const record = await system.store.get<{ account: string; status: string }>(
          `hubtel:checkout:invoice:${north}`,
        );
        expect(record?.value).toMatchObject({ account: 'north', status: 'paid' });
        // Each receipt went out from its invoice's own SMS account (the sandbox knows whose keys).
        const receipts = await system.sandbox.get<Array<{ content: string; account: string }>>('messages');
        const receiptOf = (ref: string) => receipts.filter((m) => m.content === `Receipt ${ref}`);
        expect(receiptOf(main).map((m) => m.account)).toEqual(['default']);
        expect(receiptOf(north).map((m) => m.account)).toEqual(['north']);
      }, 120_000);

      it("a north invoice's callback on the default path is refused on either replica: nothing emitted", async () => {
        const north = id('acct-wrong');
        await sendJson(
          a.url,
          { clientReference: north, amount: 5 },
          { path: '/replica/accounts/north/invoices' },
        );
        const body = await system.paidCallback(north);
        for (const app of [a, b]) {
          const answer = await sendCheckoutCallback(app.url, body);
          expect([answer.status, answer.body]).toEqual([200, { received: true }]);
        }
        await system.settled('checkout', north);
        expect(paidLines(north)).toEqual([]);
        const record = await system.store.get<{ account: string; status: string }>(
          `hubtel:checkout:invoice:${north}`,
        );
        expect(record?.value).toMatchObject({ account: 'north', status: 'pending' });
      }, 60_000);

      // Last: it kills a replica.
      const step = async (app: AppProcess, path: string, body: unknown) => {
        const answer = await sendJson<Record<string, unknown>>(app.url, body, { path });
        return answer;
      };

      it("verifies north's order with north's keys and calls back with north's credentials, whichever replica runs it (a kill -9 included)", async () => {
        const sessionId = id('north-session');
        const orderId = id('hang-north');
        // The session moves between the replicas at every answer, on north's path.
        const flow = '/api/service-flow/north';
        expect((await step(a, flow, buildServiceFlowRequest({ sessionId }))).status).toBe(200);
        const bundles = await step(b, flow, buildServiceFlowRequest({ sessionId, message: '0244000111' }));
        expect(bundles.body).toMatchObject({ Message: expect.stringContaining('Bundle for 233244000111') });
        expect(
          (await step(a, flow, buildServiceFlowRequest({ sessionId, message: '1gb' }))).body,
        ).toMatchObject({
          Item: { Price: 5 },
        });
        await sandbox.post(`sessions/${sessionId}/pay`, { amount: 5, orderId, account: 'north' });

        // The cart is north's: on the default path it is refused, nothing recorded.
        const crossed = await step(b, '/api/fulfillment', buildFulfillmentRequest({ sessionId, orderId }));
        expect([crossed.status, (crossed.body as { code?: string }).code]).toEqual([
          409,
          'HUBTEL_WRONG_ACCOUNT',
        ]);

        // `hang-…`: the first run of the fulfillment handler never returns; its replica is killed.
        const from = [a.output.mark, b.output.mark];
        const accepted = await step(
          a,
          '/api/fulfillment/north',
          buildFulfillmentRequest({ sessionId, orderId }),
        );
        expect(accepted.body).toMatchObject({ OrderId: orderId, Status: 'received' });
        const hung = await system.whichOf([a, b], 'HANGING', 'deliver', orderId, { from });
        const taker = hung === a ? b : a;
        const takerFrom = taker.output.mark;
        await hung.kill();
        await system.waitFor(taker, 'DONE', 'deliver', orderId, {
          from: takerFrom,
          timeoutMs: TAKEOVER_BOUND_MS + 10_000,
        });
        const callback = await eventually('north callback', () =>
          receiver.received.find((c) => c.body.OrderId === orderId),
        );
        await system.settled('service-app', orderId);

        // Sent once, with north's callback credentials, the taker's outcome.
        expect(receiver.received.filter((c) => c.body.OrderId === orderId)).toHaveLength(1);
        expect(callback.authorization).toBe(
          `Basic ${Buffer.from(`${northCallback.clientId}:${northCallback.clientSecret}`).toString('base64')}`,
        );
        expect(callback.body).toMatchObject({
          SessionId: sessionId,
          ServiceStatus: 'success',
          MetaData: { deliveredBy: taker.name },
        });
        // None went to the default account's receiver.
        expect(system.receiver.of(orderId)).toEqual([]);
        // The payment was confirmed by the sandbox's status check on north's POS Sales ID (north's keys only there).
        const checks = (await sandbox.get<Array<{ path: string; statusCode: number }>>('requests')).filter(
          (r) => /^\/transactions\/[^/]+\/status/.test(r.path),
        );
        expect(checks.map((r) => [r.path.split('?')[0], r.statusCode])).toEqual([
          [`/transactions/${north.posSalesId}/status`, 200],
        ]);
        // The account-filtered handler ran for north's order, once (on whichever replica ran it).
        const accountLine = new RegExp(`^ACCOUNT north ${orderId} by `, 'gm');
        expect([a, b].reduce((n, app) => n + [...app.output.all.matchAll(accountLine)].length, 0)).toBe(1);
      }, 180_000);
    },
  );
