/**
 * The `hubtel-trigger` command line: kinds, usage, and the parsing into TriggerOptions, refusing
 * every combination that could not send what the user meant.
 */
import { HUBTEL_DEFAULT_ACCOUNT, tryNormalizeMsisdn } from 'nestjs-hubtel';
import { HUBTEL_ACCOUNT_NAME, serviceAppChannel, type ServiceAppChannel } from '#internal';
import { TESTING_DEFAULTS, TESTING_PATHS } from '../testing.constants.js';
import {
  cliOptions,
  CliUsageError,
  intOption,
  parseCliArgs,
  sessionOptions,
  urlOption,
} from './cli.support.js';

export const TRIGGER_KINDS = [
  'checkout',
  'checkout-duplicate',
  'checkout-forged',
  'fulfillment',
  'fulfillment-forged',
  'fulfillment-callback',
  'service-flow',
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
  service-flow          one service-flow request, as the platform sends it on USSD or from the
                        app; on USSD the answer is shown as the phone shows it (Message only) and
                        a screen over the size is flagged; a cart (AddToCart, on USSD Release with
                        an Item) is printed with the fulfillment command that pays it
  dead-letters          list | replay <id>: the jobs an app on Redis gave up on
                        (hubtel-trigger dead-letters --help)

  <url>                 your app's origin (the module's default route is added:
                        ${TESTING_PATHS.checkoutCallback}, ${TESTING_PATHS.fulfillment}, ${TESTING_PATHS.serviceFlow}) or the full endpoint URL

Checkout options:
  --reference <ref>       ClientReference of the invoice (required, except to forge an unknown one)
  --checkout-id <id>      CheckoutId the platform gave the invoice (required for a valid callback)
  --amount <n>            Amount paid (required for a valid callback; the forged amount for wrong-amount)
  --sandbox <url>         a running sandbox to read the invoice's checkout id, amount and payer from
  --mark-paid             with --sandbox: first mark the invoice paid in that sandbox WITHOUT its
                          callback, so the status check confirms the callback this sends; with
                          --amount, the price paid instead of the invoice's (an underpayment)
  --charge-bearer <who>   with --mark-paid: merchant (the charge deducted) or payer (added to what
                          the payer pays: the callback and status check say more than the total)
  --currency <code>       with --mark-paid: the currency the status check reports (default GHS;
                          another one is a payment that needs attention)
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
  --amount <n>            the price recorded with --mark-paid (another than the cart's: a mismatch)
  --charge-bearer <who>   with --mark-paid: merchant or payer (see Checkout options)
  --currency <code>       with --mark-paid: the currency the status check reports (default GHS)
  --service-status <s>    fulfillment-callback only (default success)
Service-flow options:
  --type <type>           Type of the request (default initiation): Response, Release, timeout,
                          query, favorite, or anything else, sent as given
  --message <text>        Message: what the user typed (on USSD, an option's number); empty on initiation
  --session-id <id>       SessionId (default: random; the same id continues a session)
  --operator <name>       Operator (default ${TESTING_DEFAULTS.operator})
  --mobile <msisdn>       Mobile (default ${TESTING_DEFAULTS.phone})
  --service-code <code>   ServiceCode (default ${TESTING_DEFAULTS.serviceCode})
  --channel <ussd|app>    ussd: shows the answer as a USSD phone does and flags a screen over the
                          size (Platform USSD is sent when the operator is not a telco); app: the
                          answer as is (default: ussd for a telco operator, app otherwise)
  --screen-size <n>       USSD screen size in characters (default 182; 70 with a non-GSM character,
                          --unicode-screen-size <n>)
Common:
  --copies <n>            send n identical copies at the same time (default 1; checkout-duplicate 2)
  --path <path>           endpoint path when <url> is an origin (default: the module's route)
  --account <name>        send to a named account's route (the path with /<name> after it), as
                          the platform does for that account's invoices and services
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

Errors print the reason the app, the sandbox or the platform gave (its message and field errors).
Exit codes: 0 every answer was 2xx; 1 an answer was not 2xx, or the sandbox refused (no such
invoice, --mark-paid could not mark or record the payment), or a service-flow answer on USSD was
over the screen size; 2 usage error; 3 the URL (no copy got an answer) or the sandbox could not be
reached.
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
  /** With `markPaid`: who bears the platform's charge on that payment. */
  chargeBearer?: 'merchant' | 'payer';
  /** With `markPaid`: the currency the sandbox's status check reports. */
  currency?: string;
  outcome: 'paid' | 'failed';
  phone?: string;
  channel?: string;
  forge: Forgery;
  sessionId?: string;
  orderId?: string;
  serviceStatus?: string;
  /** The service-flow kind's request and how its answer is shown. */
  serviceFlow?: {
    type: string;
    message?: string;
    operator: string;
    mobile: string;
    serviceCode: string;
    channel: ServiceAppChannel;
    screenSize?: number;
    unicodeScreenSize?: number;
  };
  copies: number;
  path?: string;
  /** A named account: `/<account>` follows the path (`default`: the default route). */
  account?: string;
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

function accountOption(value: string | undefined, kind: TriggerKind, url: string): string | undefined {
  if (value === undefined || value === HUBTEL_DEFAULT_ACCOUNT) return undefined;
  if (!HUBTEL_ACCOUNT_NAME.test(value))
    throw new CliUsageError(
      `--account must be an account name (lower-case letters, digits, - and _), got "${value}"`,
    );
  if (kind === 'fulfillment-callback')
    throw new CliUsageError('--account names a route of your app; fulfillment-callback goes to the platform');
  if (!['', '/'].includes(new URL(url).pathname))
    throw new CliUsageError(
      "--account goes with <url> as your app's origin (a full endpoint URL names its account itself)",
    );
  return value;
}

/** `--charge-bearer` and `--currency`: how the payment --mark-paid records is made. */
function chargeOptions(
  bearer: string | undefined,
  currency: string | undefined,
  markPaid: boolean,
): Pick<TriggerOptions, 'chargeBearer' | 'currency'> {
  if ((bearer !== undefined || currency !== undefined) && !markPaid)
    throw new CliUsageError(
      '--charge-bearer and --currency describe the payment --mark-paid records: add --mark-paid',
    );
  if (bearer !== undefined && bearer !== 'merchant' && bearer !== 'payer')
    throw new CliUsageError(`--charge-bearer must be merchant or payer, got "${bearer}"`);
  if (currency !== undefined && !/^[A-Z]{3}$/.test(currency))
    throw new CliUsageError(`--currency must be a three-letter code such as GHS, got "${currency}"`);
  return {
    ...(bearer === undefined ? {} : { chargeBearer: bearer }),
    ...(currency === undefined ? {} : { currency }),
  };
}

export function parseTriggerCliArgs(argv: string[]): ParsedTriggerCli {
  const parsed = parseCliArgs(argv, {
    ...cliOptions(
      [
        'reference checkout-id amount sandbox charge-bearer currency outcome phone channel forge',
        'session-id order-id service-status type message operator mobile service-code screen-size',
        'unicode-screen-size copies path account timeout',
      ],
      ['mark-paid json dry-run no-color'],
    ),
    header: { type: 'string', short: 'H', multiple: true },
  });
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
    ...chargeOptions(values['charge-bearer'], values.currency, values['mark-paid'] ?? false),
    outcome,
    phone: values.phone,
    channel: values.channel,
    forge,
    sessionId: values['session-id'],
    orderId: values['order-id'],
    serviceStatus: values['service-status'],
    copies: intOption('copies', values.copies, 1, 1000) ?? (kind === 'checkout-duplicate' ? 2 : 1),
    path: values.path,
    account: accountOption(values.account, kind, urlArg),
    headers,
    timeoutMs: intOption('timeout', values.timeout, 1, 600_000),
    json: values.json ?? false,
    dryRun: values['dry-run'] ?? false,
    noColor: values['no-color'] ?? false,
  };
  /** The first of `names` given is refused, `why` says why. */
  const refuse = (names: string, why: (name: string) => string) => {
    const name = names.split(' ').find((n) => values[n as keyof typeof values] !== undefined);
    if (name !== undefined) throw new CliUsageError(why(name));
  };
  if (kind === 'service-flow') {
    refuse(
      'reference checkout-id outcome phone forge order-id amount sandbox mark-paid service-status',
      (name) => `--${name} does not go with service-flow (see its options)`,
    );
    options.serviceFlow = parseServiceFlowOptions(values);
    return { help: false, options };
  }
  refuse(
    'type message operator mobile service-code screen-size unicode-screen-size',
    (name) => `--${name} goes with the service-flow kind`,
  );
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
      if (!valid && forge !== 'unknown-reference' && options.amount === undefined)
        throw new CliUsageError(
          `checkout-forged --forge ${forge} needs --amount (${forge === 'wrong-amount' ? 'the wrong amount to claim' : "the invoice's"}) or --sandbox`,
        );
    }
  } else {
    refuse(
      'reference checkout-id outcome channel phone',
      (name) => `--${name} is a checkout option; ${kind} takes --session-id and --order-id`,
    );
    if (kind !== 'fulfillment')
      refuse('amount sandbox mark-paid', (name) =>
        kind === 'fulfillment-forged'
          ? `--${name} records a payment; fulfillment-forged sends a request nobody paid for`
          : `--${name} does not go with ${kind}`,
      );
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

function parseServiceFlowOptions(
  values: Record<string, unknown>,
): NonNullable<TriggerOptions['serviceFlow']> {
  const str = (name: string) => values[name] as string | undefined;
  if (str('type')?.trim() === '') throw new CliUsageError('--type must not be empty');
  const session = sessionOptions(values as Record<string, string | undefined>, ' for service-flow');
  const operator = str('operator') ?? TESTING_DEFAULTS.operator;
  return {
    type: str('type') ?? 'initiation',
    message: str('message'),
    operator,
    mobile: session.mobile ?? TESTING_DEFAULTS.phone,
    serviceCode: str('service-code') ?? TESTING_DEFAULTS.serviceCode,
    channel: session.channel ?? serviceAppChannel({ Operator: operator }),
    screenSize: intOption('screen-size', str('screen-size'), 10, 10_000),
    unicodeScreenSize: intOption('unicode-screen-size', str('unicode-screen-size'), 10, 10_000),
  };
}
