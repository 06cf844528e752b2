import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createTestSandbox, runSimulateCli, type TestSandbox } from 'nestjs-hubtel/testing';
import { tsNodeArgs } from '../bench/loader/entry.mjs';
import { defaultFulfillmentUrl } from '../libs/testing/src/cli/simulate.terminal.js';
import { SIMULATE_CLI_USAGE } from '../libs/testing/src/cli/cli.usage.js';
import { parseSimulateCliArgs } from '../libs/testing/src/cli/simulate.cli.js';
import { startBundleMerchant, stripAnsi, type BundleMerchant } from './support/dev-tools.fixtures.js';
import { startExampleInProcess, type InProcessExample } from './support/example-app.harness.js';
import { standInMenu, startUssdStandIn, type UssdStandIn } from './support/ussd-service.fixtures.js';
import { systemBinary } from './support/system.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** In-memory streams standing in for a terminal fed from a pipe; answers are queued up front. */
function pipeTerminal(answers: string[] = []) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const out = {
    io: { stdin, stdout, stderr: stdout, env: {} as Record<string, string> },
    get text() {
      return stripAnsi(text);
    },
    type(line: string) {
      stdin.write(`${line}\n`);
    },
    end() {
      stdin.end();
    },
    /** Resolves once the output contains `needle`. */
    async waitFor(needle: string | RegExp, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!(typeof needle === 'string' ? out.text.includes(needle) : needle.test(out.text))) {
        if (Date.now() > deadline) throw new Error(`output never showed ${String(needle)}:\n${out.text}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
  for (const a of answers) out.type(a);
  return out;
}

/** A service application answering with whatever the test scripts; records every request body. */
async function scriptedService(answer: (body: Record<string, unknown>, res: http.ServerResponse) => void) {
  const bodies: Record<string, unknown>[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      bodies.push(body);
      answer(body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    bodies,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(r)),
  };
}

function prompt(sessionId: unknown, message: string) {
  return {
    SessionId: sessionId,
    Type: 'Response',
    Message: message,
    Mask: null,
    MaskNextRoute: null,
    Item: null,
    ServiceCode: null,
    Label: 'Name',
    DataType: 'input',
    FieldType: 'text',
    FieldName: 'name',
    ClientState: null,
    Data: null,
  };
}

/** The app channel (the Hubtel app lists Data); without it the default operator, mtn, plays USSD. */
const APP = ['--operator', 'Hubtel-Android'];

describe('hubtel-simulate: the data-bundle flow in a terminal', () => {
  let sandbox: TestSandbox;
  let merchant: BundleMerchant;

  beforeAll(async () => {
    sandbox = await createTestSandbox();
    merchant = await startBundleMerchant(sandbox);
  });
  afterAll(async () => {
    await merchant?.close();
    await sandbox?.stop();
  });

  it('shows each screen, sends option Values, pays, and reports the fulfillment callback read from a sandbox', async () => {
    const term = pipeTerminal(['0241234567', '2', 'y']);
    const code = await runSimulateCli(
      [
        `${merchant.url}/api/service-flow`,
        '--sandbox',
        sandbox.url,
        '--mobile',
        '0201112222',
        '--callback-timeout',
        '20',
        '--operator',
        'Hubtel-Android', // the app channel: options listed from Data, Values sent
      ],
      term.io,
    );
    const text = term.text;
    expect(code).toBe(0);
    expect(text).toContain('dialing sandbox-service as 233201112222 (Hubtel-Android)');
    expect(text).toContain('Channel                   app');
    expect(text).toContain(`Service Fulfillment URL   ${merchant.url}/api/fulfillment`);
    expect(text).toMatch(
      /── Mobile number ──\nEnter the mobile number to buy data for\nYour answer \(phone\) > 0241234567/,
    );
    expect(text).toMatch(
      /── Bundles ──\nChoose a bundle for 233241234567\n {2}1\. 1GB for GHS 5\.00\n {2}2\. 5GB for GHS 20\.00\nChoose 1-2 > 2/,
    );
    expect(text).toContain('Cart: 5GB for GHS 20.00 × 1 @ GHS 20.00 = GHS 20.00');
    expect(text).toContain('Service data: destination=233241234567  amount=20.00  bundle=5gb');
    expect(text).toMatch(
      /Fulfillment request POST http:\/\/127\.0\.0\.1:\d+\/api\/fulfillment: HTTP 200 \{"OrderId":"[0-9a-f]+","SessionId":"[0-9a-f]+","Status":"received"\}/,
    );
    expect(text).toContain('Fulfillment callback received: ServiceStatus success');

    // What reached the app: the contract's requests, the chosen option's Value, then the paid order.
    expect(merchant.ledger.fulfilled).toHaveLength(1);
    const order = merchant.ledger.fulfilled[0]!;
    expect(order.serviceData).toEqual({ destination: '233241234567', amount: '20.00', bundle: '5gb' });
    const callback = sandbox.fulfillmentCallbacks().find((c) => c.orderId === order.orderId);
    expect(callback).toMatchObject({ serviceStatus: 'success', sessionId: order.sessionId });
  });

  it('receives the callback itself when the app posts to the simulator (via the tunnel), and accepts a typed Value', async () => {
    // Without --sandbox the simulator plays the whole platform itself, status check included, where
    // the app cannot ask: this app trusts fulfillment requests unverified (no statusCheck).
    const local = await startBundleMerchant(sandbox, {
      serviceApp: { callbackUrl: sandbox.tunnelUrl, statusCheck: undefined },
    });
    try {
      const term = pipeTerminal();
      const run = runSimulateCli([local.url, '--callback-timeout', '20', '--operator', 'vodafone'], term.io);
      await term.waitFor(/Fulfillment callbacks {5}(http:\/\/127\.0\.0\.1:\d+)\/callback/);
      const receiver = /Fulfillment callbacks {5}(http:\/\/127\.0\.0\.1:\d+)\/callback/.exec(term.text)![1]!;
      sandbox.attach(receiver); // the app's callbacks go through the tunnel to the simulator's receiver
      for (const a of ['0541234567', '1gb', '']) term.type(a); // Enter on the cart pays
      expect(await run).toBe(0);
      expect(term.text).toContain('(vodafone)');
      expect(term.text).toContain('Cart: 1GB for GHS 5.00');
      expect(term.text).toContain('Fulfillment callback received: ServiceStatus success');
      expect(local.ledger.fulfilled.at(-1)!.serviceData).toMatchObject({
        destination: '233541234567',
        bundle: '1gb',
      });
    } finally {
      sandbox.attach(merchant.app);
      await local.close();
    }
  });

  it('lets the service re-ask and go back, and releases the session when the payment is declined', async () => {
    const before = merchant.ledger.fulfilled.length;
    const term = pipeTerminal(['not a phone', '0241234567', '0', '0201234567', '9', '1', 'maybe', 'n']);
    const code = await runSimulateCli([merchant.url, '--sandbox', sandbox.url, ...APP], term.io);
    expect(code).toBe(0);
    const text = term.text;
    expect(text).toContain('Please enter a valid phone number.');
    expect(text).toContain('Choose a bundle for 233201234567');
    expect(text).toContain('Please answer y, n or f.');
    expect(text).toContain('Payment declined; the session was released.');
    // "9" is not an option number: it is sent as typed, and the service re-asks.
    expect(text).toMatch(
      /Choose 1-2 > 9\n\n── Bundles ──\nPlease choose one of the options\.[\s\S]*Choose 1-2 > 1\n/,
    );
    // "0" went back to the phone prompt.
    expect(text).toMatch(/Choose 1-2 > 0\n\n── Mobile number ──/);
    expect(merchant.ledger.fulfilled).toHaveLength(before);
  });

  it('simulates a failed payment: no fulfillment request', async () => {
    const before = merchant.ledger.fulfilled.length;
    const term = pipeTerminal(['0241234567', '1', 'f']);
    expect(await runSimulateCli([merchant.url, '--sandbox', sandbox.url, ...APP], term.io)).toBe(0);
    expect(term.text).toContain('The payment of GHS 5.00 failed (simulated)');
    expect(merchant.ledger.fulfilled).toHaveLength(before);
  });

  it('reports a failed fulfillment (ServiceStatus failed) with exit code 1', async () => {
    merchant.ledger.failNextFulfillment = true;
    const term = pipeTerminal(['0241234567', '1', 'y']);
    expect(await runSimulateCli([merchant.url, '--sandbox', sandbox.url, ...APP], term.io)).toBe(1);
    expect(term.text).toContain('Fulfillment callback received: ServiceStatus failed');
  });

  it('ends when the service releases the session', async () => {
    const term = pipeTerminal();
    expect(await runSimulateCli([`${merchant.url}/api/service-flow`, '--service-code', 'bye'], term.io)).toBe(
      0,
    );
    expect(term.text).toContain('Goodbye from the service.\nSession ended by the service.');
  });

  it('says when no fulfillment callback arrives in time', async () => {
    const term = pipeTerminal(['0241234567', '1', 'y']);
    // The app posts its callbacks to the test sandbox; the simulator listens on its own receiver.
    expect(await runSimulateCli([merchant.url, '--callback-timeout', '1', ...APP], term.io)).toBe(1);
    expect(term.text).toContain('No fulfillment callback within 1 s.');
    expect(term.text).toMatch(/Point the app's ServiceAppModule callbackUrl at http:\/\/127\.0\.0\.1:\d+/);
  });
});

describe('hubtel-simulate --channel ussd: a USSD phone', () => {
  let sandbox: TestSandbox;
  let service: UssdStandIn;

  beforeAll(async () => {
    sandbox = await createTestSandbox();
    service = await startUssdStandIn(); // answers the USSD way: menus in Message, Release cart
    service.callbackUrl = `${sandbox.url}/callback`;
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.stop();
  });

  it('shows Message only, sends the number typed, pages, and follows a Release cart to payment and fulfillment', async () => {
    const term = pipeTerminal(['0241234567', '9', '2', 'y']);
    const code = await runSimulateCli(
      [service.url, '--sandbox', sandbox.url, '--callback-timeout', '20', '--operator', 'MTN-GH'],
      term.io,
    );
    const text = term.text;
    expect(code).toBe(0);
    // The channel follows the telco operator (no --channel given).
    expect(text).toContain('Channel                   USSD');
    expect(text).toContain(
      `── USSD 36/182 ──\nEnter the number that gets the data:\nYour answer (phone) > 0241234567`,
    );
    // The menu screens are Message as is: the stand-in's lines, never the Data list the app shows.
    const page1 = standInMenu('0241234567', 0);
    const page2 = standInMenu('0241234567', 1);
    expect(text).toContain(`── USSD ${page1.length}/182 ──\n${page1}\nYour answer (text) > 9`);
    expect(text).toContain(`── USSD ${page2.length}/182 ──\n${page2}\nYour answer (text) > 2`);
    expect(text).not.toMatch(/Choose 1-\d/);
    expect(text).not.toContain('⚠');
    // What reached the service: the numbers typed, as typed.
    const session = service.flowRequests.at(-1)!.SessionId;
    const typed = service.flowRequests.filter((r) => r.SessionId === session).map((r) => [r.Type, r.Message]);
    expect(typed).toEqual([
      ['initiation', ''],
      ['Response', '0241234567'],
      ['Response', '9'],
      ['Response', '2'],
    ]);
    // The Release carrying the Item is the cart: paid, the fulfillment request sent, the callback read.
    expect(text).toContain('You are buying 6GB - GHS 30.00 for 0241234567. Approve the payment prompt.');
    expect(text).toContain('Session ended on the phone; the payment prompt follows.');
    expect(text).toContain('Cart: 6GB data bundle × 1 @ GHS 30.00 = GHS 30.00');
    expect(text).toMatch(/Fulfillment request POST http:\/\/127\.0\.0\.1:\d+\/api\/fulfillment: HTTP 200/);
    expect(text).toContain('Fulfillment callback received: ServiceStatus success');
    expect(service.fulfillments.at(-1)).toMatchObject({ SessionId: session });
    // The test sandbox recorded the payment (--sandbox) the fulfillment request claims.
    expect(sandbox.session(String(session))).toMatchObject({
      state: expect.stringMatching(/paid|fulfilled/),
    });
  });

  it('warns when a USSD user would see no choices (options only in Data) or gets an AddToCart', async () => {
    const appStyle = await scriptedService((body, res) => {
      const first = String(body.Type).toLowerCase() === 'initiation';
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify(
          first
            ? {
                ...prompt(body.SessionId, 'Choose a bundle:'),
                DataType: 'select',
                FieldName: '',
                Data: [{ Display: '1GB', Value: 'DATA_1GB', Amount: 5 }],
              }
            : {
                ...prompt(body.SessionId, 'Pay for 1GB'),
                Type: 'AddToCart',
                DataType: 'display',
                FieldName: null,
                Label: null,
                Data: [],
                Item: { ItemName: '1GB', Qty: 1, Price: 5 },
              },
        ),
      );
    });
    try {
      const term = pipeTerminal(['DATA_1GB', 'n']);
      expect(await runSimulateCli([appStyle.url], term.io)).toBe(0);
      expect(term.text).toContain(
        'Choose a bundle:\n⚠ ussd: select prompt without a numbered menu in Message',
      );
      expect(term.text).not.toContain('1. 1GB'); // the phone shows no list built from Data
      expect(term.text).toContain('⚠ ussd: AddToCart on USSD: the platform expects Release with the Item');
      expect(term.text).toContain('Cart: 1GB × 1 @ GHS 5.00'); // still followed
    } finally {
      await appStyle.close();
    }
  });

  it('declining a Release cart sends nothing more: the service already ended the USSD session', async () => {
    const term = pipeTerminal(['0241234567', '1', 'n']);
    expect(await runSimulateCli([service.url], term.io)).toBe(0);
    expect(term.text).toContain('Payment declined; nothing is sent (the USSD session already ended).');
    const session = service.flowRequests.at(-1)!.SessionId;
    expect(service.flowRequests.filter((r) => r.SessionId === session).map((r) => r.Type)).toEqual([
      'initiation',
      'Response',
      'Response',
    ]);
  });

  it('flags a screen over the size (182 GSM-7, 70 with a non-GSM character, or --screen-size), and stops on it with --strict', async () => {
    const long = pipeTerminal();
    const run = runSimulateCli([service.url, '--service-code', 'long'], long.io);
    await long.waitFor('Your answer (text) > ');
    long.end();
    expect(await run).toBe(130);
    expect(long.text).toContain('── USSD 202/182 TOO LONG ──');
    expect(long.text).toContain('⚠ contract: screen too long: 202 characters, a USSD screen holds 182');

    const unicode = pipeTerminal();
    expect(await runSimulateCli([service.url, '--service-code', 'unicode', '--strict'], unicode.io)).toBe(1);
    expect(unicode.text).toContain('── USSD 79/70 TOO LONG ──\nƐte sɛn?');
    expect(unicode.text).toContain('once any character is outside the GSM 7-bit alphabet');
    expect(unicode.text).toContain('The answer breaks the contract (--strict)');

    const small = pipeTerminal();
    const smallRun = runSimulateCli([service.url, '--screen-size', '30'], small.io);
    await small.waitFor('Your answer (phone) > ');
    small.end();
    await smallRun;
    expect(small.text).toContain('── USSD 36/30 TOO LONG ──');
  });

  it('plays the app channel for a non-telco operator or --channel app: the options of Data listed, Values sent', async () => {
    for (const args of [
      ['--operator', 'Hubtel-Android'],
      ['--channel', 'app'],
    ]) {
      const term = pipeTerminal(['0241234567', '3']);
      const run = runSimulateCli([service.url, ...args], term.io);
      await term.waitFor(/Choose 1-4 > 3\n/);
      term.end();
      await run;
      expect(term.text).toContain('Channel                   app');
      expect(term.text).toContain('  3. 3GB - GHS 15.00\n  4. 4GB - GHS 20.00\nChoose 1-4 > 3');
      expect(term.text).not.toContain('── USSD');
      expect(service.flowRequests.at(-1)!.Message).toBe('DATA_3GB');
    }
    const refused = pipeTerminal();
    expect(await runSimulateCli([service.url, '--channel', 'sms'], refused.io)).toBe(2);
    expect(refused.text).toContain('--channel must be ussd or app, got "sms"');
  });
});

describe('hubtel-simulate: a service that misbehaves', () => {
  it('reports a non-2xx answer with its body, exit code 1', async () => {
    const service = await scriptedService((_b, res) =>
      res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"message":"database down"}'),
    );
    try {
      const term = pipeTerminal();
      expect(await runSimulateCli([service.url], term.io)).toBe(1);
      expect(term.text).toMatch(
        /✗ The service application answered initiation with HTTP 500 — \{"message":"database down"\}/,
      );
    } finally {
      await service.close();
    }
  });

  it('reports an answer that is not JSON, exit code 1', async () => {
    const service = await scriptedService((_b, res) =>
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<h1>oops</h1>'),
    );
    try {
      const term = pipeTerminal();
      expect(await runSimulateCli([service.url], term.io)).toBe(1);
      expect(term.text).toContain('answer to initiation is not a JSON object — <h1>oops</h1>');
    } finally {
      await service.close();
    }
  });

  it('reports an unreachable service with exit code 3 (its usage text: "the service could not be reached")', async () => {
    const service = await scriptedService(() => undefined);
    await service.close();
    const term = pipeTerminal();
    expect(await runSimulateCli([service.url], term.io)).toBe(3);
    expect(term.text).toMatch(/✗ Could not reach the service application: ECONNREFUSED/);
    expect(SIMULATE_CLI_USAGE).toMatch(/3 the service could not be\s+reached/);
  });

  it('reports a --callback-port already in use with exit code 2 and the reason, starting no session', async () => {
    const taken = http.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as AddressInfo).port;
    let asked = 0;
    const service = await scriptedService(() => asked++);
    try {
      const term = pipeTerminal();
      expect(await runSimulateCli([service.url, '--callback-port', String(port)], term.io)).toBe(2);
      expect(term.text).toContain(`"port": ${port} is already in use on 127.0.0.1`);
      expect(asked).toBe(0);
    } finally {
      await service.close();
      await new Promise((r) => taken.close(r));
    }
  });

  it('warns about contract breaches, and stops on them with --strict', async () => {
    const service = await scriptedService((body, res) =>
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          SessionId: body.SessionId,
          Type: 'Response',
          Message: 'Your name?',
          DataType: 'input',
        }),
      ),
    );
    try {
      const lenient = pipeTerminal();
      const run = runSimulateCli([service.url], lenient.io);
      await lenient.waitFor('Your answer > ');
      lenient.end();
      expect(await run).toBe(130);
      expect(lenient.text).toContain('⚠ contract: Mask is missing (send null rather than omitting it)');
      const strict = pipeTerminal();
      expect(await runSimulateCli([service.url, '--strict'], strict.io)).toBe(1);
      expect(strict.text).toContain('The answer breaks the contract (--strict)');
    } finally {
      await service.close();
    }
  });

  it('sends Release when the user declines the cart', async () => {
    const service = await scriptedService((body, res) =>
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          ...prompt(body.SessionId, 'Pay for 1 ticket'),
          Type: 'AddToCart',
          DataType: 'display',
          FieldName: null,
          Label: null,
          Data: [],
          Item: { ItemName: 'Ticket', Qty: 2, Price: 7.5 },
        }),
      ),
    );
    try {
      const term = pipeTerminal(['n']);
      expect(await runSimulateCli([service.url], term.io)).toBe(0);
      expect(term.text).toContain('Cart: Ticket × 2 @ GHS 7.50 = GHS 15.00');
      expect(service.bodies.map((b) => b.Type)).toEqual(['initiation', 'Release']);
    } finally {
      await service.close();
    }
  });

  it('releases the session when the input ends (hang-up), exit code 130', async () => {
    const service = await scriptedService((body, res) =>
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify(prompt(body.SessionId, 'Your name?'))),
    );
    try {
      const term = pipeTerminal(['Ama']);
      const run = runSimulateCli([service.url, '--service-code', '*713#'], term.io);
      await term.waitFor('Your answer (text) > Ama');
      await term.waitFor(/Your answer \(text\) > Ama[\s\S]*Your answer \(text\) > /);
      term.end();
      expect(await run).toBe(130);
      expect(service.bodies.map((b) => [b.Type, b.Message])).toEqual([
        ['initiation', ''],
        ['Response', 'Ama'],
        ['Release', ''],
      ]);
      expect(service.bodies[0]).toMatchObject({
        Sequence: '1',
        ServiceCode: '*713#',
        Operator: 'mtn',
        ClientState: '',
        Mobile: '233241234567',
      });
      expect(service.bodies[1]).not.toHaveProperty('Sequence');
      expect(new Set(service.bodies.map((b) => b.SessionId)).size).toBe(1);
    } finally {
      await service.close();
    }
  });
});

describe('hubtel-simulate: arguments', () => {
  it('prints help, and refuses bad arguments with exit code 2 and the usage', async () => {
    const help = pipeTerminal();
    expect(await runSimulateCli(['--help'], help.io)).toBe(0);
    expect(help.text).toContain('Usage: hubtel-simulate <service-flow-url> [options]');
    for (const [argv, message] of [
      [[], 'the service-flow URL is required'],
      [['ftp://x'], 'must be an http(s) URL'],
      [['http://a.test/api/service-flow', '--mobile', 'abc'], '--mobile must be a phone number'],
      [
        ['http://a.test/api/service-flow', '--fulfillment-url', 'http://b.test/api/fulfillment'],
        'same origin',
      ],
      [['http://a.test', '--callback-timeout', '0'], '--callback-timeout must be a whole number'],
      [['http://a.test', '--bogus'], "Unknown option '--bogus'"],
    ] as [string[], string][]) {
      const term = pipeTerminal();
      expect(await runSimulateCli(argv, term.io)).toBe(2);
      expect(term.text).toContain(message);
      expect(term.text).toContain('Usage: hubtel-simulate');
    }
  });

  it('derives the fulfillment URL from the service-flow URL (path secrets kept)', () => {
    expect(defaultFulfillmentUrl(new URL('http://a.test/api/service-flow')).href).toBe(
      'http://a.test/api/fulfillment',
    );
    expect(defaultFulfillmentUrl(new URL('http://a.test/hubtel/service-flow/s3cret')).href).toBe(
      'http://a.test/hubtel/fulfillment/s3cret',
    );
    expect(defaultFulfillmentUrl(new URL('http://a.test/ussd')).href).toBe('http://a.test/api/fulfillment');
    const parsed = parseSimulateCliArgs(['http://a.test:3000']);
    expect(parsed).toMatchObject({
      help: false,
      options: {
        serviceFlowUrl: 'http://a.test:3000/api/service-flow',
        fulfillmentUrl: 'http://a.test:3000/api/fulfillment',
      },
    });
  });
});

// `script` (util-linux, in Debian's essential bsdutils package) gives the simulator a real
// pseudo-terminal: readline runs in terminal mode, echoes, and Ctrl+C arrives as a keystroke.
const script = systemBinary({
  what: 'terminal simulator pty test',
  aptPackage: 'bsdutils',
  binaries: ['/usr/bin/script', 'script'],
});

script.describe('hubtel-simulate in a pseudo-terminal', () => {
  let sandbox: TestSandbox;
  let shop: InProcessExample;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
    shop = await startExampleInProcess({ sandbox }); // the example app: its data-bundle service
  }, 60_000);
  afterAll(async () => {
    await shop?.close();
    await sandbox?.stop();
  });

  /** Runs the simulator under `script`; `typeAfter` maps a prompt seen on screen to the keys typed. */
  function runInPty(args: string[], keys: Array<[RegExp, string]>, onOutput?: (screen: string) => void) {
    const command = [
      process.execPath,
      ...tsNodeArgs(path.join(root, 'libs/testing/src/cli/hubtel-simulate.ts')),
      ...args,
    ]
      .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
      .join(' ');
    const child = spawn(script.path!, ['-qfec', command, '/dev/null'], {
      cwd: root,
      env: { ...process.env, TERM: 'xterm', NO_COLOR: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let raw = '';
    let step = 0;
    const typed: string[] = [];
    const react = () => {
      const screen = stripAnsi(raw);
      onOutput?.(screen);
      while (step < keys.length) {
        const [waitFor, key] = keys[step]!;
        // Count how often the prompt was seen: answer each occurrence once.
        const seen = screen.match(new RegExp(waitFor.source, 'g'))?.length ?? 0;
        const needed = keys.slice(0, step + 1).filter(([w]) => w.source === waitFor.source).length;
        if (seen < needed) break;
        child.stdin.write(key);
        typed.push(key);
        step++;
      }
    };
    child.stdout.on('data', (c: Buffer) => {
      raw += c.toString('utf8');
      react();
    });
    child.stderr.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    const done = new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the simulator did not finish; screen so far:\n${stripAnsi(raw)}`));
      }, 60_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        child.stdin.end();
        resolve({ code, screen: stripAnsi(raw) });
      });
    });
    return { done, typed };
  }

  it('buys a data bundle from the example app by answering its prompts', async () => {
    const { done } = runInPty(
      [
        `${shop.url}/api/service-flow`,
        '--sandbox',
        sandbox.url,
        '--mobile',
        '0241234567',
        '--callback-timeout',
        '30',
        ...APP,
      ],
      [
        [/Your answer \(phone\) > /, '0201234567\r'],
        [/Choose 1-12 > /, '5\r'],
        [/\[f\]ail the payment > /, 'y\r'],
      ],
    );
    const { code, screen } = await done;
    expect(code).toBe(0);
    // The terminal echoed what was typed after each prompt.
    expect(screen).toMatch(
      /Buy a data bundle\. Enter the phone number that gets the data:\r?\nYour answer \(phone\) > 0201234567/,
    );
    expect(screen).toMatch(
      / {2}4\. 2GB - GHS 9\.00\r?\n {2}5\. 3GB - GHS 12\.00\r?\n[\s\S]* {2}12\. 100GB - GHS 260\.00/,
    );
    expect(screen).toMatch(/Choose 1-12 > 5/);
    expect(screen).toContain('Cart: 3GB data bundle for 233201234567 × 1 @ GHS 12.00 = GHS 12.00');
    expect(screen).toMatch(
      /Fulfillment request POST http:\/\/127\.0\.0\.1:\d+\/api\/fulfillment: HTTP 200 .*"Status":"received"/,
    );
    expect(screen).toContain('Fulfillment callback received: ServiceStatus success');
    // The app's callback, as the sandbox received it: the 3GB bundle for the number typed.
    const callback = sandbox.fulfillmentCallbacks().at(-1)!;
    expect(callback.serviceStatus).toBe('success');
    expect(screen).toContain(`order ${callback.orderId}`);
  }, 90_000);

  it('releases the session on Ctrl+C', async () => {
    const service = await scriptedService((body, res) =>
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify(prompt(body.SessionId, 'Your name?'))),
    );
    try {
      const { done } = runInPty(
        [service.url],
        [
          [/Your answer \(text\) > /, 'Ama\r'],
          [/Your answer \(text\) > /, '\u0003'],
        ],
      );
      const { code, screen } = await done;
      expect(code).toBe(130);
      expect(screen).toContain('Interrupted.');
      expect(service.bodies.map((b) => [b.Type, b.Message])).toEqual([
        ['initiation', ''],
        ['Response', 'Ama'],
        ['Release', ''],
      ]);
    } finally {
      await service.close();
    }
  }, 90_000);
});
