import { HubtelConfigError, HubtelError } from '../errors/hubtel.errors.js';
import { HUBTEL_ACCOUNT_NAME, HUBTEL_DEFAULT_ACCOUNT } from '../hubtel.constants.js';
import { HubtelOption } from '../options/hubtel-option.decorator.js';
import { echoValue } from '../phone/msisdn.js';

/** The log context of an account's parts: `HubtelCheckout`, `HubtelCheckout[north]`. */
export function accountLoggerContext(context: string, account: string): string {
  return account === HUBTEL_DEFAULT_ACCOUNT ? context : `${context}[${account}]`;
}

/**
 * A day: the longest a resolver's cache keeps an account, and how long a found name stays known (served
 * while refreshed, outside `requestLookupsPerMinute`): made-up names cannot lock out a real account.
 */
export const HUBTEL_FOUND_ACCOUNT_TTL_MS = 86_400_000;

/** A HubtelAccountResolver's limits, declared (`resolve` is checked in code). */
export class HubtelAccountResolverLimits {
  /**
   * How long a found account is kept (default 5 minutes, 0 keeps nothing, at most a day): a busy
   * app does not query its database per request, and rotated keys arrive within minutes.
   */
  @HubtelOption({ int: [0, HUBTEL_FOUND_ACCOUNT_TTL_MS], default: 5 * 60_000 })
  cacheTtlMs?: number;

  /**
   * How long a name from a callback's path that `resolve` does not know is answered 404 without
   * asking again (default 1 minute, 0 asks every time, at most a day): a forger repeating one
   * made-up path costs a query a minute. Calls from your code (`forAccount`) always ask.
   */
  @HubtelOption({ int: [0, HUBTEL_FOUND_ACCOUNT_TTL_MS], default: 60_000 })
  unknownTtlMs?: number;

  /**
   * Calls of `resolve` that callbacks' paths may start in a minute, per instance, for names it never
   * found (default 600: made-up names cannot flood the database); past it, such a callback is answered
   * 503 until the minute ends. A name found in the last day is served outside this budget.
   */
  @HubtelOption({ int: [1, 100_000], default: 600 })
  requestLookupsPerMinute?: number;
}

/**
 * Where accounts known only at run time come from (a database of merchants): `resolve` answers a name's
 * options (as `registerAccount` takes them, without `name`), or undefined for none.
 */
export interface HubtelAccountResolver<O> extends HubtelAccountResolverLimits {
  resolve: (name: string) => Promise<O | undefined> | O | undefined;
}

/** `HubtelAccountResolver` after validation. */
export type ResolvedAccountResolver<O = unknown> = Required<HubtelAccountResolver<O>>;

/**
 * A request's path named an account the resolver never found (here, in the last day) and this minute's
 * `accounts.requestLookupsPerMinute` is spent. Answered 503: the request may come again.
 */
export class HubtelAccountLookupLimitError extends HubtelError {
  constructor(
    readonly area: string,
    readonly perMinute: number,
  ) {
    super(
      'HUBTEL_ACCOUNT_LOOKUPS_LIMITED',
      `${area}: requests already started ${perMinute} account look-ups this minute (accounts.requestLookupsPerMinute); try again later`,
    );
  }
}

/**
 * A call named an account nothing knows (not `default`, registered, or found by the resolver): nothing
 * was sent or changed. `knownAccounts`: the names configured in code or the environment.
 */
export class HubtelUnknownAccountError extends HubtelError {
  constructor(
    /** The area whose accounts were asked (`sms`, `checkout`, `service-app`). */
    readonly area: string,
    /** The name asked for, quoted and cut to 40 characters when it came from elsewhere. */
    readonly account: string,
    readonly knownAccounts: readonly string[],
    resolver: boolean,
  ) {
    super(
      'HUBTEL_UNKNOWN_ACCOUNT',
      `No ${area} account named ${account}: the accounts are ${knownAccounts.join(', ')}` +
        (resolver ? ', and those accounts.resolve finds (it knows none by that name)' : ''),
    );
  }

  override toJSON(): Record<string, unknown> {
    const { area, account, knownAccounts } = this;
    return { ...super.toJSON(), area, account, knownAccounts: [...knownAccounts] };
  }
}

/** A HubtelConfigError naming `option` unless `name` can be an account name other than `default`. */
export function checkAccountName(name: unknown, option: string, forRoot: string): asserts name is string {
  if (typeof name !== 'string' || !HUBTEL_ACCOUNT_NAME.test(name))
    throw new HubtelConfigError(
      option,
      `${echoValue(name)} is not an account name: lower-case letters, digits, "-" and "_", at most 64, starting with a letter or digit`,
    );
  if (name === HUBTEL_DEFAULT_ACCOUNT)
    throw new HubtelConfigError(
      option,
      `"default" is the account ${forRoot} configures: give this account another name`,
    );
}

/** What the module of the default account hands the registry: named accounts are built from it. */
export interface DefaultAccount<T> {
  account: T;
  /** Builds a named account from its own options over the default's (throws HubtelConfigError). */
  build: (name: string, overrides: unknown) => T;
  resolver?: ResolvedAccountResolver;
}

/** How health checks reach the transports of a module's accounts (named ones are not providers). */
export const ACCOUNT_TRANSPORTS = Symbol.for('nestjs-hubtel:account-transports');

/** One transport of one account (`default`, or a configured name). */
export interface AccountTransport<X = unknown> {
  account: string;
  transport: X;
}

/** A provider exposing its accounts' transports (see ACCOUNT_TRANSPORTS). */
export interface HasAccountTransports<X = unknown> {
  [ACCOUNT_TRANSPORTS](): Promise<Array<AccountTransport<X>>>;
}

export function hasAccountTransports(value: unknown): value is HasAccountTransports {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as Partial<HasAccountTransports>)[ACCOUNT_TRANSPORTS] === 'function'
  );
}
