import { DEFAULT_USSD_SCREEN, HubtelNetworkError, HubtelValidationError, ussdScreen } from '#light/core';
import { endpointUrl, sendJson, type SentResponse } from '../testing.http.js';
import { EXIT, parseOrExit } from '#light/sandbox';
import { painter, ussdTitle, type CliStreams } from './cli.support.js';
import { TRIGGER_CLI_USAGE, type TriggerKind } from './cli.usage.js';
import { parseTriggerCliArgs, type TriggerOptions } from './trigger.args.js';
import { buildTriggerBody, type MarkedPaid } from './trigger.bodies.js';

export type { Forgery } from './cli.usage.js';
export type { TriggerKind, TriggerOptions };

/** What the trigger sends and what it got back. */
export interface TriggerReport {
  kind: TriggerKind;
  url: string;
  body: unknown;
  /** With `markPaid`: the sandbox marked the invoice paid now, or it was already paid. */
  markedPaid?: MarkedPaid;
  /** service-flow on USSD: each 2xx answer's `Message` measured against the screen size. */
  screens?: Array<{ copy: number; length: number; limit: number; gsm7: boolean; fits: boolean }>;
  /** service-flow: the cart an answer carried (AddToCart; on USSD, Release with an Item). */
  cart?: { ItemName: string; Qty: number; Price: number; total: number; sessionId: string };
  /** One per copy, in copy order. */
  answers: Array<
    | { copy: number; status: number; body: unknown; durationMs: number }
    | { copy: number; error: string; durationMs: number }
  >;
}

/** Sends the trigger's body (`copies` at once) and collects every answer. */
export async function runTrigger(options: TriggerOptions): Promise<TriggerReport> {
  return sendTrigger(options, await buildTriggerBody(options));
}

async function sendTrigger(
  options: TriggerOptions,
  { body, path, markedPaid }: { body: unknown; path: string; markedPaid?: MarkedPaid },
): Promise<TriggerReport> {
  const url = endpointUrl(options.url, routeOf(options, path));
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
  return { kind: options.kind, url, body, ...(markedPaid ? { markedPaid } : {}), answers };
}

/** The `hubtel-trigger` command; resolves with its exit code. */
export async function runTriggerCli(argv: string[], io: CliStreams): Promise<number> {
  // dead-letters needs Nest and Redis: imported only for it, so the other commands start without them.
  if (argv[0] === 'dead-letters')
    return (await import('./dead-letters.cli.js')).runDeadLettersCli(argv.slice(1), io);
  const options = parseOrExit('hubtel-trigger', TRIGGER_CLI_USAGE, io, () => parseTriggerCliArgs(argv));
  if (typeof options === 'number') return options;
  const p = painter(io.stdout, io.env, options.noColor || options.json);
  const out = (line: string) => io.stdout.write(`${line}\n`);
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
  const url = endpointUrl(options.url, routeOf(options, built.path));
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
    const note =
      options.kind === 'fulfillment'
        ? `recorded the payment of session ${options.sessionId} in the sandbox`
        : built.markedPaid === 'marked'
          ? `marked ${options.reference} paid in the sandbox (its callback held back)`
          : `${options.reference} was already paid in the sandbox`;
    out(p(note, 'dim'));
  }
  if (!options.json) {
    out(p(built.summary, 'bold'));
    out(p(`POST ${url}${options.copies > 1 ? ` — ${options.copies} copies at once` : ''}`, 'dim'));
  }
  const report = await sendTrigger(options, built);
  const ussd = options.kind === 'service-flow' && options.serviceFlow!.channel === 'ussd';
  if (options.kind === 'service-flow') describeServiceFlowAnswers(options, report);
  const failed = report.answers.filter((a) => 'error' in a);
  const non2xx = report.answers.filter((a) => 'status' in a && (a.status < 200 || a.status >= 300));
  if (options.json) out(JSON.stringify(report));
  else {
    for (const a of report.answers) {
      const label = options.copies > 1 ? `#${a.copy} ` : '';
      if ('error' in a) out(p(`${label}✗ ${a.error}`, 'red'));
      else {
        const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
        const ok = a.status >= 200 && a.status < 300;
        const screen = report.screens?.find((sc) => sc.copy === a.copy);
        if (ussd && ok && screen) {
          // A USSD phone shows Message only: the screen, its size, and nothing of Data.
          const answer = a.body as { Type?: unknown; Message?: unknown };
          out(`${label}${p(`HTTP ${a.status}`, 'bold', 'green')} ${p(`Type ${String(answer.Type)}`, 'dim')}`);
          out(ussdTitle(screen, p));
          if (typeof answer.Message === 'string' && answer.Message !== '') out(answer.Message);
          if (!screen.fits)
            out(
              `${p(`⚠ screen too long: ${screen.length} characters, a USSD screen holds ${screen.limit}${screen.gsm7 ? '' : ' once any character is outside the GSM 7-bit alphabet'}`, 'yellow')}`,
            );
        } else out(`${label}${p(`HTTP ${a.status}`, 'bold', ok ? 'green' : 'red')} ${text}`);
      }
    }
    if (options.copies > 1) {
      const counts = new Map<string, number>();
      for (const a of report.answers) {
        const key = 'error' in a ? 'no answer' : String(a.status);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      out(p(`${options.copies} answers: ${[...counts].map(([k, n]) => `${n} × ${k}`).join(', ')}`, 'dim'));
    }
  }
  if (!options.json && report.cart) {
    const cart = report.cart;
    out(
      `${p(`🛒 Cart: ${cart.ItemName} × ${cart.Qty} @ GHS ${cart.Price.toFixed(2)} = GHS ${cart.total.toFixed(2)}`, 'magenta')}`,
    );
    out(
      `${p(`   pay it: hubtel-trigger fulfillment ${new URL(url).origin} --session-id ${cart.sessionId} --sandbox <sandbox-url> --mark-paid --amount ${cart.total.toFixed(2)}`, 'dim')}`,
    );
  }
  if (failed.length > 0 && failed.length === report.answers.length) return EXIT.network;
  const oversize = report.screens?.some((sc) => !sc.fits) ?? false;
  return failed.length > 0 || non2xx.length > 0 || oversize ? EXIT.failed : EXIT.ok;
}

/** Adds to a service-flow report what the phone showed (on USSD) and the cart an answer carried. */
function describeServiceFlowAnswers(options: TriggerOptions, report: TriggerReport): void {
  const flow = options.serviceFlow!;
  const limits = {
    screenSize: flow.screenSize ?? DEFAULT_USSD_SCREEN.screenSize,
    unicodeScreenSize: flow.unicodeScreenSize ?? DEFAULT_USSD_SCREEN.unicodeScreenSize,
  };
  const sessionId = (report.body as { SessionId: string }).SessionId;
  for (const a of report.answers) {
    if (!('status' in a) || a.status < 200 || a.status >= 300) continue;
    if (a.body === null || typeof a.body !== 'object') continue;
    const answer = a.body as { Type?: unknown; Message?: unknown; Item?: unknown };
    if (flow.channel === 'ussd' && typeof answer.Message === 'string') {
      const { length, limit, gsm7, fits } = ussdScreen(answer.Message, limits);
      (report.screens ??= []).push({ copy: a.copy, length, limit, gsm7, fits });
    }
    const type = String(answer.Type ?? '').toLowerCase();
    const { ItemName, Qty, Price } = (answer.Item ?? {}) as Record<string, unknown>;
    const isCart = !report.cart && (type === 'addtocart' || (type === 'release' && flow.channel === 'ussd'));
    if (isCart && typeof ItemName === 'string' && typeof Qty === 'number' && typeof Price === 'number')
      report.cart = { ItemName, Qty, Price, total: Math.round(Qty * Price * 100) / 100, sessionId };
  }
}

/** The endpoint's path: `--path` or the module's route, then the named account's segment. */
function routeOf(options: TriggerOptions, modulePath: string): string {
  const path = options.path ?? modulePath;
  return options.account === undefined ? path : `${path.replace(/\/+$/, '')}/${options.account}`;
}
