import { parseArgs } from 'node:util';
import { HubtelError, HubtelNetworkError, HubtelValidationError, tryNormalizeMsisdn } from 'nestjs-hubtel';
import type { SandboxInvoice } from 'nestjs-hubtel/sandbox';
import {
  buildCheckoutCallback,
  buildFulfillmentCallback,
  buildFulfillmentRequest,
  randomHubtelId,
} from '../testing.builders.js';
import { TESTING_PATHS } from '../testing.constants.js';
import { endpointUrl, sendJson, type SentResponse } from '../testing.http.js';
import {
  CliUsageError,
  EXIT,
  intOption,
  markServicePaidInSandbox,
  painter,
  urlOption,
  type CliStreams,
} from './cli-support.js';
import { runDeadLettersCli } from './dead-letters-cli.js';

export const TRIGGER_KINDS = [
  'checkout',
  'checkout-duplicate',
  'checkout-forged',
  'fulfillment',
  'fulfillment-forged',
  'fulfillment-callback',
] as const;
export type TriggerKind = (typeof TRIGGER_KINDS)[number];
export const FORGERIES = ['unknown-reference', 'wrong-amount', 'wrong-checkout-id'] as const;
export type Forgery = (typeof FORGERIES)[number];

export const TRIGGER_CLI_USAGE = `Usage: hubtel-trigger <kind> <url> [options]

Sends a sample of what the Hubtel platform sends to your app, and prints each answer (HTTP status
and body). Bodies are built field for field as the platform's contract writes them.

Kinds:
  checkout              a checkout web callback: a paid invoice (--outcome failed: a refused payment)
  checkout-duplicate    the same callback, --copies times at once (default 2): handled once?
  checkout-forged       a forged callback (--forge): unknown-reference (default), wrong-amount,
                        wrong-checkout-id: rejected?
  fulfillment           a programmable-services fulfillment request (--copies for duplicates);
                        with --sandbox and --mark-paid the session's payment is recorded there first
  fulfillment-forged    a fulfillment request nobody paid for (the status check knows no payment
                        for the SessionId): refused by an app that verifies payments?
  fulfillment-callback  a fulfillment callback, to a platform receiver (a sandbox's /callback)
  dead-letters          list | replay <id>: the jobs an app on Redis gave up on
                        (hubtel-trigger dead-letters --help)

  <url>                 your app's origin (the module's default route is added:
                        ${TESTING_PATHS.checkoutCallback}, ${TESTING_PATHS.fulfillment}) or the full endpoint URL

Checkout options:
  --reference <ref>       ClientReference of the invoice (required, except to forge an unknown one)
  --checkout-id <id>      CheckoutId the platform gave the invoice (required for a valid callback)
  --amount <n>            Amount paid (required for a valid callback; the forged amount for wrong-amount)
  --sandbox <url>         a running sandbox to read the invoice's checkout id, amount and payer from
  --mark-paid             with --sandbox: first mark the invoice paid in that sandbox WITHOUT its
                          callback, so the status check confirms the callback this sends
  --outcome <paid|failed> default paid
  --phone <msisdn>        the payer (default 233241234567)
  --channel <code>        mtn-gh, vodafone-gh, tigo-gh (default: from the number)
  --forge <how>           for checkout-forged: ${FORGERIES.join(' | ')}
Fulfillment options:
  --session-id <id>       SessionId of the session that ended in AddToCart (required)
  --order-id <id>         OrderId (default: random)
  --sandbox <url>         with --mark-paid: the sandbox the app's status check asks
  --mark-paid             record the session's payment in that sandbox first (amount: the cart's
                          total the sandbox knows, or --amount), so the app's verification passes
  --amount <n>            the amount recorded with --mark-paid
  --service-status <s>    fulfillment-callback only (default success)
Common:
  --copies <n>            send n identical copies at the same time (default 1; checkout-duplicate 2)
  --path <path>           endpoint path when <url> is an origin (default: the module's route)
  -H, --header <h>        extra request header "Name: value" (repeatable)
  --timeout <ms>          per request (default 10000)
  --json                  print one JSON object (url, body, answers) instead of text
  --dry-run               print what would be sent; send nothing
  --no-color              plain output (also NO_COLOR=1)
  -h, --help              show this help

A CheckoutModule answers 200 to every well-formed callback, forged ones included (a forger learns
nothing): whether it was handled, a duplicate or rejected shows in your app (events, logs, the
order). With a POS Sales ID the module also confirms a callback with the status check: against
the sandbox, a valid callback then counts only for an invoice the sandbox knows as paid (pay it on
the sandbox's payment page, or add --mark-paid).

A ServiceAppModule with a status check (serviceApp.statusCheck) answers every well-formed
fulfillment request 200 "received", then confirms the SessionId's payment before any handler runs:
against a sandbox, send "fulfillment" with --sandbox <url> --mark-paid; "fulfillment-forged" must
end in a rejected event (NOT_PAID) with no handler run and no callback.

Exit codes: 0 every answer was 2xx, 1 an answer was not 2xx (or the sandbox had no such invoice),
2 usage error, 3 the URL could not be reached.
`;

export interface TriggerOptions {
  kind: TriggerKind;
  url: string;
  reference?: string;
  checkoutId?: string;
  amount?: number;
  sandboxUrl?: string;
  /** Mark the invoice paid in the sandbox (no callback) before sending: needs `sandboxUrl`. */
  markPaid?: boolean;
  outcome: 'paid' | 'failed';
  phone?: string;
  channel?: string;
  forge: Forgery;
  sessionId?: string;
  orderId?: string;
  serviceStatus?: string;
  copies: number;
  path?: string;
  headers: Record<string, string>;
  timeoutMs?: number;
  json: boolean;
  dryRun: boolean;
  noColor: boolean;
}

export type ParsedTriggerCli = { help: true } | { help: false; options: TriggerOptions };

function amountOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d{1,2})?$/.test(value))
    throw new CliUsageError(`--amount must be a number with at most 2 decimals, got "${value}"`);
  return Number(value);
}

export function parseTriggerCliArgs(argv: string[]): ParsedTriggerCli {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        reference: { type: 'string' },
        'checkout-id': { type: 'string' },
        amount: { type: 'string' },
        sandbox: { type: 'string' },
        'mark-paid': { type: 'boolean' },
        outcome: { type: 'string' },
        phone: { type: 'string' },
        channel: { type: 'string' },
        forge: { type: 'string' },
        'session-id': { type: 'string' },
        'order-id': { type: 'string' },
        'service-status': { type: 'string' },
        copies: { type: 'string' },
        path: { type: 'string' },
        header: { type: 'string', short: 'H', multiple: true },
        timeout: { type: 'string' },
        json: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        'no-color': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (positionals.length !== 2)
    throw new CliUsageError(
      `expected <kind> <url>, got ${positionals.length} argument${positionals.length === 1 ? '' : 's'}`,
    );
  const [kindArg, urlArg] = positionals as [string, string];
  const kind = (kindArg === 'checkout-callback' ? 'checkout' : kindArg) as TriggerKind;
  if (!TRIGGER_KINDS.includes(kind))
    throw new CliUsageError(`unknown kind "${kindArg}"; one of ${TRIGGER_KINDS.join(', ')}`);
  urlOption('<url>', urlArg);
  const outcome = (values.outcome ?? 'paid') as 'paid' | 'failed';
  if (outcome !== 'paid' && outcome !== 'failed')
    throw new CliUsageError(`--outcome must be paid or failed, got "${values.outcome}"`);
  const forge = (values.forge ?? 'unknown-reference') as Forgery;
  if (!FORGERIES.includes(forge))
    throw new CliUsageError(`--forge must be one of ${FORGERIES.join(', ')}, got "${values.forge}"`);
  if (values.forge !== undefined && kind !== 'checkout-forged')
    throw new CliUsageError('--forge goes with the checkout-forged kind');
  if (values.phone !== undefined && !tryNormalizeMsisdn(values.phone).ok)
    throw new CliUsageError(`--phone must be a phone number, got "${values.phone}"`);
  const headers: Record<string, string> = {};
  for (const header of values.header ?? []) {
    const colon = header.indexOf(':');
    if (colon <= 0) throw new CliUsageError(`--header must be "Name: value", got "${header}"`);
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  const options: TriggerOptions = {
    kind,
    url: urlArg,
    reference: values.reference,
    checkoutId: values['checkout-id'],
    amount: amountOption(values.amount),
    sandboxUrl: values.sandbox === undefined ? undefined : urlOption('--sandbox', values.sandbox).origin,
    markPaid: values['mark-paid'] ?? false,
    outcome,
    phone: values.phone,
    channel: values.channel,
    forge,
    sessionId: values['session-id'],
    orderId: values['order-id'],
    serviceStatus: values['service-status'],
    copies: intOption('copies', values.copies, 1, 1000) ?? (kind === 'checkout-duplicate' ? 2 : 1),
    path: values.path,
    headers,
    timeoutMs: intOption('timeout', values.timeout, 1, 600_000),
    json: values.json ?? false,
    dryRun: values['dry-run'] ?? false,
    noColor: values['no-color'] ?? false,
  };
  if (kind === 'checkout-duplicate' && options.copies < 2)
    throw new CliUsageError('checkout-duplicate needs --copies of at least 2');
  const isCheckout = kind.startsWith('checkout');
  if (isCheckout) {
    const forgingUnknown = kind === 'checkout-forged' && forge === 'unknown-reference';
    if (!forgingUnknown && !options.reference)
      throw new CliUsageError(`${kind} needs --reference (the invoice's ClientReference)`);
    if (options.markPaid) {
      if (!options.sandboxUrl)
        throw new CliUsageError('--mark-paid needs --sandbox (the sandbox that holds the invoice)');
      if (forgingUnknown)
        throw new CliUsageError('--mark-paid needs an invoice; --forge unknown-reference names none');
      if (outcome !== 'paid') throw new CliUsageError('--mark-paid goes with --outcome paid');
    }
    if (!options.sandboxUrl) {
      const valid = kind !== 'checkout-forged';
      if (valid && options.checkoutId === undefined)
        throw new CliUsageError(
          `${kind} needs --checkout-id (or --sandbox to read it): a callback with another checkout id is rejected`,
        );
      if (valid && options.amount === undefined)
        throw new CliUsageError(`${kind} needs --amount (or --sandbox to read it)`);
      if (kind === 'checkout-forged' && forge === 'wrong-amount' && options.amount === undefined)
        throw new CliUsageError(
          'checkout-forged --forge wrong-amount needs --amount (the wrong amount to claim) or --sandbox',
        );
      if (kind === 'checkout-forged' && forge === 'wrong-checkout-id' && options.amount === undefined)
        throw new CliUsageError(
          "checkout-forged --forge wrong-checkout-id needs --amount (the invoice's) or --sandbox",
        );
    }
  } else {
    for (const name of ['reference', 'checkout-id', 'outcome', 'channel', 'phone'] as const) {
      if (values[name] !== undefined)
        throw new CliUsageError(`--${name} is a checkout option; ${kind} takes --session-id and --order-id`);
    }
    if (kind !== 'fulfillment') {
      for (const name of ['amount', 'sandbox', 'mark-paid'] as const) {
        if (values[name] !== undefined)
          throw new CliUsageError(
            kind === 'fulfillment-forged'
              ? `--${name} records a payment; fulfillment-forged sends a request nobody paid for`
              : `--${name} does not go with ${kind}`,
          );
      }
    }
    if (options.markPaid && !options.sandboxUrl)
      throw new CliUsageError(
        '--mark-paid needs --sandbox (the sandbox the app asks for the payment status)',
      );
    if ((options.sandboxUrl || options.amount !== undefined) && !options.markPaid)
      throw new CliUsageError('--sandbox and --amount go with --mark-paid for a fulfillment request');
    if (!options.sessionId)
      throw new CliUsageError(
        `${kind} needs --session-id (the SessionId of a session that ended in AddToCart)`,
      );
    if (kind === 'fulfillment-callback' && !options.orderId)
      throw new CliUsageError('fulfillment-callback needs --order-id');
  }
  if (kind !== 'fulfillment-callback' && values['service-status'] !== undefined)
    throw new CliUsageError('--service-status goes with fulfillment-callback');
  return { help: false, options };
}

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

async function invoiceFromSandbox(
  sandboxUrl: string,
  reference: string,
  timeoutMs: number,
): Promise<SandboxInvoice> {
  let res: Response;
  try {
    res = await fetch(`${sandboxUrl}/_sandbox/invoices/${encodeURIComponent(reference)}`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new HubtelNetworkError(`Could not reach the sandbox at ${sandboxUrl}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (res.status === 404)
    throw new HubtelError('HUBTEL_NOT_FOUND', `The sandbox at ${sandboxUrl} has no invoice "${reference}"`);
  if (!res.ok)
    throw new HubtelError(
      'HUBTEL_API_ERROR',
      `The sandbox at ${sandboxUrl} answered HTTP ${res.status} for invoice "${reference}"`,
    );
  return (await res.json()) as SandboxInvoice;
}

export type MarkedPaid = 'marked' | 'already-paid';

/**
 * Marks the invoice paid in the sandbox without sending its callback (`POST
 * /_sandbox/invoices/{ref}/pay` with `deliver: false`), and returns the paid invoice. An invoice
 * that is already paid is fine (running the same command twice to test duplicates).
 */
async function markPaidInSandbox(
  sandboxUrl: string,
  reference: string,
  payer: { phone?: string; channel?: string },
  timeoutMs: number,
): Promise<{ invoice: SandboxInvoice; markedPaid: MarkedPaid }> {
  let res: Response;
  try {
    res = await fetch(`${sandboxUrl}/_sandbox/invoices/${encodeURIComponent(reference)}/pay`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ outcome: 'paid', deliver: false, phone: payer.phone, channel: payer.channel }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new HubtelNetworkError(`Could not reach the sandbox at ${sandboxUrl}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const answer = (await res.json().catch(() => undefined)) as
    { invoice?: SandboxInvoice; message?: string } | undefined;
  if (res.ok && answer?.invoice) return { invoice: answer.invoice, markedPaid: 'marked' };
  if (res.status === 404)
    throw new HubtelError('HUBTEL_NOT_FOUND', `The sandbox at ${sandboxUrl} has no invoice "${reference}"`);
  if (res.status === 409) {
    const invoice = await invoiceFromSandbox(sandboxUrl, reference, timeoutMs);
    if (invoice.state === 'paid') return { invoice, markedPaid: 'already-paid' };
    throw new HubtelError(
      'HUBTEL_API_ERROR',
      `The sandbox at ${sandboxUrl} cannot mark invoice "${reference}" paid: it is ${invoice.state}`,
    );
  }
  throw new HubtelError(
    'HUBTEL_API_ERROR',
    `The sandbox at ${sandboxUrl} refused to mark invoice "${reference}" paid (HTTP ${res.status})${answer?.message ? `: ${answer.message}` : ''}`,
  );
}

function round2(n: number): number {
  return Math.round((n + Number.EPSILON) * 100) / 100;
}

/** Builds the body a trigger sends (reads the sandbox's invoice when told to). */
export async function buildTriggerBody(
  options: TriggerOptions,
): Promise<{ body: unknown; path: string; summary: string; markedPaid?: MarkedPaid }> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (options.kind === 'fulfillment' || options.kind === 'fulfillment-forged') {
    const body = buildFulfillmentRequest({ sessionId: options.sessionId!, orderId: options.orderId });
    let markedPaid: MarkedPaid | undefined;
    // A dry run sends nothing, to the app or to the sandbox.
    if (options.markPaid && !options.dryRun) {
      try {
        await markServicePaidInSandbox(
          options.sandboxUrl!,
          body.SessionId,
          { amount: options.amount, orderId: body.OrderId },
          timeoutMs,
        );
      } catch (err) {
        throw new HubtelNetworkError((err as Error).message, { cause: err });
      }
      markedPaid = 'marked';
    }
    const forged = options.kind === 'fulfillment-forged';
    return {
      body,
      path: TESTING_PATHS.fulfillment,
      summary: `${forged ? 'forged (unpaid) ' : ''}fulfillment request for order ${body.OrderId} of session ${body.SessionId}`,
      ...(markedPaid ? { markedPaid } : {}),
    };
  }
  if (options.kind === 'fulfillment-callback') {
    const body = buildFulfillmentCallback({
      sessionId: options.sessionId!,
      orderId: options.orderId!,
      serviceStatus: options.serviceStatus,
    });
    return {
      body,
      path: TESTING_PATHS.fulfillmentCallback,
      summary: `fulfillment callback (${body.ServiceStatus}) for order ${body.OrderId}`,
    };
  }
  const forgingUnknown = options.kind === 'checkout-forged' && options.forge === 'unknown-reference';
  let invoice: SandboxInvoice | undefined;
  let markedPaid: MarkedPaid | undefined;
  if (options.sandboxUrl && !forgingUnknown) {
    // A dry run sends nothing, to the app or to the sandbox: it only reads the invoice.
    if (options.markPaid && !options.dryRun) {
      ({ invoice, markedPaid } = await markPaidInSandbox(
        options.sandboxUrl,
        options.reference!,
        { phone: options.phone, channel: options.channel },
        timeoutMs,
      ));
    } else {
      invoice = await invoiceFromSandbox(options.sandboxUrl, options.reference!, timeoutMs);
    }
  }
  const realAmount = invoice?.totalAmount ?? options.amount;
  let body;
  let what: string;
  if (options.kind === 'checkout-forged') {
    if (options.forge === 'unknown-reference') {
      body = buildCheckoutCallback({
        clientReference: `forged-${randomHubtelId().slice(0, 16)}`,
        amount: options.amount ?? 1,
        phone: options.phone,
        channel: options.channel,
      });
      what = `forged callback: unknown reference ${body.Data.ClientReference}`;
    } else if (options.forge === 'wrong-amount') {
      const claimed =
        options.amount ?? (realAmount! >= 0.02 ? round2(realAmount! / 2) : round2(realAmount! + 1));
      body = buildCheckoutCallback({
        invoice: invoice ?? undefined,
        clientReference: options.reference,
        checkoutId: options.checkoutId,
        amount: claimed,
        phone: options.phone,
        channel: options.channel,
      });
      what = `forged callback: ${options.reference} claims GHS ${claimed.toFixed(2)}${invoice ? ` (invoiced GHS ${invoice.totalAmount.toFixed(2)})` : ''}`;
    } else {
      body = buildCheckoutCallback({
        invoice: invoice ?? undefined,
        clientReference: options.reference,
        amount: realAmount,
        checkoutId: randomHubtelId(),
        phone: options.phone,
        channel: options.channel,
      });
      what = `forged callback: ${options.reference} with checkout id ${body.Data.CheckoutId}`;
    }
  } else {
    body = buildCheckoutCallback({
      invoice: invoice ?? undefined,
      clientReference: options.reference,
      checkoutId: options.checkoutId,
      amount: options.amount,
      outcome: options.outcome,
      phone: options.phone,
      channel: options.channel,
    });
    what = `checkout callback (${options.outcome}) for ${body.Data.ClientReference}: GHS ${body.Data.Amount.toFixed(2)}, checkout ${body.Data.CheckoutId}`;
  }
  return { body, path: TESTING_PATHS.checkoutCallback, summary: what, markedPaid };
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
    if (err instanceof CliUsageError) {
      io.stderr.write(`hubtel-trigger: ${err.message}\n\n${TRIGGER_CLI_USAGE}`);
      return EXIT.usage;
    }
    throw err;
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
