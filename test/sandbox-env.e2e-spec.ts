/**
 * The first hour with a sandbox of its own process: `hubtel-sandbox --env` (the bin's source, run
 * with node) prints the `.env` lines that point an app at it; those lines, parsed as a dotenv file
 * (Node's own parser), go through the modules' env pickers into a real Nest app, which sends an
 * SMS and creates an invoice there. The invoice is then paid the way README.md's sandbox section
 * shows, by running its `curl` command itself, and the app's @OnCheckoutPaid handler runs.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv, promisify } from 'node:util';
import { Injectable, type INestApplication } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import {
  CheckoutModule,
  CheckoutService,
  OnCheckoutPaid,
  checkoutOptionsFromEnv,
  type CheckoutPaidEvent,
} from 'nestjs-hubtel/checkout';
import { ServiceAppModule, serviceAppOptionsFromEnv } from 'nestjs-hubtel/service-app';
import { SmsModule, SmsService, smsOptionsFromEnv } from 'nestjs-hubtel/sms';
import { tsNodeArgs } from '../bench/loader/entry.mjs';
import { freePort } from './support/redis-server.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

@Injectable()
class PaidInvoices {
  readonly paid: CheckoutPaidEvent[] = [];

  @OnCheckoutPaid()
  onPaid(event: CheckoutPaidEvent) {
    this.paid.push(event);
  }
}

/** The README's sandbox section: the `sh` block that pays an invoice with curl. */
function readmePayScript(): string {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const script = blocks.find((b) => b.includes('/_sandbox/invoices/') && b.includes('curl'));
  if (!script) throw new Error('README.md shows no curl command that pays an invoice');
  return script;
}

describe('hubtel-sandbox --env: the .env lines drive a real app; README pays an invoice from a script', () => {
  let sandbox: ChildProcess;
  let stdout = '';
  let stderr = '';
  let env: Record<string, string>;
  let app: INestApplication;

  beforeAll(async () => {
    sandbox = spawn(
      process.execPath,
      [
        ...tsNodeArgs('libs/sandbox/src/cli/hubtel-sandbox.ts'),
        '--env',
        '--port',
        '0',
        '--api-client-id',
        'env-api-id',
        '--api-client-secret',
        'env-api-secret',
        '--pos-sales-id',
        '11684',
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    sandbox.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    sandbox.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // The human banner goes to stderr after the .env lines: once it is there, stdout is complete.
    await new Promise<void>((resolve, reject) => {
      // The CLI loads Nest and every library first: seconds, many more on a loaded machine.
      const timer = setTimeout(() => reject(new Error(`no banner:\n${stdout}\n${stderr}`)), 50_000);
      const check = () => {
        if (!stderr.includes('Stop: Ctrl+C')) return;
        clearTimeout(timer);
        resolve();
      };
      sandbox.stderr!.on('data', check);
      sandbox.once('exit', (code) => reject(new Error(`exited with ${code}:\n${stdout}\n${stderr}`)));
    });
    env = parseEnv(stdout) as Record<string, string>;

    const port = await freePort();
    const appUrl = `http://127.0.0.1:${port}`;
    const moduleRef = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        SmsModule.forRoot(smsOptionsFromEnv(env, { senderId: 'Shop' })),
        CheckoutModule.forRoot(
          checkoutOptionsFromEnv(env, {
            publicBaseUrl: appUrl,
            returnUrl: `${appUrl}/return`,
            cancellationUrl: `${appUrl}/cancel`,
          }),
        ),
        ServiceAppModule.forRoot(serviceAppOptionsFromEnv(env)),
      ],
      providers: [PaidInvoices],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(port, '127.0.0.1');
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    if (sandbox && sandbox.exitCode === null) {
      const exited = new Promise((resolve) => sandbox.once('exit', resolve));
      sandbox.kill('SIGTERM');
      await exited;
    }
  });

  it('prints only HUBTEL_* lines (and a comment) on stdout, every variable the env pickers read', () => {
    const lines = stdout.trim().split('\n');
    expect(lines.filter((l) => !l.startsWith('#')).every((l) => /^HUBTEL_[A-Z_]+=\S+$/.test(l))).toBe(true);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)![1]!;
    expect(env).toEqual({
      HUBTEL_CLIENT_ID: 'env-api-id',
      HUBTEL_CLIENT_SECRET: 'env-api-secret',
      HUBTEL_POS_SALES_ID: '11684',
      HUBTEL_MERCHANT_ACCOUNT_NUMBER: '11684',
      HUBTEL_CHECKOUT_URL: url,
      HUBTEL_STATUS_URL: url,
      HUBTEL_SMS_CLIENT_ID: 'sandbox-sms',
      HUBTEL_SMS_CLIENT_SECRET: 'sandbox-sms-secret',
      HUBTEL_SMS_URL: url,
      HUBTEL_CALLBACK_URL: url,
    });
    // The service app confirms payments with the same sandbox.
    expect(serviceAppOptionsFromEnv(env).statusCheck).toEqual({
      clientId: 'env-api-id',
      clientSecret: 'env-api-secret',
      posSalesId: '11684',
      url,
    });
  });

  it('the app configured from those lines sends an SMS there', async () => {
    const sent = await app.get(SmsService).send({ to: '0241234567', content: 'Hello from .env' });
    expect(sent.messageId).toBeTruthy();
    const messages = (await (
      await fetch(`${env.HUBTEL_SMS_URL}/_sandbox/messages?to=0241234567`)
    ).json()) as Array<{ content: string }>;
    expect(messages.map((m) => m.content)).toContain('Hello from .env');
  });

  it("creates an invoice there, and README's curl command pays it: the paid handler runs", async () => {
    const checkout = app.get(CheckoutService);
    const invoice = await checkout.createInvoice({ totalAmount: 25, description: 'Data bundle' });
    // As the README says: the script next to the .env the sandbox printed, the reference as $1.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hubtel-first-hour-'));
    try {
      fs.writeFileSync(path.join(dir, '.env'), stdout);
      fs.writeFileSync(path.join(dir, 'pay-invoice.sh'), readmePayScript());
      const { stdout: answer } = await run('bash', ['pay-invoice.sh', invoice.clientReference], { cwd: dir });
      expect(JSON.parse(answer)).toMatchObject({ outcome: 'paid' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    await checkout.drain();
    expect(app.get(PaidInvoices).paid.map((e) => e.clientReference)).toEqual([invoice.clientReference]);
  });
});
