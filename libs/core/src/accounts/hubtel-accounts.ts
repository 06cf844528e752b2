import type { LoggerService } from '@nestjs/common';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import { describeError } from '../logging/redact.js';
import { echoValue } from '../phone/msisdn.js';
import { HUBTEL_ACCOUNT_NAME, HUBTEL_DEFAULT_ACCOUNT } from '../hubtel.constants.js';
import {
  HUBTEL_FOUND_ACCOUNT_TTL_MS,
  ResolvedAccountResolver,
  HubtelAccountLookupLimitError,
  HubtelUnknownAccountError,
  DefaultAccount,
  ACCOUNT_TRANSPORTS,
  AccountTransport,
  HasAccountTransports,
} from './hubtel-accounts.resolver.js';

/** Resolved accounts kept before expired ones are swept on insert. */
const CACHE_SWEEP_SIZE = 1_000;

/** Unknown names remembered at most; the oldest gives way (a flood of made-up names stays bounded). */
const UNKNOWN_NAMES_KEPT = 10_000;

/** Names found remembered at most (only real accounts get here; the oldest gives way). */
const FOUND_NAMES_KEPT = 100_000;

/** After a background refresh failed (the database down), the expired entry is served this long before asking again. */
const REFRESH_RETRY_MS = 10_000;

interface Registration<T> {
  overrides: unknown;
  /** To tell a registration imported twice (fine) from two different ones under one name. */
  fingerprint: string;
  account?: T;
}

interface CachedAccount<T> {
  account: Promise<T>;
  /** Infinity while the resolver runs (first uses share its call); past it, served while refreshed. */
  expiresAt: number;
  /** Whether `account` was found (an entry still resolving has nothing to serve while refreshed). */
  found?: boolean;
  refreshing?: boolean;
}

/**
 * One area's accounts: the default (forRoot), those registered by name (built at bootstrap, so a bad
 * option stops the app) and those the optional resolver finds at first use (cached). An unknown name,
 * a resolver that throws or answers bad options, is not cached: the next call asks again.
 */
export class AccountRegistry<T> implements HasAccountTransports {
  private defaults?: DefaultAccount<T>;
  private readonly registered = new Map<string, Registration<T>>();
  private readonly resolved = new Map<string, CachedAccount<T>>();
  /** Names from requests' paths the resolver did not know, with when to ask again (oldest first). */
  private readonly unknownFromRequests = new Map<string, number>();
  /** Names the resolver found, with until when they are known to exist (oldest first). */
  private readonly found = new Map<string, number>();
  /** Resolver calls requests started for names never found since `since`, refusals, one warning per episode. */
  private lookups = { since: -Infinity, count: 0, refused: 0, episode: false };

  /** `area` names the accounts in errors (`sms[north]`), `forRoot` what configures the default. */
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

  /** Called by a registerAccount module, with the name registerAccount(Async) checked. */
  register(name: string, overrides: unknown): void {
    const fingerprint = fingerprintOf(overrides);
    const existing = this.registered.get(name);
    if (existing && existing.fingerprint !== fingerprint)
      throw new HubtelConfigError(`${this.area}[${name}]`, 'is registered twice, with different options');
    if (!existing) this.registered.set(name, { overrides, fingerprint });
  }

  /** Builds every registered account now, so a bad option stops the application at bootstrap. */
  onModuleInit(): void {
    for (const name of this.registered.keys()) this.registeredAccount(name);
  }

  /** Accounts built so far (default, registered, resolved still cached) with a transport, for health. */
  async [ACCOUNT_TRANSPORTS](): Promise<AccountTransport[]> {
    const accounts = new Map<string, T>([[HUBTEL_DEFAULT_ACCOUNT, this.default]]);
    for (const name of this.registered.keys()) accounts.set(name, this.registeredAccount(name));
    const now = Date.now();
    for (const [name, entry] of this.resolved) {
      if (entry.expiresAt <= now && !(entry.found && this.wasFound(name, now))) continue;
      const account = await entry.account.catch(() => undefined);
      if (account !== undefined) accounts.set(name, account);
    }
    return [...accounts].flatMap(([account, built]) => {
      const { transport } = built as { transport?: unknown };
      return transport ? [{ account, transport }] : [];
    });
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
   * As `get`, for a name from a request's path: one unknown is remembered (`unknownTtlMs`) and look-ups
   * of names never found are bounded (`requestLookupsPerMinute`, else HubtelAccountLookupLimitError):
   * forged callbacks' made-up names cost the database little, and cannot hold back a found account.
   */
  async forRequest(name: string): Promise<T> {
    const resolver = this.defaults?.resolver;
    if (!resolver || !HUBTEL_ACCOUNT_NAME.test(name) || this.find(name)) return this.get(name);
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

  /** Whether `name` is known without asking (default, registered, found in the last day): a safe metric label. */
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

  /** Its error names the accounts configured in code or the environment: `default`, then the registered. */
  unknown(name: unknown): HubtelUnknownAccountError {
    const names = [HUBTEL_DEFAULT_ACCOUNT, ...[...this.registered.keys()].sort()];
    return this.unknownError(echoValue(name), names, this.defaults?.resolver !== undefined);
  }

  private registeredAccount(name: string): T {
    const registration = this.registered.get(name)!;
    registration.account ??= this.requireDefaults(name).build(name, registration.overrides);
    return registration.account;
  }

  /** Counts one look-up of a never-found name, or throws HubtelAccountLookupLimitError (logged once). */
  private spendLookup(resolver: ResolvedAccountResolver, now: number): void {
    // A window from its first look-up (not the clock's minute): a burst is never split in two.
    if (now - this.lookups.since >= 60_000) {
      // An episode goes on while each minute refuses some; a minute after a quiet one starts anew.
      const episode = this.lookups.refused > 0 && now - this.lookups.since < 120_000;
      this.lookups = { since: now, count: 0, refused: 0, episode };
    }
    if (this.lookups.count < resolver.requestLookupsPerMinute) return void this.lookups.count++;
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
   * The cached account, else the resolver's answer (concurrent first uses share one call). A found
   * account's expired entry is served while refreshed in the background (removed if the account is gone).
   */
  private resolvedAccount(name: string, resolver: ResolvedAccountResolver): Promise<T> {
    const now = Date.now();
    const cached = this.resolved.get(name);
    if (cached && cached.expiresAt > now) return cached.account;
    if (cached?.found && this.wasFound(name, now)) {
      if (!cached.refreshing) this.refresh(name, cached, resolver);
      return cached.account;
    }
    // The expired entries go (about CACHE_SWEEP_SIZE held at most); a found name stays known.
    if (this.resolved.size >= CACHE_SWEEP_SIZE)
      for (const [key, entry] of this.resolved) if (entry.expiresAt <= now) this.resolved.delete(key);
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
            `${this.area}[${name}]: asking accounts.resolve again failed (${describeError(error)}); ` +
              `its last options are still served, asked again in ${retryMs} ms`,
          );
        }
      },
    );
  }

  private async lookUp(name: string, resolver: ResolvedAccountResolver): Promise<T> {
    const overrides = await resolver.resolve(name);
    if (overrides === undefined || overrides === null) throw this.unknown(name);
    return this.requireDefaults(name).build(name, overrides);
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
    this.found.set(name, now + HUBTEL_FOUND_ACCOUNT_TTL_MS);
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
