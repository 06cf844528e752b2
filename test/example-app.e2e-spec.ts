/**
 * The README's run command, read from the README and run as written (`npm ci && npm start`), brings
 * the example app up in a fresh copy of the repository: no node_modules, no dist/, so the command
 * itself must install what it needs. No configuration but PORT=0. Then a purchase over plain HTTP
 * against the printed address, through the embedded sandbox's payment page, to the paid order and
 * its SMS receipt — and a clean stop on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readmeCommand } from './support/readme.js';
import { getOrder, placeOrder, pressPayPageButton, waitForOrder } from './support/example-app.buyer.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SKIP = new Set(['.git', 'node_modules', 'dist', 'coverage', '.tmp'].map((d) => path.join(repoRoot, d)));

/** Collects a child's output and lets a test wait for a line. */
class Output {
  text = '';
  private waiters: Array<{ re: RegExp; resolve: (m: RegExpExecArray) => void; timer: NodeJS.Timeout }> = [];

  add(chunk: Buffer): void {
    this.text += chunk.toString('utf8');
    this.waiters = this.waiters.filter((w) => {
      const m = w.re.exec(this.text);
      if (m) w.resolve(m);
      return !m;
    });
  }

  wait(re: RegExp, timeoutMs: number, what: string): Promise<RegExpExecArray> {
    const m = re.exec(this.text);
    if (m) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        reject(
          new Error(
            `Timed out after ${timeoutMs} ms waiting for ${what}. Output so far:\n${this.text.slice(-4000)}`,
          ),
        );
      }, timeoutMs);
      this.waiters.push({
        re,
        timer,
        resolve: (found) => {
          clearTimeout(timer);
          resolve(found);
        },
      });
    });
  }

  /** Drops every pending wait (their timers too). */
  dispose(): void {
    for (const w of this.waiters) clearTimeout(w.timer);
    this.waiters = [];
  }
}

describe('npm ci && npm start (the README run command) in a fresh copy', () => {
  let stage: string;
  let child: ChildProcess | undefined;
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  const out = new Output();

  beforeAll(async () => {
    stage = await fs.mkdtemp(path.join(os.tmpdir(), 'nestjs-hubtel-start-'));
    await fs.cp(repoRoot, stage, {
      recursive: true,
      filter: (src) => !SKIP.has(src) && !src.startsWith(path.join(repoRoot, 'bench', 'results')),
    });
    const command = readmeCommand(
      await fs.readFile(path.join(repoRoot, 'README.md'), 'utf8'),
      'Run the example app',
    );
    expect(command).toBe('npm ci && npm start');

    // Zero configuration: nothing from this machine's environment may switch the app to the real platform.
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', FORCE_COLOR: '0', NO_COLOR: '1' };
    for (const key of Object.keys(env))
      if (key.startsWith('HUBTEL_') || key === 'PUBLIC_URL' || key === 'HOST' || key.startsWith('npm_'))
        delete env[key];
    // npm ci's audit and funding reports (a registry round trip and a scan of the tree) are not
    // what this test checks; .ci/run skips them the same way. Nor is asking the registry whether
    // each cached package is still current (--prefer-offline): a package not cached is still fetched.
    Object.assign(env, {
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_prefer_offline: 'true',
    });
    // Its own process group, so the stop below reaches npm, its shell and node alike.
    child = spawn('sh', ['-c', command], {
      cwd: stage,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => out.add(c));
    child.stderr!.on('data', (c: Buffer) => out.add(c));
    exited = new Promise((resolve) => child!.once('close', (code, signal) => resolve({ code, signal })));
  }, 60_000);

  afterAll(async () => {
    out.dispose();
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    }
    // The copy holds a whole npm ci: removing it takes a while on a busy disk.
    if (stage) await fs.rm(stage, { recursive: true, force: true });
  }, 120_000);

  it('builds, starts against the embedded sandbox, sells, texts a receipt and stops on SIGTERM', async () => {
    // Installing, then building the package and the app, takes a while on two busy cores.
    const ended = exited.then(({ code, signal }) => {
      throw new Error(
        `npm start ended (code ${code}, signal ${signal}) before printing the shop URL:\n${out.text.slice(-4000)}`,
      );
    });
    ended.catch(() => undefined);
    const shop = (
      await Promise.race([out.wait(/Shop:\s+(http:\/\/\S+)/, 420_000, 'the shop URL'), ended])
    )[1]!;
    const sandboxUrl = (await out.wait(/Sandbox:\s+(http:\/\/\S+)/, 5_000, 'the sandbox URL'))[1]!;
    const dashboard = (await out.wait(/Sandbox dashboard:\s+(http:\/\/\S+)/, 5_000, 'the dashboard URL'))[1]!;
    expect(out.text).toContain('running against the embedded Hubtel sandbox');
    expect(out.text).toMatch(/Service flow URL:\s+http:\/\/\S+\/api\/service-flow/);
    expect(out.text).toMatch(/Sandbox credentials:\s+SMS sandbox-sms \/ sandbox-sms-secret/);

    const home = await fetch(shop);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/text\/html/);
    const html = await home.text();
    expect(html).toContain('data-testid="buy-kente-mug"');
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="https?:/); // nothing external

    const phone = '0244123456';
    const { orderId, checkoutUrl } = await placeOrder(shop, {
      product: 'kente-mug',
      phone,
      name: 'Ama Mensah',
    });
    expect(checkoutUrl.startsWith(`${sandboxUrl}/pay/`)).toBe(true);
    expect((await getOrder(shop, orderId)).status).toBe('awaiting-payment');

    const landed = await pressPayPageButton(checkoutUrl, 'pay-momo');
    expect(landed).toBe(new URL(`/orders/${orderId}`, shop).href);
    const page = await fetch(landed);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(orderId);

    const paid = await waitForOrder(shop, orderId, (o) => o.status === 'paid' && o.receipt.status === 'sent');
    expect(paid.payment?.amountPaid).toBe(25);
    expect(paid.payment?.confirmedByStatusCheck).toBe(true);

    // The sandbox recorded the receipt, to the number that paid, naming the order.
    const messages = (await (
      await fetch(`${sandboxUrl}/_sandbox/messages?to=233244123456`)
    ).json()) as Array<{ content: string; messageId: string }>;
    expect(messages).toHaveLength(1);
    expect(messages[0]!.content).toContain(orderId);
    expect(messages[0]!.messageId).toBe(paid.receipt.messageId);

    const board = await fetch(dashboard);
    expect(board.status).toBe(200);
    expect(board.headers.get('content-type')).toMatch(/text\/html/);
    await board.arrayBuffer();

    // A callback whose ClientReference holds a newline and ANSI escapes (erase line, red) cannot
    // write a line of its own into the app's real output: the checkout module's warning about it
    // shows the reference escaped.
    const forged = await fetch(`${shop.replace(/\/$/, '')}/hubtel/checkout/callback`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        ResponseCode: '0000',
        Status: 'Success',
        Data: {
          CheckoutId: 'c1',
          SalesInvoiceId: 'i1',
          ClientReference: 'r\n[Shop] Order 7 paid\x1b[2K\x1b[31m',
          Status: 'Success',
          Amount: 1,
          CustomerPhoneNumber: '233244123456',
          PaymentDetails: {
            MobileMoneyNumber: '233244123456',
            PaymentType: 'mobilemoney',
            Channel: 'mtn-gh',
          },
          Description: 'x',
        },
      }),
    });
    expect(forged.status).toBe(200);
    await out.wait(
      /Rejected a checkout callback for "r\\n\[Shop\] Order 7 paid\\x1b\[2K/,
      10_000,
      'the warning',
    );
    expect(out.text).not.toContain('\n[Shop] Order 7 paid');
    expect(out.text).not.toContain('\x1b[2K');
    expect(out.text).not.toMatch(/(?<![\dA-Za-z])233244123456(?![\dA-Za-z])/);

    process.kill(-child!.pid!, 'SIGTERM');
    await out.wait(/Stopped\./, 20_000, 'the app to stop');
    await exited;
    // The embedded sandbox stopped with the app.
    await expect(fetch(`${sandboxUrl}/_sandbox`)).rejects.toThrow();
  }, 600_000);
});
