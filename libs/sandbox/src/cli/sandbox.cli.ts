import { HubtelSandbox } from '../sandbox.server.js';
import { sandboxDotenv } from '../sandbox.env.js';
import type { CliIO } from './cli.args.js';
import { argsOrAnswer } from './sandbox.args.js';

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

/** Starts a sandbox from command-line arguments and prints how to use it (undefined: --help or a usage error, answered). */
export async function startSandboxCli(argv: string[], io: CliIO): Promise<HubtelSandbox | undefined> {
  const parsed = argsOrAnswer(argv, io);
  if (!parsed) return undefined;
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
      if (d.state === 'delivered' || d.state === 'failed' || d.state === 'dropped')
        log.write(
          `${d.kind} ${d.id} → ${d.state}${d.statusCode ? ` ${d.statusCode}` : ''}${d.error ? ` (${d.error})` : ''}\n`,
        );
    });
  }
  if (parsed.env) {
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
export async function main(argv: string[], io: CliIO): Promise<void> {
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
    io.stderr.write(`hubtel-sandbox: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = 1;
  }
  if (!sandbox) {
    // --help, a usage error or a failure: nothing runs, so nothing must keep the process alive.
    process.off('SIGINT', shutdown);
    process.off('SIGTERM', shutdown);
  }
}
