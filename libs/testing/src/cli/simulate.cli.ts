import { HubtelError } from 'nestjs-hubtel';
import { CliUsageError, EXIT, intOption, parseCliArgs, parseOrExit, urlOption } from '#light/sandbox';
import { sessionOptions, type CliStreams } from './cli.support.js';
import { SIMULATE_CLI_USAGE, SIMULATE_OPTIONS } from './cli.usage.js';
import { TerminalSimulator, defaultFulfillmentUrl, describeError } from './simulate.terminal.js';
import type { TerminalSimulatorOptions } from './simulate.types.js';

export function parseSimulateCliArgs(
  argv: string[],
): { help: true } | { help: false; options: TerminalSimulatorOptions } {
  const { values, positionals } = parseCliArgs(argv, SIMULATE_OPTIONS);
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
