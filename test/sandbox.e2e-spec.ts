import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { tsNodeArgs } from '../bench/loader/entry.mjs';
import { basicAuthHeader as basic } from '../libs/sandbox/src/sandbox.http.js';
import { FakeHttpServer } from './support/fake-http-server.js';

/*
 * The sandbox as users run it from a terminal: `hubtel-sandbox` in its own process, used only
 * through HTTP (what the CLI printed, the platform endpoints, the /_sandbox records).
 * The built bin (dist/esm/sandbox/cli/hubtel-sandbox.js) runs when it is at least as new as
 * the sources; otherwise the sources run as bench/loader/entry.mjs says (no build step).
 */

const root = path.resolve(process.cwd());
const builtBin = path.join(root, 'dist/esm/sandbox/cli/hubtel-sandbox.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function cliCommand(): { args: string[]; built: boolean } {
  if (
    existsSync(builtBin) &&
    statSync(builtBin).mtimeMs >= newestSource(path.join(root, 'libs/sandbox/src'))
  ) {
    return { args: [builtBin], built: true };
  }
  return { args: tsNodeArgs('libs/sandbox/src/cli/hubtel-sandbox.ts'), built: false };
}

interface RunningCli {
  child: ChildProcess;
  info: {
    url: string;
    baseUrls: Record<string, string>;
    credentials: Record<string, { clientId: string; clientSecret: string }>;
    posSalesId: string;
    dashboardUrl: string;
  };
  stdout: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startCli(extra: string[] = []): Promise<RunningCli> {
  const { args } = cliCommand();
  const child = spawn(process.execPath, [...args, '--port', '0', '--json', ...extra], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running: the test never got it to stop
      reject(new Error(`CLI printed nothing in 50 s; stderr: ${stderr}`));
    }, 50_000); // a start that loads Nest and every library: seconds, many more on a loaded machine
    lines.on('line', (line) => {
      stdout.push(line);
      if (stdout.length === 1) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    void exited.then(({ code }) =>
      reject(new Error(`CLI exited (${code}) before printing; stderr: ${stderr}`)),
    );
  });
  return { child, info: JSON.parse(first), stdout, exited };
}

describe('hubtel-sandbox as a separate process', () => {
  let cli: RunningCli | undefined;
  let merchant: FakeHttpServer;
  let merchantUrl: string;

  beforeAll(async () => {
    merchant = (await FakeHttpServer.start()).route('POST', '/callback', () => ({ status: 200 }));
    merchantUrl = merchant.url;
  });

  afterEach(async () => {
    if (cli && cli.child.exitCode === null && cli.child.signalCode === null) {
      cli.child.kill('SIGKILL');
      await cli.exited;
    }
    cli = undefined;
  });

  afterAll(async () => {
    await merchant?.close();
  });

  it('prints its URLs and credentials, serves the platform with them, and stops cleanly on SIGTERM', async () => {
    cli = await startCli();
    const { url, baseUrls, credentials, posSalesId } = cli.info;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(baseUrls).toEqual({ sms: url, checkout: url, status: url, fulfillmentCallback: url });
    // Its address opened in a browser lands on the dashboard it printed.
    expect(cli.info.dashboardUrl).toBe(`${url}/_dashboard`);
    const home = await fetch(url);
    expect([home.status, home.url]).toEqual([200, cli.info.dashboardUrl]);
    await home.arrayBuffer();

    const sms = await fetch(`${baseUrls.sms}/v1/messages/batch/simple/send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: basic(credentials.sms!) },
      body: JSON.stringify({ From: 'Shop', Recipients: ['233241234567'], Content: 'Paid' }),
    });
    expect(sms.status).toBe(200);
    expect(((await sms.json()) as any).status).toBe(0);

    const ref = `e2e-${Date.now()}`;
    const created = await fetch(`${baseUrls.checkout}/items/initiate`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'Cache-Control': 'no-cache',
        Authorization: basic(credentials.api!),
      },
      body: JSON.stringify({
        totalAmount: 30,
        description: 'Bundle',
        callbackUrl: `${merchantUrl}/callback`,
        returnUrl: `${merchantUrl}/return`,
        cancellationUrl: `${merchantUrl}/cancel`,
        clientReference: ref,
        merchantAccountNumber: posSalesId,
      }),
    });
    const { data } = (await created.json()) as any;
    expect((await fetch(data.checkoutUrl)).status).toBe(200);
    const paid = await fetch(`${data.checkoutUrl}/momo`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'phone=0241234567&channel=mtn-gh',
    });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`${merchantUrl}/return`);
    expect(merchant.requestsTo('POST', '/callback').map((r) => r.body)).toContainEqual(
      expect.objectContaining({
        ResponseCode: '0000',
        Data: expect.objectContaining({ ClientReference: ref, Amount: 30 }),
      }),
    );

    const status = await fetch(
      `${baseUrls.status}/transactions/${posSalesId}/status?clientReference=${ref}`,
      { headers: { Authorization: basic(credentials.api!) } },
    );
    expect(((await status.json()) as any).data.status).toBe('Paid');
    const records = await (await fetch(`${url}/_sandbox/messages`)).json();
    expect(records).toHaveLength(1);

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.stdout.join('\n')).toContain('SIGTERM: stopping the sandbox');
    await expect(fetch(`${url}/_sandbox`)).rejects.toThrow();
  }, 60_000);

  it('stops cleanly on SIGINT (Ctrl+C)', async () => {
    cli = await startCli();
    cli.child.kill('SIGINT');
    expect(await cli.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('exits with status 2 and the usage on a bad option', async () => {
    const { args } = cliCommand();
    const child = spawn(process.execPath, [...args, '--port', 'nope'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    expect(stderr).toContain('--port must be a whole number');
    expect(stderr).toContain('Usage: hubtel-sandbox');
  }, 60_000);
});
