import { parseArgs } from 'node:util';
import { HubtelSandbox } from '../sandbox.server.js';
import { SANDBOX_DEFAULT_CLI_PORT, SANDBOX_DEFAULT_HOST } from '../sandbox.constants.js';
import { sandboxDotenv } from '../sandbox.env.js';
import type { HubtelSandboxOptions, SandboxChargeBearer } from '../sandbox.option-types.js';

type CliOutput = { write(text: string): unknown };
export type CliIO = { stdout: CliOutput; stderr: CliOutput };

export const SANDBOX_CLI_USAGE = `Usage: hubtel-sandbox [options]

A local stand-in for the Hubtel platform (SMS, checkout with a payment page, status check,
programmable-services callbacks).

Options:
  -p, --port <n>              port to listen on (default ${SANDBOX_DEFAULT_CLI_PORT}; 0 = any free port)
      --host <address>        interface to bind (default ${SANDBOX_DEFAULT_HOST})
      --public-url <url>      origin to announce when it differs (container, tunnel)
      --allowed-host <name>   a Host name the admin API and dashboard answer besides loopback
                              ones, the bound host and the public URL's (repeatable; * for any)
      --pos-sales-id <id>     POS Sales ID of the sandbox merchant
      --sms-client-id <id>    SMS API credentials accepted
      --sms-client-secret <s>
      --api-client-id <id>    checkout / status API credentials accepted
      --api-client-secret <s>
      --merchant-name <name>  name shown on the payment page
      --charge-bearer <who>   who bears the platform's charge on payments: merchant (deducted:
                              status check amount = price, amountAfterCharges less) or payer
                              (added: amount = price + charges, amountAfterCharges = price);
                              <account>=<who> for one account (repeatable; default merchant)
      --sender-id <id>        a sender id the default account's SMS keys send from; <account>=<id>
                              for a named account's (repeatable; default: any sender no other
                              account declares): --sender-id MainShop --sender-id north=NorthShop
      --callback-auth <name>  the fulfillment callbacks of this account's sessions must carry its
                              Basic-auth pair, sandbox-callback / sandbox-callback-secret ("default")
                              or sandbox-<name>-callback / sandbox-<name>-callback-secret (repeatable)
      --accounts <a,b,...>    further accounts served at once (names: lower-case letters, digits,
                              "-", "_"), each with its own keys sandbox-<name>-api /
                              sandbox-<name>-api-secret, sandbox-<name>-sms / sandbox-<name>-sms-secret
                              and POS Sales ID 2000001, 2000002, ... in the order given; one
                              account's keys on another's POS Sales ID are refused (4101, 4105)
      --record-limit <n>      records kept per kind (default 10000)
      --json                  print the start-up information as one JSON line
      --env                   print the HUBTEL_* lines (.env format) that point an app at this
                              sandbox on stdout, every account's (HUBTEL_ACCOUNTS with the named
                              ones), the rest on stderr: hubtel-sandbox --env > .env
      --account <name>        with --env: print only this account's lines (repeatable); a named
                              account's are HUBTEL_ACCOUNTS=<names> and HUBTEL_<NAME>_CLIENT_ID,
                              HUBTEL_<NAME>_POS_SALES_ID, ... (the default's names with <NAME>_
                              inserted); "default" is the default account:
                              hubtel-sandbox --accounts north --env --account north
  -v, --verbose               print every request and callback
  -h, --help                  show this help

Runs until Ctrl+C (SIGINT) or SIGTERM. Exit codes: 0 stopped (or --help), 1 it could not start
(the port is in use, the host cannot be bound) or stop cleanly, 2 usage error.
`;

export class CliUsageError extends Error {}

export type ParsedCli =
  | { help: true }
  | {
      help: false;
      options: HubtelSandboxOptions;
      json: boolean;
      env: boolean;
      verbose: boolean;
      /** `--account`: whose `--env` lines (absent: every account's). */
      envAccounts?: string[];
    };

function integer(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new CliUsageError(`--${name} must be an integer from ${min} to ${max}, got "${value}"`);
  return Number(value);
}

export function parseSandboxCliArgs(argv: string[]): ParsedCli {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        'public-url': { type: 'string' },
        'allowed-host': { type: 'string', multiple: true },
        'pos-sales-id': { type: 'string' },
        'sms-client-id': { type: 'string' },
        'sms-client-secret': { type: 'string' },
        'api-client-id': { type: 'string' },
        'api-client-secret': { type: 'string' },
        'merchant-name': { type: 'string' },
        'charge-bearer': { type: 'string', multiple: true },
        'sender-id': { type: 'string', multiple: true },
        'callback-auth': { type: 'string', multiple: true },
        accounts: { type: 'string' },
        account: { type: 'string', multiple: true },
        'record-limit': { type: 'string' },
        json: { type: 'boolean' },
        env: { type: 'boolean' },
        verbose: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
  if (values.help) return { help: true };
  if (values.json && values.env)
    throw new CliUsageError('--json and --env go to the same stdout: choose one');
  const pair = (kind: 'sms' | 'api') => {
    const id = values[`${kind}-client-id`];
    const secret = values[`${kind}-client-secret`];
    if (id === undefined && secret === undefined) return undefined;
    if (!id || !secret)
      throw new CliUsageError(`--${kind}-client-id and --${kind}-client-secret go together`);
    return { clientId: id, clientSecret: secret };
  };
  const sms = pair('sms');
  const api = pair('api');
  if (values.account?.length && !values.env)
    throw new CliUsageError('--account chooses the lines --env prints: give --env too');
  const accounts = values.accounts?.split(',').map((name) => name.trim());
  if (accounts && accounts.some((name) => name === ''))
    throw new CliUsageError(`--accounts must be names separated by commas, got "${values.accounts}"`);
  const known = new Set(['default', ...(accounts ?? [])]);
  const notServed = (flag: string, name: string) =>
    new CliUsageError(
      `${flag} ${name}: not an account of this sandbox (${[...known].join(', ')}); add it to --accounts`,
    );
  const unknown = values.account?.find((name) => !known.has(name));
  if (unknown !== undefined) throw notServed('--account', unknown);
  // `--sender-id north=NorthShop` is north's; a bare value is the default account's.
  const perAccount = (flag: 'sender-id' | 'charge-bearer') => {
    const byAccount = new Map<string, string[]>();
    for (const given of values[flag] ?? []) {
      const [name, value] = given.includes('=') ? given.split(/=(.*)/s) : ['default', given];
      if (!known.has(name!)) throw notServed(`--${flag}`, `${name}=`);
      if (!value) throw new CliUsageError(`--${flag} ${given}: no value after "="`);
      byAccount.set(name!, [...(byAccount.get(name!) ?? []), value]);
    }
    return byAccount;
  };
  const senderIds = perAccount('sender-id');
  const bearers = perAccount('charge-bearer');
  const bearer = (name: string) => bearers.get(name)?.at(-1) as SandboxChargeBearer | undefined;
  for (const who of [...bearers.values()].flat())
    if (who !== 'merchant' && who !== 'payer')
      throw new CliUsageError(`--charge-bearer must be merchant or payer (or <account>=<who>), got "${who}"`);
  const callbackAuth = new Set(values['callback-auth'] ?? []);
  for (const name of callbackAuth) if (!known.has(name)) throw notServed('--callback-auth', name);
  const callbackPair = (name: string) => {
    const id = name === 'default' ? 'sandbox-callback' : `sandbox-${name}-callback`;
    return callbackAuth.has(name) ? { clientId: id, clientSecret: `${id}-secret` } : undefined;
  };
  const options: HubtelSandboxOptions = {
    port: integer('port', values.port, 0, 65535) ?? SANDBOX_DEFAULT_CLI_PORT,
    host: values.host ?? SANDBOX_DEFAULT_HOST,
    publicUrl: values['public-url'] || undefined,
    allowedHosts: values['allowed-host'],
    posSalesId: values['pos-sales-id'] || undefined,
    credentials: given({ sms, api, callback: callbackPair('default') }),
    recordLimit: integer('record-limit', values['record-limit'] || undefined, 1, 10_000_000),
    checkout: given({ merchantName: values['merchant-name'] || undefined, chargeBearer: bearer('default') }),
    sms: given({ senderIds: senderIds.get('default') }),
    accounts: accounts?.map((name) => ({
      name,
      senderIds: senderIds.get(name),
      credentials: given({ callback: callbackPair(name) }),
      chargeBearer: bearer(name),
    })),
  };
  return {
    help: false,
    options,
    json: values.json ?? false,
    env: values.env ?? false,
    verbose: values.verbose ?? false,
    ...(values.account?.length ? { envAccounts: values.account } : {}),
  };
}

/** A section of options, or undefined when it sets nothing. */
function given<T extends object>(section: T): T | undefined {
  return Object.values(section).some((value) => value !== undefined) ? section : undefined;
}

/** What the CLI prints on start: where to point the modules, and with which credentials. */
export function describeSandbox(sandbox: HubtelSandbox): string {
  const urls = sandbox.baseUrls();
  const { sms, api } = sandbox.credentials;
  return `Hubtel sandbox listening on ${sandbox.url}

Base URLs (all the same origin):
  SMS                    ${urls.sms}
  Checkout               ${urls.checkout}
  Transaction status     ${urls.status}   (POS Sales ID ${sandbox.posSalesId})
  Fulfillment callback   ${urls.fulfillmentCallback}   (POST /callback)

Charges are borne by the ${sandbox.account().chargeBearer} (--charge-bearer)

Credentials:
  SMS  clientId ${sms.clientId}   clientSecret ${sms.clientSecret}
  API  clientId ${api.clientId}   clientSecret ${api.clientSecret}

${describeAccounts(sandbox)}${sandbox.dashboardUrl ? `Dashboard: ${sandbox.dashboardUrl}\n` : ''}Records:   ${sandbox.url}/_sandbox (JSON)
Stop: Ctrl+C
`;
}

/** The named accounts' keys and POS Sales IDs (nothing for a single-account sandbox). */
function describeAccounts(sandbox: HubtelSandbox): string {
  const named = sandbox.accounts().slice(1);
  if (named.length === 0) return '';
  const lines = named.map(
    (a) =>
      `  ${a.name}   POS Sales ID ${a.posSalesId}\n` +
      `    SMS  clientId ${a.credentials.sms.clientId}   clientSecret ${a.credentials.sms.clientSecret}\n` +
      `    API  clientId ${a.credentials.api.clientId}   clientSecret ${a.credentials.api.clientSecret}\n`,
  );
  return `Further accounts (hubtel-sandbox --env --account <name> prints one's variables):\n${lines.join('')}\n`;
}

/** Starts a sandbox from command-line arguments and prints how to use it (undefined after `--help`). */
export async function startSandboxCli(argv: string[], io: CliIO): Promise<HubtelSandbox | undefined> {
  const parsed = parseSandboxCliArgs(argv);
  if (parsed.help) {
    io.stdout.write(SANDBOX_CLI_USAGE);
    return undefined;
  }
  const sandbox = await HubtelSandbox.start({
    ...parsed.options,
    logger: {
      log: () => undefined,
      warn: (m) => io.stderr.write(`warn: ${m}\n`),
      error: (m) => io.stderr.write(`error: ${m}\n`),
    },
  });
  // With --env, stdout is the .env file: everything else goes to stderr.
  const log = parsed.env ? io.stderr : io.stdout;
  if (parsed.verbose) {
    sandbox.on('request', (r) =>
      log.write(
        `${r.method} ${r.path} ${r.statusCode ?? '-'} ${r.durationMs ?? '-'}ms${r.faultId ? ` (${r.faultId})` : ''}\n`,
      ),
    );
    sandbox.on('delivery', (d) => {
      if (d.state === 'delivered' || d.state === 'failed' || d.state === 'dropped') {
        log.write(
          `${d.kind} ${d.id} → ${d.state}${d.statusCode ? ` ${d.statusCode}` : ''}${d.error ? ` (${d.error})` : ''}\n`,
        );
      }
    });
  }
  if (parsed.env) {
    // Every account's lines unless --account chose some.
    const accounts = parsed.envAccounts ?? sandbox.accounts().map((a) => a.name);
    io.stdout.write(sandboxDotenv(sandbox, { accounts }));
    io.stderr.write(describeSandbox(sandbox));
  } else if (parsed.json) {
    io.stdout.write(
      `${JSON.stringify({ url: sandbox.url, baseUrls: sandbox.baseUrls(), credentials: sandbox.credentials, posSalesId: sandbox.posSalesId, ...(sandbox.accounts().length > 1 ? { accounts: sandbox.accounts() } : {}), dashboardUrl: sandbox.dashboardUrl })}\n`,
    );
  } else {
    io.stdout.write(describeSandbox(sandbox));
  }
  return sandbox;
}

/** The `hubtel-sandbox` command: runs until SIGINT/SIGTERM, then stops cleanly. */
export async function main(
  argv: string[] = process.argv.slice(2),
  io: CliIO = { stdout: process.stdout, stderr: process.stderr },
): Promise<void> {
  // Signal handlers go in before anything is printed: whoever reads the start-up lines may
  // signal at once, and must never kill a half-started sandbox.
  const starting = startSandboxCli(argv, io);
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    (argv.includes('--env') ? io.stderr : io.stdout).write(`\n${signal}: stopping the sandbox\n`);
    void starting
      .then((sandbox) => sandbox?.stop())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          // Say why: a bare exit 1 leaves the operator guessing.
          io.stderr.write(
            `hubtel-sandbox: could not stop cleanly: ${(err as Error)?.message ?? String(err)}\n`,
          );
          process.exit(1);
        },
      );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);

  let sandbox: HubtelSandbox | undefined;
  try {
    sandbox = await starting;
  } catch (err) {
    if (err instanceof CliUsageError) {
      io.stderr.write(`hubtel-sandbox: ${err.message}\n\n${SANDBOX_CLI_USAGE}`);
      process.exitCode = 2;
    } else {
      io.stderr.write(`hubtel-sandbox: ${(err as Error)?.message ?? String(err)}\n`);
      process.exitCode = 1;
    }
  }
  if (!sandbox) {
    // --help or a failure: nothing runs, so nothing must keep the process alive.
    process.off('SIGINT', shutdown);
    process.off('SIGTERM', shutdown);
  }
}
