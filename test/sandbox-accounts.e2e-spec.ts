/**
 * A sandbox serving two Hubtel accounts at once (issue 24), over real HTTP through real Nest apps:
 * one shop per account (SmsModule + CheckoutModule from `hubtel.forAccount(name)`), each paid and
 * confirmed with its own keys; one account's keys on the other's POS Sales ID refused as the
 * platform does (4101 for checkout and its status check, 4105 for a programmable service); SMS
 * from each account's own sender; a fulfillment of the north account's service verified and
 * called back with north's credentials; and `hubtel-sandbox --env --account north` printing the
 * north account's variables.
 */
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { Injectable, type INestApplication } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import {
  CheckoutModule,
  CheckoutService,
  OnCheckoutPaid,
  type CheckoutModuleOptions,
  type CheckoutPaidEvent,
} from 'nestjs-hubtel/checkout';
import { SmsModule, SmsService } from 'nestjs-hubtel/sms';
import type { ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import { createTestSandbox, type TestSandbox } from 'nestjs-hubtel/testing';
import { type InboundPipeline } from '#internal';
import { tsNodeArgs } from '../bench/loader/entry.mjs';
import { SERVICE_APP_PIPELINE } from '../libs/service-app/src/service-app.constants.js';
import { freePort } from './support/redis-server.js';
import { APP_OPERATOR, startMerchant, type Merchant } from './support/service-app.harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

@Injectable()
class PaidInvoices {
  readonly paid: CheckoutPaidEvent[] = [];

  @OnCheckoutPaid()
  onPaid(event: CheckoutPaidEvent) {
    this.paid.push(event);
  }
}

interface Shop {
  app: INestApplication;
  checkout: CheckoutService;
  sms: SmsService;
  paid: PaidInvoices;
}

/** Waits (polling) until `test()` holds. */
async function until(test: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('until: timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a sandbox serving two accounts: each with its own keys, POS Sales ID and senders', () => {
  let hubtel: TestSandbox;
  const shops: Shop[] = [];
  const merchants: Merchant[] = [];
  const northCallback = { clientId: 'north-callback', clientSecret: 'north-callback-secret' };

  /** A shop app for one account; `checkout` overrides play a misconfigured one. */
  async function startShop(account: string, checkout: Partial<CheckoutModuleOptions> = {}): Promise<Shop> {
    const port = await freePort();
    const appUrl = `http://127.0.0.1:${port}`;
    const options = hubtel.forAccount(account);
    const moduleRef = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        SmsModule.forRoot(options.smsOptions()),
        CheckoutModule.forRoot({ ...options.checkoutOptions({ appUrl }), ...checkout }),
      ],
      providers: [PaidInvoices],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(port, '127.0.0.1');
    const shop = {
      app,
      checkout: app.get(CheckoutService),
      sms: app.get(SmsService),
      paid: app.get(PaidInvoices),
    };
    shops.push(shop);
    return shop;
  }

  /** ServiceAppModule options of one account, with quick retries (nothing here waits for them). */
  const serviceOptions = (account: string, overrides: Partial<ServiceAppModuleOptions> = {}) => ({
    ...hubtel.forAccount(account).serviceAppOptions(overrides),
    callbackRetry: { baseDelayMs: 5, maxDelayMs: 20, deadlineMs: 6_000 },
    fulfillmentRetry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 },
    verification: { recheckForMs: 50, recheckDelay: { baseDelayMs: 5, maxDelayMs: 20 } },
  });

  /** Status checks the sandbox answered with this HTTP status. */
  const statusChecks = (statusCode: number) =>
    hubtel.requests().filter((r) => r.api === 'status' && r.statusCode === statusCode).length;

  beforeAll(async () => {
    hubtel = await createTestSandbox({
      sms: { senderIds: ['MainShop'] },
      accounts: [{ name: 'north', senderIds: ['NorthShop'], credentials: { callback: northCallback } }],
    });
  });
  afterEach(() => hubtel.reset());
  afterAll(async () => {
    for (const m of merchants) await m.close();
    for (const shop of shops) await shop.app.close();
    await hubtel.stop();
  });

  it("pays and confirms both accounts' invoices, each checked with its own keys on its own POS Sales ID", async () => {
    const main = await startShop('default');
    const north = await startShop('north');
    const a = await main.checkout.createInvoice({ totalAmount: 10, description: 'Main bundle' });
    const b = await north.checkout.createInvoice({ totalAmount: 20, description: 'North bundle' });
    expect(hubtel.invoice(a.clientReference)!.account).toBe('default');
    expect(hubtel.invoice(b.clientReference)!.account).toBe('north');

    await hubtel.pay(a.clientReference);
    await hubtel.pay(b.clientReference);
    await main.checkout.drain();
    await north.checkout.drain();
    expect(main.paid.paid.map((e) => e.clientReference)).toEqual([a.clientReference]);
    expect(north.paid.paid.map((e) => e.clientReference)).toEqual([b.clientReference]);
    // Both confirmations were status checks the sandbox answered (none refused).
    expect(statusChecks(200)).toBeGreaterThanOrEqual(2);
    expect(statusChecks(403)).toBe(0);
    expect(hubtel.invoices({ account: 'north' }).map((i) => i.clientReference)).toEqual([b.clientReference]);
    expect(hubtel.deliveries({ account: 'default' }).map((d) => d.clientReference)).toEqual([
      a.clientReference,
    ]);
  });

  it("refuses north's keys on the default account's POS Sales ID: 4101 at creation, and at the status check", async () => {
    const mainPos = hubtel.posSalesId;
    // Sent as the invoice's merchantAccountNumber: the creation itself is refused.
    const creating = await startShop('north', { merchantAccountNumber: mainPos });
    await expect(
      creating.checkout.createInvoice({ totalAmount: 5, description: 'Crossed' }),
    ).rejects.toMatchObject({
      httpStatus: 403,
      responseCode: '4101',
    });
    expect(hubtel.invoices()).toEqual([]);

    // Only the status check names the POS Sales ID: the invoice is north's, its confirmation refused.
    const confirming = await startShop('north', { posSalesId: mainPos });
    const invoice = await confirming.checkout.createInvoice({ totalAmount: 5, description: 'Crossed' });
    await hubtel.pay(invoice.clientReference);
    await until(() => statusChecks(403) > 0);
    expect(confirming.paid.paid).toEqual([]);
    expect(statusChecks(200)).toBe(0);
  });

  it("sends each account's SMS from its own sender id; another account's sender is refused", async () => {
    const main = await startShop('default');
    const north = await startShop('north');
    await main.sms.send({ to: '0241234567', content: 'Main receipt' });
    await north.sms.send({ to: '0241234567', content: 'North receipt' });
    expect(hubtel.messages({ account: 'default' }).map((m) => [m.from, m.content])).toEqual([
      ['MainShop', 'Main receipt'],
    ]);
    expect(hubtel.messages({ account: 'north' }).map((m) => [m.from, m.content])).toEqual([
      ['NorthShop', 'North receipt'],
    ]);
    await expect(
      north.sms.send({ to: '0241234567', content: 'Borrowed', from: 'MainShop' }),
    ).rejects.toMatchObject({
      httpStatus: 400,
    });
    expect(hubtel.messages()).toHaveLength(2);
    // The admin API lists by account too.
    const listed = (await (await fetch(`${hubtel.url}/_sandbox/messages?account=north`)).json()) as {
      from: string;
    }[];
    expect(listed.map((m) => m.from)).toEqual(['NorthShop']);
  });

  it("verifies a fulfillment of north's service with north's keys, and takes its callback with north's credentials", async () => {
    const merchant = await startMerchant('express', serviceOptions('north'));
    merchants.push(merchant);
    const session = hubtel.forAccount('north').serviceApp(merchant.url, { operator: APP_OPERATOR });
    await session.start();
    await session.reply('0241234567');
    await session.choose('1gb');
    await session.pay();
    const callback = await session.waitForCallback();
    expect(callback).toMatchObject({ account: 'north', matched: true, serviceStatus: 'success' });
    expect(hubtel.session(session.sessionId)).toMatchObject({ account: 'north', state: 'fulfilled' });
    expect(hubtel.fulfillmentCallbacks({ account: 'default' })).toEqual([]);
  });

  it("refuses the default account's keys on north's POS Sales ID for north's service (4105): nothing delivered", async () => {
    const main = hubtel.account('default').credentials.api;
    const merchant = await startMerchant(
      'express',
      serviceOptions('north', {
        statusCheck: {
          ...main,
          posSalesId: hubtel.account('north').posSalesId,
          url: hubtel.baseUrls().status,
        },
      }),
    );
    merchants.push(merchant);
    const session = hubtel.forAccount('north').serviceApp(merchant.url, { operator: APP_OPERATOR });
    await session.start();
    await session.reply('0241234567');
    await session.choose('1gb');
    const orderId = randomUUID();
    await session.pay({ orderId });
    await until(() => statusChecks(403) > 0);
    // Every attempt the app makes is refused: once its retries are spent, nothing was delivered.
    await merchant.app.get<InboundPipeline>(SERVICE_APP_PIPELINE).drain();
    expect(statusChecks(200)).toBe(0);
    expect(merchant.fulfiller.calls.get(orderId)).toBeUndefined();
    expect(merchant.fulfiller.seen.some((e) => e.orderId === orderId)).toBe(false);
    expect(hubtel.fulfillmentCallbacks()).toEqual([]);
    // The sandbox's answer, as the app received it.
    const answer = await fetch(
      `${hubtel.url}/transactions/${hubtel.account('north').posSalesId}/status?clientReference=${session.sessionId}`,
      {
        headers: {
          Authorization: `Basic ${Buffer.from(`${main.clientId}:${main.clientSecret}`).toString('base64')}`,
        },
      },
    );
    expect(answer.status).toBe(403);
    expect(await answer.json()).toMatchObject({ responseCode: '4105' });
  });
});

describe('hubtel-sandbox --accounts north,south --env --account north', () => {
  let sandbox: ChildProcess;
  let stdout = '';
  let stderr = '';

  beforeAll(async () => {
    sandbox = spawn(
      process.execPath,
      [
        ...tsNodeArgs('libs/sandbox/src/cli/hubtel-sandbox.ts'),
        '--port',
        '0',
        '--accounts',
        'north,south',
        '--env',
        '--account',
        'north',
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    sandbox.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    sandbox.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      // The CLI loads Nest and every library first: seconds, many more on a loaded machine.
      const timer = setTimeout(() => reject(new Error(`no banner:\n${stdout}\n${stderr}`)), 50_000);
      sandbox.stderr!.on('data', () => {
        if (!stderr.includes('Stop: Ctrl+C')) return;
        clearTimeout(timer);
        resolve();
      });
      sandbox.once('exit', (code) => reject(new Error(`exited with ${code}:\n${stdout}\n${stderr}`)));
    });
  }, 60_000);

  afterAll(async () => {
    if (sandbox && sandbox.exitCode === null) {
      const exited = new Promise((resolve) => sandbox.once('exit', resolve));
      sandbox.kill('SIGTERM');
      await exited;
    }
  });

  it("prints the north account's variables: HUBTEL_ACCOUNTS and the default's names with NORTH_ inserted", async () => {
    const env = parseEnv(stdout) as Record<string, string>;
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)![1]!;
    expect(env).toEqual({
      HUBTEL_ACCOUNTS: 'north',
      HUBTEL_NORTH_CLIENT_ID: 'sandbox-north-api',
      HUBTEL_NORTH_CLIENT_SECRET: 'sandbox-north-api-secret',
      HUBTEL_NORTH_POS_SALES_ID: '2000001',
      HUBTEL_NORTH_MERCHANT_ACCOUNT_NUMBER: '2000001',
      HUBTEL_NORTH_CHECKOUT_URL: url,
      HUBTEL_NORTH_STATUS_URL: url,
      HUBTEL_NORTH_SMS_CLIENT_ID: 'sandbox-north-sms',
      HUBTEL_NORTH_SMS_CLIENT_SECRET: 'sandbox-north-sms-secret',
      HUBTEL_NORTH_SMS_URL: url,
      HUBTEL_NORTH_CALLBACK_URL: url,
    });
    // The banner names every account; the lines work against the running sandbox, on north's POS Sales ID only.
    expect(stderr).toContain('south   POS Sales ID 2000002');
    const auth = `Basic ${Buffer.from(`${env.HUBTEL_NORTH_CLIENT_ID}:${env.HUBTEL_NORTH_CLIENT_SECRET}`).toString('base64')}`;
    const check = (pos: string) =>
      fetch(`${env.HUBTEL_NORTH_STATUS_URL}/transactions/${pos}/status?clientReference=none`, {
        headers: { Authorization: auth },
      });
    expect((await check(env.HUBTEL_NORTH_POS_SALES_ID!)).status).toBe(404);
    const crossed = await check('2000002');
    expect(crossed.status).toBe(403);
    expect(await crossed.json()).toMatchObject({ responseCode: '4101' });
  });
});
