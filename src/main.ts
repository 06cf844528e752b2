/*
 * The example merchant app: `npm start`.
 *
 * With no configuration it runs against an embedded Hubtel sandbox (no real money, nothing to
 * install) and listens on http://127.0.0.1:3000 (PORT, HOST). With HUBTEL_* credentials and
 * PUBLIC_URL in the environment it runs against the real platform instead. See
 * docs/quick-start.md.
 */
import 'reflect-metadata';
import { ConsoleLogger } from '@nestjs/common';
import { HubtelConfigError, maskPhoneNumbers, sanitizeLogParam } from 'nestjs-hubtel';
import { exampleConfigFromEnv } from './app.config.js';
import { startExampleApp, type ExampleApp } from './bootstrap.js';

/**
 * Nest's console logger without its start-up chatter (one line per module and route). Every
 * message is escaped, masked and capped like the modules' own (HubtelLogger), Nest's lines too
 * (an exception's message may quote a request), so nothing can forge a line of the app's output.
 */
class ExampleLogger extends ConsoleLogger {
  private static readonly QUIET = new Set([
    'NestFactory',
    'InstanceLoader',
    'RoutesResolver',
    'RouterExplorer',
    'NestApplication',
  ]);

  override log(message: unknown, context?: string): void {
    if (context !== undefined && ExampleLogger.QUIET.has(context)) return;
    super.log(message, context);
  }

  protected override printMessages(messages: unknown[], ...rest: unknown[]): void {
    const print = super.printMessages as (
      this: ConsoleLogger,
      messages: unknown[],
      ...rest: unknown[]
    ) => void;
    print.call(
      this,
      messages.map((message) => sanitizeLogParam(message)),
      ...rest,
    );
  }
}

function banner(example: ExampleApp): string {
  const a = example.addresses;
  const lines = [
    '',
    example.mode === 'sandbox'
      ? 'Example merchant app — running against the embedded Hubtel sandbox (no real money moves)'
      : 'Example merchant app — running against the REAL Hubtel platform',
    '',
    `  Shop:                  ${a.shop}`,
  ];
  if (a.simulator) lines.push(`  Data-bundle simulator: ${a.simulator}`);
  lines.push(
    `  Service flow URL:      ${a.serviceFlow}`,
    `  Fulfillment URL:       ${a.fulfillment}`,
    `  Checkout callback:     ${a.checkoutCallback}`,
  );
  if (example.sandbox) {
    const { sms, api } = example.sandbox.credentials;
    lines.push(`  Sandbox:               ${a.sandbox}`);
    if (a.sandboxDashboard)
      lines.push(`  Sandbox dashboard:     ${a.sandboxDashboard}  (SMS sent, invoices, callbacks, sessions)`);
    lines.push(
      // The sandbox's fixed, documented credentials: they protect nothing and are no secret.
      `  Sandbox credentials:   SMS ${sms.clientId} / ${sms.clientSecret}; checkout + status ${api.clientId} / ${api.clientSecret}; POS Sales ID ${example.sandbox.posSalesId}`,
    );
  }
  lines.push('', 'Press Ctrl+C to stop.', '');
  return lines.join('\n');
}

async function main(): Promise<void> {
  let example: ExampleApp;
  try {
    example = await startExampleApp(exampleConfigFromEnv(process.env), { logger: new ExampleLogger() });
  } catch (error) {
    if (error instanceof HubtelConfigError) {
      process.stderr.write(`\nCannot start the example app: ${maskPhoneNumbers(error.message)}\n`);
      process.exitCode = 1;
      return;
    }
    throw error;
  }
  process.stdout.write(banner(example));

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping…\n`);
    // Should closing hang (a client holding a connection), do not hang with it.
    setTimeout(() => {
      process.stderr.write('Did not stop within 10 s; exiting.\n');
      process.exit(1);
    }, 10_000).unref();
    example.close().then(
      () => process.stdout.write('Stopped.\n'),
      (error: unknown) => {
        process.stderr.write(
          `Error while stopping: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        process.exitCode = 1;
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

await main();
