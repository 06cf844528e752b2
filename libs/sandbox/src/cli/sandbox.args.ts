import { SANDBOX_DEFAULT_CLI_PORT, SANDBOX_DEFAULT_HOST } from '../sandbox.constants.js';
import type { HubtelSandboxOptions, SandboxChargeBearer } from '../sandbox.option-types.js';
import {
  CliUsageError,
  cliOptions,
  EXIT,
  intOption,
  parseCliArgs,
  parseOrExit,
  type CliIO,
} from './cli.args.js';

// The bin answers --help and usage errors from this file and cli.args.ts alone: no sandbox, no Nest.

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

const SANDBOX_OPTIONS = {
  ...cliOptions(
    [
      'host public-url pos-sales-id sms-client-id sms-client-secret api-client-id api-client-secret',
      'merchant-name accounts record-limit',
    ],
    ['json env'],
  ),
  port: { type: 'string', short: 'p' },
  verbose: { type: 'boolean', short: 'v' },
  'allowed-host': { type: 'string', multiple: true },
  'charge-bearer': { type: 'string', multiple: true },
  'sender-id': { type: 'string', multiple: true },
  'callback-auth': { type: 'string', multiple: true },
  account: { type: 'string', multiple: true },
} as const;

export function parseSandboxCliArgs(argv: string[]): ParsedCli {
  const { values, positionals } = parseCliArgs(argv, SANDBOX_OPTIONS);
  if (positionals.length > 0)
    throw new CliUsageError(
      `Unexpected argument '${positionals[0]}'. This command does not take positional arguments`,
    );
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
    port: intOption('port', values.port, 0, 65535) ?? SANDBOX_DEFAULT_CLI_PORT,
    host: values.host ?? SANDBOX_DEFAULT_HOST,
    publicUrl: values['public-url'] || undefined,
    allowedHosts: values['allowed-host'],
    posSalesId: values['pos-sales-id'] || undefined,
    credentials: given({ sms, api, callback: callbackPair('default') }),
    recordLimit: intOption('record-limit', values['record-limit'] || undefined, 1, 10_000_000),
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

/** What to start; undefined once --help (exit 0) or a usage error (exit 2) was answered. */
export function argsOrAnswer(argv: string[], io: CliIO): Extract<ParsedCli, { help: false }> | undefined {
  const parse = () => {
    const parsed = parseSandboxCliArgs(argv);
    return parsed.help ? parsed : { help: false as const, options: parsed };
  };
  const answer = parseOrExit('hubtel-sandbox', SANDBOX_CLI_USAGE, io, parse);
  if (typeof answer !== 'number') return answer;
  if (answer === EXIT.usage) process.exitCode = answer;
  return undefined;
}
