import { HubtelError } from 'nestjs-hubtel';
import { TESTING_DEFAULTS } from '../testing.constants.js';
import {
  CliUsageError,
  cliOptions,
  EXIT,
  intOption,
  parseCliArgs,
  urlOption,
  parseOrExit,
  sessionOptions,
  type CliStreams,
} from './cli.support.js';
import { TerminalSimulator, defaultFulfillmentUrl, describeError } from './simulate.terminal.js';
import type { TerminalSimulatorOptions } from './simulate.types.js';

export const SIMULATE_CLI_USAGE = `Usage: hubtel-simulate <service-flow-url> [options]

Plays Hubtel's client app against your programmable service, as a USSD phone or as the Hubtel
app: shows each screen, reads your answers, shows the cart and pays it (the fulfillment request),
then waits for your app's fulfillment callback.

  <service-flow-url>          your Service Interaction URL, e.g. http://localhost:3000/api/service-flow

Options:
      --service-code <code>   ServiceCode of the session (default ${TESTING_DEFAULTS.serviceCode})
      --mobile <msisdn>       the user's number (default ${TESTING_DEFAULTS.phone})
      --operator <name>       the user's channel: mtn, vodafone, airtel, tigo, Hubtel-Android... (default ${TESTING_DEFAULTS.operator})
      --channel <ussd|app>    ussd: a phone that shows Message only (menus must be in it), flags a
                              screen over the size, sends the number typed, and pays a Release
                              carrying an Item; app: the Hubtel app, listing the options of Data
                              (default: ussd for a telco operator, mtn, vodafone-gh..., app otherwise)
      --screen-size <n>       USSD screen size in characters (default 182)
      --unicode-screen-size <n>  the size once any character is outside GSM-7 (default 70)
      --fulfillment-url <url> your Service Fulfillment URL (default: the service-flow URL with
                              service-flow replaced by fulfillment)
      --sandbox <url>         a running sandbox your app sends fulfillment callbacks to (hubtel-sandbox,
                              or an app's embedded one); the callback is read from its records
      --account <name>        with --sandbox: the sandbox account whose programmable service this is
                              (its status check confirms the payment to that account's keys only);
                              the URL names your app's account: .../api/service-flow/<account>
                              (default: the sandbox's default account)
      --callback-port <n>     otherwise the simulator receives callbacks itself on this port (default: free)
      --callback-timeout <s>  seconds to wait for the fulfillment callback (default 60)
      --timeout <ms>          time allowed for each answer of the service (default 5000, the USSD limit)
      --strict                stop when an answer breaks the contract (default: warn)
      --no-color              plain output (also NO_COLOR=1)
  -h, --help                  show this help

Answers: type the text asked for; on a list, the option's number (or its Value; on USSD what you
type is sent as typed, the service maps the number). On the cart:
y pays, n declines, f simulates a failed payment. Ctrl+C (or the end of the input) releases the session.

Errors print the reason the service or the sandbox gave. Exit codes: 0 the session ended normally
(a purchase was fulfilled), 1 the service failed (HTTP error, invalid answer, no or failed
fulfillment), 2 usage error (or --callback-port already in use), 3 the service could not be
reached, 130 interrupted.
`;

export type ParsedSimulateCli = { help: true } | { help: false; options: TerminalSimulatorOptions };

export function parseSimulateCliArgs(argv: string[]): ParsedSimulateCli {
  const parsed = parseCliArgs(
    argv,
    cliOptions(
      [
        'service-code mobile operator channel screen-size unicode-screen-size fulfillment-url',
        'sandbox account callback-port callback-timeout timeout',
      ],
      ['strict no-color'],
    ),
  );
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (positionals.length !== 1)
    throw new CliUsageError(
      positionals.length === 0
        ? 'the service-flow URL is required'
        : `one service-flow URL expected, got ${positionals.length} arguments`,
    );
  const flowUrl = urlOption('<service-flow-url>', positionals[0]!);
  if (flowUrl.pathname === '/' || flowUrl.pathname === '') flowUrl.pathname = '/api/service-flow';
  const fulfillmentUrl = values['fulfillment-url']
    ? urlOption('--fulfillment-url', values['fulfillment-url'])
    : defaultFulfillmentUrl(flowUrl);
  if (fulfillmentUrl.origin !== flowUrl.origin)
    throw new CliUsageError(
      `--fulfillment-url must be on the same origin as the service-flow URL (${flowUrl.origin})`,
    );
  const { mobile, channel } = sessionOptions(values);
  const account = values.account?.trim();
  if (account !== undefined && (account === '' || values.sandbox === undefined))
    throw new CliUsageError(
      account === ''
        ? '--account must not be empty'
        : '--account needs --sandbox (the sandbox whose account confirms the payment)',
    );
  const callbackTimeout = intOption('callback-timeout', values['callback-timeout'], 1, 3600);
  return {
    help: false,
    options: {
      serviceFlowUrl: flowUrl.href,
      fulfillmentUrl: fulfillmentUrl.href,
      serviceCode: values['service-code'],
      mobile,
      operator: values.operator,
      channel,
      screenSize: intOption('screen-size', values['screen-size'], 10, 10_000),
      unicodeScreenSize: intOption('unicode-screen-size', values['unicode-screen-size'], 10, 10_000),
      sandboxUrl: values.sandbox === undefined ? undefined : urlOption('--sandbox', values.sandbox).origin,
      ...(account === undefined ? {} : { account }),
      callbackPort: intOption('callback-port', values['callback-port'], 0, 65535),
      callbackTimeoutMs: callbackTimeout === undefined ? undefined : callbackTimeout * 1000,
      timeoutMs: intOption('timeout', values.timeout, 1, 600_000),
      strict: values.strict ?? false,
      noColor: values['no-color'] ?? false,
    },
  };
}

/** The `hubtel-simulate` command; resolves with its exit code. `onStart` receives the simulator (to interrupt it on a signal). */
export async function runSimulateCli(
  argv: string[],
  io: CliStreams,
  onStart?: (simulator: TerminalSimulator) => void,
): Promise<number> {
  const options = parseOrExit('hubtel-simulate', SIMULATE_CLI_USAGE, io, () => parseSimulateCliArgs(argv));
  if (typeof options === 'number') return options;
  try {
    const simulator = new TerminalSimulator(options, io);
    onStart?.(simulator);
    return (await simulator.run()).exitCode;
  } catch (err) {
    // Before any session: the callback receiver could not listen (--callback-port taken).
    const config = err instanceof HubtelError && err.code === 'HUBTEL_CONFIG_INVALID';
    io.stderr.write(`hubtel-simulate: ${describeError(err)}\n`);
    return config ? EXIT.usage : EXIT.failed;
  }
}
