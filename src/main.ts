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
import { banner } from './banner.js';
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
    // Closed: exit once the line is out, as Nest's shutdown hooks do (docs/operations.md). With Redis
    // gone, a closed BullMQ worker's wait for a job holds a timer of BullMQ's own, for up to 11 s.
    const exit = (stream: NodeJS.WriteStream, line: string) => stream.write(line, () => process.exit());
    example.close().then(
      () => exit(process.stdout, 'Stopped.\n'),
      (error: unknown) => {
        process.exitCode = 1;
        exit(
          process.stderr,
          `Error while stopping: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

await main();
