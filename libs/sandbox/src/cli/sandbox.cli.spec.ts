import { CliUsageError } from './cli.args.js';
import { parseSandboxCliArgs, SANDBOX_CLI_USAGE } from './sandbox.args.js';
import { describeSandbox, main, startSandboxCli } from './sandbox.cli.js';
import type { HubtelSandbox } from '../sandbox.server.js';
import { call } from '../__tests__/sandbox.test-helpers.js';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } },
    out,
    err,
  };
}

describe('hubtel-sandbox CLI (in process)', () => {
  let running: HubtelSandbox | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  it('parses options, with the documented defaults', () => {
    expect(parseSandboxCliArgs([])).toEqual({
      help: false,
      json: false,
      env: false,
      verbose: false,
      options: { port: 4010, host: '127.0.0.1' },
    });
    expect(
      parseSandboxCliArgs([
        '--port',
        '0',
        '--host',
        '0.0.0.0',
        '--sms-client-id',
        'id1',
        '--sms-client-secret',
        's1',
        '--pos-sales-id',
        '777',
        '--record-limit',
        '50',
        '--merchant-name',
        'Shop',
        '--public-url',
        'http://x.test',
        '--allowed-host',
        'sandbox',
        '--allowed-host',
        'sandbox.lan',
        '--json',
        '-v',
      ]),
    ).toEqual({
      help: false,
      json: true,
      env: false,
      verbose: true,
      options: {
        port: 0,
        host: '0.0.0.0',
        publicUrl: 'http://x.test',
        allowedHosts: ['sandbox', 'sandbox.lan'],
        posSalesId: '777',
        credentials: { sms: { clientId: 'id1', clientSecret: 's1' } },
        recordLimit: 50,
        checkout: { merchantName: 'Shop' },
      },
    });
    expect(parseSandboxCliArgs(['-h'])).toEqual({ help: true });
  });

  it.each([
    [['--port', 'abc']],
    [['--port', '70000']],
    [['--sms-client-id', 'only-id']],
    [['--unknown']],
    [['positional']],
    [['--json', '--env']],
  ])('refuses %j with a usage error', (argv) => {
    expect(() => parseSandboxCliArgs(argv)).toThrow(CliUsageError);
  });

  it('starts the sandbox and prints the base URLs and credentials', async () => {
    const { io, out } = capture();
    running = await startSandboxCli(
      ['--port', '0', '--api-client-id', 'my-api', '--api-client-secret', 'my-secret'],
      io,
    );
    expect(running).toBeDefined();
    const text = out.join('');
    expect(text).toBe(describeSandbox(running!));
    expect(text).toContain(`Hubtel sandbox listening on ${running!.url}`);
    expect(text).toContain('clientId sandbox-sms   clientSecret sandbox-sms-secret');
    expect(text).toContain('clientId my-api   clientSecret my-secret');
    expect(text).toContain('(POST /callback)');
    expect(text).toContain(`Dashboard: ${running!.url}/_dashboard`);
    // The printed credentials are the ones it accepts.
    const res = await call(running!, 'GET', `/transactions/${running!.posSalesId}/status?clientReference=x`, {
      auth: { clientId: 'my-api', clientSecret: 'my-secret' },
    });
    expect(res.status).toBe(404);
  });

  it('--json prints one machine-readable line; --verbose prints requests', async () => {
    const { io, out } = capture();
    running = await startSandboxCli(['--port', '0', '--json', '--verbose'], io);
    const info = JSON.parse(out[0]!);
    expect(info).toEqual({
      url: running!.url,
      baseUrls: running!.baseUrls(),
      credentials: running!.credentials,
      posSalesId: '2000000',
      dashboardUrl: `${running!.url}/_dashboard`,
    });
    await call(running!, 'POST', '/v1/messages/send', {
      body: { From: 'Shop', To: '233241234567', Content: 'x' },
      auth: 'sms',
    });
    await running!.waitFor('message');
    // The request line is printed when the response closes.
    await new Promise<void>((resolve) =>
      out.some((l) => l.startsWith('POST /v1/messages/send 200'))
        ? resolve()
        : running!.once('request', () => resolve()),
    );
    expect(out.some((l) => l.startsWith('POST /v1/messages/send 200'))).toBe(true);
  });

  it('--help prints the usage and starts nothing', async () => {
    const { io, out } = capture();
    expect(await startSandboxCli(['--help'], io)).toBeUndefined();
    expect(out.join('')).toBe(SANDBOX_CLI_USAGE);
  });

  it('exits with the documented code and says why: 1 could not start (port in use), 2 usage error', async () => {
    running = await startSandboxCli(['--port', '0', '--json'], capture().io);
    const before = process.exitCode;
    try {
      const taken = capture();
      await main(['--port', String(running!.port)], taken.io);
      expect(process.exitCode).toBe(1);
      expect(taken.err.join('')).toMatch(
        new RegExp(`^hubtel-sandbox: .*${running!.port} is already in use on 127\\.0\\.0\\.1\\n$`),
      );
      const usage = capture();
      process.exitCode = undefined;
      await main(['--port', 'x'], usage.io);
      expect(process.exitCode).toBe(2);
      expect(usage.err.join('')).toContain('--port must be a whole number');
      // The usage text documents both codes.
      expect(SANDBOX_CLI_USAGE).toMatch(/1 it could not start\s+\(the port is in use/);
      expect(SANDBOX_CLI_USAGE).toMatch(/2 usage error/);
    } finally {
      // The test runner's own exit code must not inherit the command's.
      process.exitCode = before;
    }
  });

  it('reports a port already in use as a configuration error', async () => {
    const { io } = capture();
    running = await startSandboxCli(['--port', '0', '--json'], io);
    await expect(
      startSandboxCli(['--port', String(running!.port), '--json'], capture().io),
    ).rejects.toMatchObject({ code: 'HUBTEL_CONFIG_INVALID' });
  });
});

describe('hubtel-sandbox CLI: several accounts', () => {
  let running: HubtelSandbox | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  it('--accounts adds named accounts; --account picks whose --env lines', () => {
    expect(parseSandboxCliArgs(['--accounts', 'north,south', '--env', '--account', 'north'])).toEqual({
      help: false,
      json: false,
      env: true,
      verbose: false,
      envAccounts: ['north'],
      options: { port: 4010, host: '127.0.0.1', accounts: [{ name: 'north' }, { name: 'south' }] },
    });
    expect(SANDBOX_CLI_USAGE).toContain('--accounts <a,b,...>');
    expect(SANDBOX_CLI_USAGE).toContain('--account <name>');
  });

  it('--charge-bearer says who bears the charge: every account, or one (<account>=<who>)', () => {
    const parsed = parseSandboxCliArgs([
      '--accounts',
      'north,south',
      '--charge-bearer',
      'payer',
      '--charge-bearer',
      'north=merchant',
    ]);
    expect(parsed).toMatchObject({
      options: {
        checkout: { chargeBearer: 'payer' },
        accounts: [{ name: 'north', chargeBearer: 'merchant' }, { name: 'south' }],
      },
    });
    expect(SANDBOX_CLI_USAGE).toContain('--charge-bearer <who>');
  });

  it.each([
    [['--charge-bearer', 'nobody'], '--charge-bearer must be merchant or payer'],
    [['--charge-bearer', 'east=payer'], '--charge-bearer east=: not an account of this sandbox'],
    [['--account', 'north', '--accounts', 'north'], '--account chooses the lines --env prints'],
    [
      ['--env', '--account', 'south', '--accounts', 'north'],
      '--account south: not an account of this sandbox',
    ],
    [['--accounts', 'north,,south'], '--accounts must be names separated by commas'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => parseSandboxCliArgs(argv)).toThrow(message);
  });

  it('a bad account name is a start-up error naming the option', async () => {
    await expect(startSandboxCli(['--port', '0', '--accounts', 'North'], capture().io)).rejects.toMatchObject(
      {
        code: 'HUBTEL_CONFIG_INVALID',
        option: 'accounts[0].name',
      },
    );
  });

  it("--env --account north prints only north's lines on stdout; the banner lists every account", async () => {
    const { io, out, err } = capture();
    running = await startSandboxCli(
      ['--port', '0', '--accounts', 'north,south', '--env', '--account', 'north'],
      io,
    );
    const lines = out
      .join('')
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('#'));
    expect(lines[0]).toBe('HUBTEL_ACCOUNTS=north');
    expect(lines.slice(1).every((l) => l.startsWith('HUBTEL_NORTH_'))).toBe(true);
    expect(lines).toContain('HUBTEL_NORTH_POS_SALES_ID=2000001');
    expect(lines).toContain('HUBTEL_NORTH_CLIENT_ID=sandbox-north-api');
    expect(err.join('')).toContain('south   POS Sales ID 2000002');
    // The printed keys are the ones it accepts, on north's POS Sales ID.
    const res = await call(running!, 'GET', '/transactions/2000001/status?clientReference=x', {
      auth: { clientId: 'sandbox-north-api', clientSecret: 'sandbox-north-api-secret' },
    });
    expect(res.status).toBe(404);
  });

  it("--env without --account prints every account's lines, HUBTEL_ACCOUNTS unquoted", async () => {
    const { io, out } = capture();
    running = await startSandboxCli(['--port', '0', '--accounts', 'north,south', '--env'], io);
    const lines = out.join('').split('\n');
    expect(lines).toContain('HUBTEL_ACCOUNTS=north,south');
    expect(lines).toContain('HUBTEL_CLIENT_ID=sandbox-api');
    expect(lines).toContain('HUBTEL_NORTH_CLIENT_ID=sandbox-north-api');
    expect(lines).toContain('HUBTEL_SOUTH_POS_SALES_ID=2000002');
    // docker run --env-file keeps quotes as part of the value: none where none is needed.
    expect(out.join('')).not.toContain('"');
  });

  it('--sender-id <account>=<id> and --callback-auth declare them per account, and --env prints them', async () => {
    expect(() => parseSandboxCliArgs(['--sender-id', 'south=S'])).toThrow(
      '--sender-id south=: not an account',
    );
    expect(() => parseSandboxCliArgs(['--callback-auth', 'north'])).toThrow(
      '--callback-auth north: not an account',
    );
    const { io, out } = capture();
    running = await startSandboxCli(
      [
        '--port',
        '0',
        '--accounts',
        'north,south',
        '--sender-id',
        'MainShop',
        '--sender-id',
        'north=NorthShop',
        '--callback-auth',
        'north',
        '--env',
      ],
      io,
    );
    expect(running!.accounts().map((a) => [a.name, a.senderIds, a.credentials.callback])).toEqual([
      ['default', ['MainShop'], undefined],
      [
        'north',
        ['NorthShop'],
        { clientId: 'sandbox-north-callback', clientSecret: 'sandbox-north-callback-secret' },
      ],
      ['south', [], undefined],
    ]);
    const lines = out.join('').split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'HUBTEL_SMS_SENDER_ID=MainShop',
        'HUBTEL_NORTH_SMS_SENDER_ID=NorthShop',
        'HUBTEL_NORTH_CALLBACK_CLIENT_ID=sandbox-north-callback',
        'HUBTEL_NORTH_CALLBACK_CLIENT_SECRET=sandbox-north-callback-secret',
      ]),
    );
    expect(lines.some((l) => l.startsWith('HUBTEL_CALLBACK_CLIENT_ID='))).toBe(false);
    // The sandbox holds north's SMS keys to north's sender: MainShop is the default account's.
    const send = (from: string) =>
      call(
        running!,
        'GET',
        `/v1/messages/send?clientid=sandbox-north-sms&clientsecret=sandbox-north-sms-secret&from=${from}&to=0241234567&content=hi`,
      );
    expect((await send('NorthShop')).status).toBe(200);
    expect((await send('MainShop')).status).toBeGreaterThanOrEqual(400);
  });
});
