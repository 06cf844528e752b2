import type { HttpService } from '@nestjs/axios';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HubtelConfigError, type HubtelTelemetry } from 'nestjs-hubtel';
import { createHttpTransport, echoValue, type HttpTransport } from '#internal';
import { SmsClient } from './sms.client.js';
import {
  SMS_ACCOUNT_CACHE_SWEEP_SIZE,
  SMS_ACCOUNT_NAME,
  SMS_DEFAULT_ACCOUNT,
  smsLoggerContext,
} from './sms.constants.js';
import { SmsUnknownAccountError } from './sms.errors.js';
import {
  resolveSmsAccountOptions,
  smsTransportConfig,
  type ResolvedSmsAccountResolver,
  type ResolvedSmsOptions,
  type SmsModuleOptions,
} from './sms.options.js';
import { accountTelemetry } from './sms.telemetry.js';
import type {
  SendBatchInput,
  SendBatchResult,
  SendSmsInput,
  SendSmsResult,
  SmsBatchStatus,
  SmsMessageStatus,
  SmsSender,
} from './sms.types.js';

/** What `SmsModule.forRoot` hands over: named accounts inherit from it and share its HTTP client. */
export interface SmsDefaultAccount {
  /** The options as given (named accounts inherit the ones they do not set). */
  options: SmsModuleOptions;
  resolved: ResolvedSmsOptions;
  transport: HttpTransport;
  http: HttpService;
  telemetry?: HubtelTelemetry;
}

interface Registration {
  overrides: unknown;
  /** To tell a registration imported twice (fine) from two different ones under one name. */
  fingerprint: string;
  client?: SmsClient;
}

interface CachedAccount {
  client: Promise<SmsClient>;
  /** Infinity while the resolver runs: concurrent first uses share its one call. */
  expiresAt: number;
}

/**
 * The application's SMS accounts: the default one (forRoot), those registered by name
 * (registerAccount), and those the optional resolver finds at run time (cached). Each named
 * account gets its own transport with its own credentials; its options are checked when it is
 * first built: at bootstrap for registered accounts, at first use for resolved ones.
 */
@Injectable()
export class SmsAccounts implements OnModuleInit {
  private defaults?: SmsDefaultAccount;
  private defaultClient?: SmsClient;
  private readonly registered = new Map<string, Registration>();
  private readonly resolved = new Map<string, CachedAccount>();

  /** Called by forRoot's module; a second forRoot in one application does not replace the first. */
  attachDefault(defaults: SmsDefaultAccount): this {
    this.defaults ??= defaults;
    return this;
  }

  /** Called by registerAccount's module: records the account, returns its sender. */
  register(name: string, overrides: unknown): SmsSender {
    checkAccountName(name, 'sms.registerAccount.name');
    const fingerprint = fingerprintOf(overrides);
    const existing = this.registered.get(name);
    if (existing && existing.fingerprint !== fingerprint)
      throw new HubtelConfigError(`sms[${name}]`, 'is registered twice, with different options');
    if (!existing) this.registered.set(name, { overrides, fingerprint });
    return new SmsAccountSender(name, this);
  }

  /** Builds every registered account now, so a bad option stops the application at bootstrap. */
  onModuleInit(): void {
    for (const name of this.registered.keys()) this.registeredClient(name);
  }

  /** A sender bound to `name`; its calls find the account first (and reject when there is none). */
  sender(name: string): SmsSender {
    return new SmsAccountSender(name, this);
  }

  /** The client of account `name`, or SmsUnknownAccountError. */
  async client(name: unknown): Promise<SmsClient> {
    if (typeof name !== 'string' || !SMS_ACCOUNT_NAME.test(name)) throw this.unknown(name);
    const defaults = this.requireDefaults(name);
    if (name === SMS_DEFAULT_ACCOUNT) {
      this.defaultClient ??= new SmsClient(name, defaults.resolved, defaults.transport, defaults.telemetry);
      return this.defaultClient;
    }
    if (this.registered.has(name)) return this.registeredClient(name);
    const resolver = defaults.resolved.accounts;
    if (!resolver) throw this.unknown(name);
    return this.resolvedClient(name, resolver);
  }

  /** Names configured in code or the environment: `default` first, then the registered ones. */
  get names(): string[] {
    return [SMS_DEFAULT_ACCOUNT, ...[...this.registered.keys()].sort()];
  }

  private registeredClient(name: string): SmsClient {
    const registration = this.registered.get(name)!;
    registration.client ??= this.build(name, registration.overrides);
    return registration.client;
  }

  private resolvedClient(name: string, resolver: ResolvedSmsAccountResolver): Promise<SmsClient> {
    const now = Date.now();
    const cached = this.resolved.get(name);
    if (cached && cached.expiresAt > now) return cached.client;
    if (this.resolved.size >= SMS_ACCOUNT_CACHE_SWEEP_SIZE) this.sweep(now);
    const entry: CachedAccount = {
      expiresAt: Number.POSITIVE_INFINITY,
      client: (async () => {
        const overrides = await resolver.resolve(name);
        if (overrides === undefined || overrides === null) throw this.unknown(name);
        return this.build(name, overrides);
      })(),
    };
    this.resolved.set(name, entry);
    void entry.client.then(
      () => (entry.expiresAt = Date.now() + resolver.cacheTtlMs),
      // Not cached: the next call asks again (a merchant added a moment ago, a database back up).
      () => this.resolved.get(name) === entry && this.resolved.delete(name),
    );
    return entry.client;
  }

  private sweep(now: number): void {
    for (const [name, entry] of this.resolved) if (entry.expiresAt <= now) this.resolved.delete(name);
  }

  private build(name: string, overrides: unknown): SmsClient {
    const defaults = this.requireDefaults(name);
    const resolved = resolveSmsAccountOptions(name, defaults.options, overrides);
    const config = smsTransportConfig(resolved);
    const transport = createHttpTransport(
      defaults.http,
      defaults.telemetry ? { ...config, telemetry: defaults.telemetry } : config,
      smsLoggerContext(name),
    );
    const telemetry = defaults.telemetry && accountTelemetry(defaults.telemetry, name);
    return new SmsClient(name, resolved, transport, telemetry);
  }

  private requireDefaults(name: string): SmsDefaultAccount {
    if (!this.defaults)
      throw new HubtelConfigError(
        `sms[${name}]`,
        'needs SmsModule.forRoot or forRootAsync in the application: the default account it inherits its options from',
      );
    return this.defaults;
  }

  private unknown(name: unknown): SmsUnknownAccountError {
    return new SmsUnknownAccountError(
      echoValue(name),
      this.names,
      this.defaults?.resolved.accounts !== undefined,
    );
  }
}

/** A sender whose calls go to account `account`, found (or resolved) at each call. */
class SmsAccountSender implements SmsSender {
  constructor(
    readonly account: string,
    private readonly accounts: SmsAccounts,
  ) {}

  async send(input: SendSmsInput): Promise<SendSmsResult> {
    return (await this.accounts.client(this.account)).send(input);
  }

  async sendBatch(input: SendBatchInput): Promise<SendBatchResult> {
    return (await this.accounts.client(this.account)).sendBatch(input);
  }

  async getMessageStatus(messageId: string): Promise<SmsMessageStatus> {
    return (await this.accounts.client(this.account)).getMessageStatus(messageId);
  }

  async getBatchStatus(batchId: string): Promise<SmsBatchStatus> {
    return (await this.accounts.client(this.account)).getBatchStatus(batchId);
  }
}

/** A HubtelConfigError naming `option` unless `name` can be an account name other than `default`. */
export function checkAccountName(name: unknown, option: string): asserts name is string {
  if (typeof name !== 'string' || !SMS_ACCOUNT_NAME.test(name))
    throw new HubtelConfigError(
      option,
      `${echoValue(name)} is not an account name: lower-case letters, digits, "-" and "_", at most 64, starting with a letter or digit`,
    );
  if (name === SMS_DEFAULT_ACCOUNT)
    throw new HubtelConfigError(
      option,
      '"default" is the account SmsModule.forRoot configures: give this account another name',
    );
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
