import type { LoggerService } from '@nestjs/common';
import { HubtelConfigError, HubtelError } from '../errors/hubtel.errors.js';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import { maskPhoneNumbers } from '../logging/redact.js';
import { echoValue } from '../phone/msisdn.js';

/** Name of the account `forRoot` / `forRootAsync` configure, in every module (and its labels). */
export const HUBTEL_DEFAULT_ACCOUNT = 'default';

/**
 * What an account name may be: lower-case letters, digits, `-` and `_`, at most 64, starting with a
 * letter or digit. Safe in a URL path segment, a metric label, a log context and a store key.
 */
export const HUBTEL_ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** One day: a resolved account kept longer would miss rotated keys for too long. */
export const HUBTEL_MAX_ACCOUNT_CACHE_TTL_MS = 86_400_000;
/**
 * How long an account found by a resolver is kept before it is asked again: long enough that a
 * busy app does not query its merchant database per request, short enough that rotated keys are
 * picked up within minutes.
 */
export const HUBTEL_ACCOUNT_CACHE_TTL_MS = 5 * 60_000;
/** Resolved accounts kept before expired ones are swept on insert. */
const CACHE_SWEEP_SIZE = 1_000;
/**
 * How long a name from a request's path that the resolver knows nothing of is answered 404
 * without asking again: a forger repeating one path costs the merchant's database one query a
 * minute. Calls from the app (`forAccount`) always ask.
 */
export const HUBTEL_UNKNOWN_ACCOUNT_TTL_MS = 60_000;
/**
 * Resolver calls that requests' paths may start in a minute, per instance, for names it never
 * found: a forger making up a new name per request cannot turn callbacks into a flood of database
 * queries. Past it, requests naming such a name are answered 503 (sent again later) until the
 * minute ends; names found before are not counted (HUBTEL_FOUND_ACCOUNT_TTL_MS).
 */
export const HUBTEL_REQUEST_LOOKUPS_PER_MINUTE = 600;
/** Unknown names remembered at most; the oldest gives way (a flood of made-up names stays bounded). */
const UNKNOWN_NAMES_KEPT = 10_000;
/**
 * How long a name the resolver found stays known to exist after it was last found (longer than
 * any cache TTL): its expired entry is served while it is asked again in the background, and when
 * the entry is gone its look-up is not counted in `requestLookupsPerMinute`. Made-up names never
 * get here, so a flood of them cannot lock out a real account's customers.
 */
export const HUBTEL_FOUND_ACCOUNT_TTL_MS = 86_400_000;
/** Names found remembered at most (only real accounts get here; the oldest gives way). */
const FOUND_NAMES_KEPT = 100_000;
/** After a background refresh failed (the database down), the expired entry is served this long before asking again. */
const REFRESH_RETRY_MS = 10_000;

/**
 * Where the accounts known only at run time come from (a database of merchants): `resolve` gets a
 * name and answers the account's options (as `registerAccount` takes them, without `name`), or
 * undefined when there is no such account.
 */
export interface HubtelAccountResolver<O> {
  resolve: (name: string) => Promise<O | undefined> | O | undefined;
  /** How long a found account is kept (default 5 minutes, 0 keeps nothing, at most a day). */
  cacheTtlMs?: number;
  /**
   * How long a name from a callback's path that `resolve` does not know is answered 404 without
   * asking again (default 1 minute, 0 asks every time, at most a day). Calls from your code
   * (`forAccount`) always ask.
   */
  unknownTtlMs?: number;
  /**
   * Calls of `resolve` that callbacks' paths may start in a minute, per instance, for names it
   * never found (default 600); past it, a callback naming such a name is answered 503 until the
   * minute ends. A name found in the last day is served from its entry (refreshed in the
   * background once `cacheTtlMs` passed) or looked up outside this budget.
   */
  requestLookupsPerMinute?: number;
}

/** `HubtelAccountResolver` after validation. */
export interface ResolvedAccountResolver<O = unknown> {
  resolve: HubtelAccountResolver<O>['resolve'];
  cacheTtlMs: number;
  unknownTtlMs: number;
  requestLookupsPerMinute: number;
}

/**
 * A request's path named an account the resolver never found (on this instance, in the last day),
 * and this instance's budget of resolver calls started by requests
 * (`accounts.requestLookupsPerMinute`) is spent for this minute. Answered 503: the request may
 * come again.
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
 * A call named an account that no way knows: not `default`, not registered, and unknown to the
 * module's resolver when it has one. Nothing was sent or changed. `knownAccounts` lists the names
 * configured in code or the environment (not those only the resolver knows).
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
    return {
      ...super.toJSON(),
      area: this.area,
      account: this.account,
      knownAccounts: [...this.knownAccounts],
    };
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

/** Checks an `accounts: { resolve, cacheTtlMs? }` option (under `scope`). */
export function resolveAccountResolver<O>(
  value: unknown,
  scope: string,
): ResolvedAccountResolver<O> | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new HubtelConfigError(`${scope}.accounts`, 'must be an object { resolve, cacheTtlMs? }');
  const { resolve, cacheTtlMs } = value as Record<string, unknown>;
  if (typeof resolve !== 'function')
    throw new HubtelConfigError(
      `${scope}.accounts.resolve`,
      'must be a function (name) => the account options, or undefined for an unknown name',
    );
  const { unknownTtlMs, requestLookupsPerMinute } = value as Record<string, unknown>;
  const max = HUBTEL_MAX_ACCOUNT_CACHE_TTL_MS;
  return {
    resolve: resolve as HubtelAccountResolver<O>['resolve'],
    cacheTtlMs: wholeNumber(cacheTtlMs, `${scope}.accounts.cacheTtlMs`, 0, max, HUBTEL_ACCOUNT_CACHE_TTL_MS),
    unknownTtlMs: wholeNumber(
      unknownTtlMs,
      `${scope}.accounts.unknownTtlMs`,
      0,
      max,
      HUBTEL_UNKNOWN_ACCOUNT_TTL_MS,
    ),
    requestLookupsPerMinute: wholeNumber(
      requestLookupsPerMinute,
      `${scope}.accounts.requestLookupsPerMinute`,
      1,
      100_000,
      HUBTEL_REQUEST_LOOKUPS_PER_MINUTE,
    ),
  };
}

function wholeNumber(value: unknown, option: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new HubtelConfigError(option, `must be a whole number from ${min} to ${max}`);
  return value;
}

/** What the module of the default account hands the registry: named accounts are built from it. */
export interface DefaultAccount<T> {
  account: T;
  /** Builds a named account from its own options over the default's (throws HubtelConfigError). */
  build: (name: string, overrides: unknown) => T;
  resolver?: ResolvedAccountResolver;
}

interface Registration<T> {
  overrides: unknown;
  /** To tell a registration imported twice (fine) from two different ones under one name. */
  fingerprint: string;
  account?: T;
}

interface CachedAccount<T> {
  account: Promise<T>;
  /**
   * Infinity while the resolver runs: concurrent first uses share its one call. Past it, a found
   * account is still served while `refresh` asks the resolver again.
   */
  expiresAt: number;
  /** Whether `account` was found (an entry still resolving has nothing to serve while refreshed). */
  found?: boolean;
  refreshing?: boolean;
}

/**
 * The method a module's accounts provider has when its named accounts call the platform through
 * transports of their own (not providers): health checks reach each account's APIs through it.
 */
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

/**
 * One area's accounts in an application: the default one (forRoot), those registered by name
 * (registerAccount), and those the optional resolver finds at run time (cached). A registered
 * account is built once, at bootstrap (`buildRegistered`), so a bad option stops the app; a
 * resolved one at first use. An unknown name, a resolver that throws or answers options that do
 * not pass the check is not cached: the next call asks again.
 */
export class AccountRegistry<T> implements HasAccountTransports {
  private defaults?: DefaultAccount<T>;
  private readonly registered = new Map<string, Registration<T>>();
  private readonly resolved = new Map<string, CachedAccount<T>>();
  /** Names from requests' paths the resolver did not know, with when to ask again (oldest first). */
  private readonly unknownFromRequests = new Map<string, number>();
  /** Names the resolver found, with until when they are known to exist (oldest first). */
  private readonly found = new Map<string, number>();
  /**
   * Resolver calls started by requests for names never found, in the minute since `since`;
   * `refused` counts the requests refused in it, `episode` whether the previous minute refused
   * some too (one warning per run of refusing minutes).
   */
  private lookups = { since: -Infinity, count: 0, refused: 0, episode: false };

  /**
   * @param area names the accounts in errors (`sms` gives `sms[north].clientId`).
   * @param forRoot what configures the default account (`SmsModule.forRoot`), for errors.
   */
  constructor(
    readonly area: string,
    private readonly forRoot: string,
    /** The area's own subclass of the error (SmsUnknownAccountError...). */
    private readonly unknownError: (
      account: string,
      knownAccounts: string[],
      resolver: boolean,
    ) => HubtelUnknownAccountError = (account, known, resolver) =>
      new HubtelUnknownAccountError(area, account, known, resolver),
    /** Where the budget's refusals (once per episode) and failed refreshes are told. */
    private readonly logger: Pick<LoggerService, 'warn'> = new HubtelLogger('Hubtel'),
  ) {}

  /** Called by forRoot's module; a second forRoot in one application does not replace the first. */
  attachDefault(defaults: DefaultAccount<T>): this {
    this.defaults ??= defaults;
    return this;
  }

  /** Called by a registerAccount module. */
  register(name: string, overrides: unknown): void {
    checkAccountName(name, `${this.area}.registerAccount.name`, this.forRoot);
    const fingerprint = fingerprintOf(overrides);
    const existing = this.registered.get(name);
    if (existing && existing.fingerprint !== fingerprint)
      throw new HubtelConfigError(`${this.area}[${name}]`, 'is registered twice, with different options');
    if (!existing) this.registered.set(name, { overrides, fingerprint });
  }

  /** Builds every registered account now, so a bad option stops the application at bootstrap. */
  buildRegistered(): void {
    for (const name of this.registered.keys()) this.registeredAccount(name);
  }

  /** A module's registry (a provider) builds its registered accounts at bootstrap. */
  onModuleInit(): void {
    this.buildRegistered();
  }

  /** The accounts built so far with a transport of their own (health checks probe each). */
  async [ACCOUNT_TRANSPORTS](): Promise<AccountTransport[]> {
    return [...(await this.built())].flatMap(([account, built]) => {
      const transport = this.transportOf(built);
      return transport ? [{ account, transport }] : [];
    });
  }

  /** An account's own transport: its `transport` (the default account's is the module's provider). */
  protected transportOf(account: T): unknown {
    return (account as { transport?: unknown }).transport;
  }

  /** Account `name`, or HubtelUnknownAccountError. */
  async get(name: unknown): Promise<T> {
    const known = this.find(name);
    if (known) return known;
    const resolver = this.defaults?.resolver;
    if (!resolver || typeof name !== 'string' || !HUBTEL_ACCOUNT_NAME.test(name)) throw this.unknown(name);
    return this.resolvedAccount(name, resolver);
  }

  /**
   * Account `name` taken from a request's path: as `get`, but a name the resolver did not know is
   * remembered (`unknownTtlMs`), and the resolver calls requests start for names it never found
   * are bounded (`requestLookupsPerMinute`, else HubtelAccountLookupLimitError, told once per
   * episode): made-up names in forged callbacks cost the merchant's database little, and cannot
   * hold back an account found before.
   */
  async forRequest(name: string): Promise<T> {
    const known = this.find(name);
    if (known) return known;
    const resolver = this.defaults?.resolver;
    if (!resolver || !HUBTEL_ACCOUNT_NAME.test(name)) throw this.unknown(name);
    const now = Date.now();
    const cached = this.resolved.get(name);
    if (cached && (cached.expiresAt > now || this.wasFound(name, now)))
      return this.resolvedAccount(name, resolver);
    if ((this.unknownFromRequests.get(name) ?? 0) > now) throw this.unknown(name);
    if (!this.wasFound(name, now)) this.spendLookup(resolver, now);
    try {
      return await this.resolvedAccount(name, resolver);
    } catch (error) {
      if (error instanceof HubtelUnknownAccountError && resolver.unknownTtlMs > 0) {
        this.unknownFromRequests.delete(name);
        if (this.unknownFromRequests.size >= UNKNOWN_NAMES_KEPT)
          this.unknownFromRequests.delete(this.unknownFromRequests.keys().next().value!);
        this.unknownFromRequests.set(name, Date.now() + resolver.unknownTtlMs);
      }
      throw error;
    }
  }

  /**
   * Whether `name` is an account this instance knows without asking: the default, a registered
   * one, or one the resolver found in the last day. Such a name is safe as a metric label.
   */
  knows(name: string): boolean {
    return name === HUBTEL_DEFAULT_ACCOUNT || this.registered.has(name) || this.wasFound(name, Date.now());
  }

  /** Account `name` when it is the default or a registered one (no resolver call). */
  find(name: unknown): T | undefined {
    if (typeof name !== 'string') return undefined;
    if (name === HUBTEL_DEFAULT_ACCOUNT) return this.requireDefaults(name).account;
    return this.registered.has(name) ? this.registeredAccount(name) : undefined;
  }

  /** The default account (forRoot's). */
  get default(): T {
    return this.requireDefaults(HUBTEL_DEFAULT_ACCOUNT).account;
  }

  /** Whether a resolver may know more names than `names`. */
  get resolves(): boolean {
    return this.defaults?.resolver !== undefined;
  }

  /** Names configured in code or the environment: `default` first, then the registered ones. */
  get names(): string[] {
    return [HUBTEL_DEFAULT_ACCOUNT, ...[...this.registered.keys()].sort()];
  }

  /** The accounts built so far: the default, the registered, and the resolved still cached. */
  async built(): Promise<Map<string, T>> {
    const accounts = new Map<string, T>([[HUBTEL_DEFAULT_ACCOUNT, this.default]]);
    for (const name of this.registered.keys()) accounts.set(name, this.registeredAccount(name));
    const now = Date.now();
    for (const [name, entry] of this.resolved) {
      if (entry.expiresAt <= now && !(entry.found && this.wasFound(name, now))) continue;
      const account = await entry.account.catch(() => undefined);
      if (account !== undefined) accounts.set(name, account);
    }
    return accounts;
  }

  unknown(name: unknown): HubtelUnknownAccountError {
    return this.unknownError(echoValue(name), this.names, this.resolves);
  }

  private registeredAccount(name: string): T {
    const registration = this.registered.get(name)!;
    registration.account ??= this.requireDefaults(name).build(name, registration.overrides);
    return registration.account;
  }

  /**
   * Counts one look-up of a name never found in this minute's budget, or throws
   * HubtelAccountLookupLimitError (the first refusal of an episode is logged).
   */
  private spendLookup(resolver: ResolvedAccountResolver, now: number): void {
    // A window from its first look-up (not the clock's minute): a burst is never split in two.
    if (now - this.lookups.since >= 60_000) {
      // An episode goes on while each minute refuses some; a minute after a quiet one starts anew.
      const episode = this.lookups.refused > 0 && now - this.lookups.since < 120_000;
      this.lookups = { since: now, count: 0, refused: 0, episode };
    }
    if (this.lookups.count < resolver.requestLookupsPerMinute) {
      this.lookups.count++;
      return;
    }
    if (this.lookups.refused++ === 0 && !this.lookups.episode)
      this.logger.warn(
        `${this.area}: requests named ${resolver.requestLookupsPerMinute} accounts the resolver never found within a minute ` +
          `(accounts.requestLookupsPerMinute): other such names are answered 503 until ${new Date(this.lookups.since + 60_000).toISOString()}, ` +
          'accounts found before are still served. Names made up in forged callbacks, or many new merchants at once?',
      );
    throw new HubtelAccountLookupLimitError(this.area, resolver.requestLookupsPerMinute);
  }

  private wasFound(name: string, now: number): boolean {
    return (this.found.get(name) ?? 0) > now;
  }

  /**
   * The cached account, else the resolver's answer (concurrent first uses share one call). An
   * expired entry of an account found is served while the resolver is asked again in the
   * background; the answer replaces it (or, when the account is gone, removes it).
   */
  private resolvedAccount(name: string, resolver: ResolvedAccountResolver): Promise<T> {
    const now = Date.now();
    const cached = this.resolved.get(name);
    if (cached && cached.expiresAt > now) return cached.account;
    if (cached?.found && this.wasFound(name, now)) {
      if (!cached.refreshing) this.refresh(name, cached, resolver);
      return cached.account;
    }
    if (this.resolved.size >= CACHE_SWEEP_SIZE) this.sweep(now);
    const entry: CachedAccount<T> = {
      expiresAt: Number.POSITIVE_INFINITY,
      account: this.lookUp(name, resolver),
    };
    this.resolved.set(name, entry);
    void entry.account.then(
      () => this.keep(name, entry, resolver),
      // Not cached: the next call asks again (a merchant added a moment ago, a database back up).
      () => this.resolved.get(name) === entry && this.resolved.delete(name),
    );
    return entry.account;
  }

  private refresh(name: string, stale: CachedAccount<T>, resolver: ResolvedAccountResolver): void {
    stale.refreshing = true;
    const account = this.lookUp(name, resolver);
    void account.then(
      () => {
        if (this.resolved.get(name) !== stale) return;
        const entry: CachedAccount<T> = { account, expiresAt: Number.POSITIVE_INFINITY };
        this.resolved.set(name, entry);
        this.keep(name, entry, resolver);
      },
      (error: unknown) => {
        stale.refreshing = false;
        if (error instanceof HubtelUnknownAccountError) {
          // The account is gone: its name is no longer known, the next request asks.
          this.found.delete(name);
          if (this.resolved.get(name) === stale) this.resolved.delete(name);
        } else {
          const retryMs = Math.min(resolver.cacheTtlMs, REFRESH_RETRY_MS);
          stale.expiresAt = Date.now() + retryMs;
          this.logger.warn(
            `${this.area}[${name}]: asking accounts.resolve again failed (${maskPhoneNumbers(error instanceof Error ? error.message : String(error))}); ` +
              `its last options are still served, asked again in ${retryMs} ms`,
          );
        }
      },
    );
  }

  private lookUp(name: string, resolver: ResolvedAccountResolver): Promise<T> {
    return (async () => {
      const overrides = await resolver.resolve(name);
      if (overrides === undefined || overrides === null) throw this.unknown(name);
      return this.requireDefaults(name).build(name, overrides);
    })();
  }

  /** A found account: cached for `cacheTtlMs` (none when 0), its name known for a day. */
  private keep(name: string, entry: CachedAccount<T>, resolver: ResolvedAccountResolver): void {
    const now = Date.now();
    entry.found = true;
    entry.expiresAt = now + resolver.cacheTtlMs;
    if (resolver.cacheTtlMs === 0 && this.resolved.get(name) === entry) this.resolved.delete(name);
    this.unknownFromRequests.delete(name); // found by a call from the app meanwhile
    this.found.delete(name);
    if (this.found.size >= FOUND_NAMES_KEPT) this.found.delete(this.found.keys().next().value!);
    this.found.set(name, now + Math.max(HUBTEL_FOUND_ACCOUNT_TTL_MS, resolver.cacheTtlMs));
  }

  /**
   * Drops the expired entries (so at most about CACHE_SWEEP_SIZE accounts are held): a name
   * found stays known, and its next use waits for the resolver outside the budget.
   */
  private sweep(now: number): void {
    for (const [name, entry] of this.resolved) if (entry.expiresAt <= now) this.resolved.delete(name);
  }

  private requireDefaults(name: string): DefaultAccount<T> {
    if (!this.defaults)
      throw new HubtelConfigError(
        `${this.area}[${name}]`,
        `needs ${this.forRoot} or ${this.forRoot}Async in the application: the default account it inherits its options from`,
      );
    return this.defaults;
  }
}

/** Options as stable text (keys sorted, functions by presence): equal options, equal text. */
function fingerprintOf(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'function') return '[function]';
    if (v !== null && typeof v === 'object' && !Array.isArray(v))
      return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)));
    return v;
  });
}
