// The `hubtel-trigger` command line parsed into TriggerOptions, refusing every combination that
// could not send what the user meant.
import {
  HUBTEL_ACCOUNT_NAME,
  HUBTEL_DEFAULT_ACCOUNT,
  serviceAppChannel,
  tryNormalizeMsisdn,
} from '#light/core';
import type { ServiceAppChannel } from '#internal';
import { TESTING_DEFAULTS } from '../testing.constants.js';
import { CliUsageError, intOption, parseCliArgs, urlOption } from '#light/sandbox';
import { sessionOptions } from './cli.support.js';
import { FORGERIES, TRIGGER_KINDS, TRIGGER_OPTIONS, type Forgery, type TriggerKind } from './cli.usage.js';

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
  return { chargeBearer: bearer as TriggerOptions['chargeBearer'], currency };
}

export function parseTriggerCliArgs(
  argv: string[],
): { help: true } | { help: false; options: TriggerOptions } {
  const { values, positionals } = parseCliArgs(argv, TRIGGER_OPTIONS);
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
  if (kind.startsWith('checkout')) {
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
