import { HubtelNetworkError, HubtelValidationError } from 'nestjs-hubtel';
import { endpointUrl, sendJson, type SentResponse } from '../testing.http.js';
import { EXIT, painter, usageFailure, type CliStreams } from './cli-support.js';
import { runDeadLettersCli } from './dead-letters-cli.js';
import {
  TRIGGER_CLI_USAGE,
  parseTriggerCliArgs,
  type ParsedTriggerCli,
  type TriggerKind,
  type TriggerOptions,
} from './trigger-cli.args.js';
import { buildTriggerBody, type MarkedPaid } from './trigger-cli.bodies.js';

// The command's parts, exported from here where users of the testing kit find them.
export {
  FORGERIES,
  TRIGGER_CLI_USAGE,
  TRIGGER_KINDS,
  parseTriggerCliArgs,
  type Forgery,
  type ParsedTriggerCli,
  type TriggerKind,
  type TriggerOptions,
} from './trigger-cli.args.js';
export { buildTriggerBody, type MarkedPaid } from './trigger-cli.bodies.js';

/** What the trigger sends and what it got back. */
export interface TriggerReport {
  kind: TriggerKind;
  url: string;
  body: unknown;
  /** With `markPaid`: the sandbox marked the invoice paid now, or it was already paid. */
  markedPaid?: MarkedPaid;
  /** One per copy, in copy order. */
  answers: Array<
    | { copy: number; status: number; body: unknown; durationMs: number }
    | { copy: number; error: string; durationMs: number }
  >;
}

/** Sends the trigger's body (`copies` at once) and collects every answer. */
export async function runTrigger(options: TriggerOptions): Promise<TriggerReport> {
  const { body, path, markedPaid } = await buildTriggerBody(options);
  const report = await sendTrigger(options, body, path);
  return markedPaid ? { ...report, markedPaid } : report;
}

async function sendTrigger(options: TriggerOptions, body: unknown, path: string): Promise<TriggerReport> {
  const url = endpointUrl(options.url, options.path ?? path);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
  if (options.kind.startsWith('checkout')) headers['Cache-Control'] ??= 'no-cache';
  else headers.Accept ??= 'application/json';
  const copies = Array.from({ length: options.copies }, (_, i) => i + 1);
  const answers = await Promise.all(
    copies.map(async (copy) => {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      try {
        const res: SentResponse = await sendJson(url, body, { headers, timeoutMs: options.timeoutMs });
        return { copy, status: res.status, body: res.body, durationMs: elapsed() };
      } catch (err) {
        return { copy, error: (err as Error).message, durationMs: elapsed() };
      }
    }),
  );
  return { kind: options.kind, url, body, answers };
}

/** The `hubtel-trigger` command; resolves with its exit code. */
export async function runTriggerCli(argv: string[], io: CliStreams): Promise<number> {
  // The operator's side: dead letters of an app on Redis (see dead-letters-cli.ts).
  if (argv[0] === 'dead-letters') return runDeadLettersCli(argv.slice(1), io);
  let parsed: ParsedTriggerCli;
  try {
    parsed = parseTriggerCliArgs(argv);
  } catch (err) {
    return usageFailure('hubtel-trigger', TRIGGER_CLI_USAGE, io, err);
  }
  if (parsed.help) {
    io.stdout.write(TRIGGER_CLI_USAGE);
    return EXIT.ok;
  }
  const options = parsed.options;
  const p = painter(io.stdout, io.env, options.noColor || options.json);
  let built;
  try {
    built = await buildTriggerBody(options);
  } catch (err) {
    io.stderr.write(`hubtel-trigger: ${(err as Error).message}\n`);
    return err instanceof HubtelNetworkError
      ? EXIT.network
      : err instanceof HubtelValidationError
        ? EXIT.usage
        : EXIT.failed;
  }
  const url = endpointUrl(options.url, options.path ?? built.path);
  if (options.dryRun) {
    const unmarked = options.markPaid ? '(dry run: the invoice was not marked paid)\n' : '';
    io.stdout.write(
      options.json
        ? `${JSON.stringify({ kind: options.kind, url, body: built.body, copies: options.copies })}\n`
        : `${unmarked}${built.summary}\nPOST ${url}${options.copies > 1 ? ` ×${options.copies}` : ''}\n${JSON.stringify(built.body, null, 2)}\n`,
    );
    return EXIT.ok;
  }
  if (!options.json && built.markedPaid) {
    io.stdout.write(
      `${p(
        options.kind === 'fulfillment'
          ? `recorded the payment of session ${options.sessionId} in the sandbox`
          : built.markedPaid === 'marked'
            ? `marked ${options.reference} paid in the sandbox (its callback held back)`
            : `${options.reference} was already paid in the sandbox`,
        'dim',
      )}\n`,
    );
  }
  if (!options.json) {
    io.stdout.write(`${p(built.summary, 'bold')}\n`);
    io.stdout.write(
      `${p(`POST ${url}${options.copies > 1 ? ` — ${options.copies} copies at once` : ''}`, 'dim')}\n`,
    );
  }
  const sent = await sendTrigger(options, built.body, built.path);
  const report: TriggerReport = built.markedPaid ? { ...sent, markedPaid: built.markedPaid } : sent;
  const failed = report.answers.filter((a) => 'error' in a);
  const non2xx = report.answers.filter((a) => 'status' in a && (a.status < 200 || a.status >= 300));
  if (options.json) {
    io.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    for (const a of report.answers) {
      const label = options.copies > 1 ? `#${a.copy} ` : '';
      if ('error' in a) io.stdout.write(`${p(`${label}✗ ${a.error}`, 'red')}\n`);
      else {
        const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
        const ok = a.status >= 200 && a.status < 300;
        io.stdout.write(`${label}${p(`HTTP ${a.status}`, 'bold', ok ? 'green' : 'red')} ${text}\n`);
      }
    }
    if (options.copies > 1) {
      const counts = new Map<string, number>();
      for (const a of report.answers) {
        const key = 'error' in a ? 'no answer' : String(a.status);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      io.stdout.write(
        `${p(`${options.copies} answers: ${[...counts].map(([k, n]) => `${n} × ${k}`).join(', ')}`, 'dim')}\n`,
      );
    }
  }
  if (failed.length > 0 && failed.length === report.answers.length) return EXIT.network;
  return failed.length > 0 || non2xx.length > 0 ? EXIT.failed : EXIT.ok;
}
