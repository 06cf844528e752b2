import { IsString, Matches, MaxLength } from 'class-validator';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { compileValidator, type CompileValidatorOptions } from '../validation/validation.ajv.js';
import { HUBTEL_DEFAULT_COUNTRY_CODE, HUBTEL_ENV } from '../hubtel.constants.js';
import { HubtelOption, rules } from './hubtel-option.decorator.js';
import type { InboundAccessOptions } from '../inbound/inbound-access.js';

// The options every module shares, as DTOs checked at bootstrap by the inbound bodies' validator.

/** An optional section of options (`checkout.handlers`): absent, null, or an object checked as `type` declares. */
export function IsOptionalSection(type: () => Function): PropertyDecorator {
  return HubtelOption({ nested: type });
}

/** A POS Sales ID (checkout's `posSalesId`, the service app's `statusCheck.posSalesId`): it goes into the status check's path. */
export function IsHubtelPosSalesId(): PropertyDecorator {
  return rules(
    IsString(),
    MaxLength(64),
    Matches(/^[A-Za-z0-9_-]+$/, { message: 'posSalesId must contain only letters, digits, "-" and "_"' }),
  );
}

/** `defaultCountryCode`: the calling code put in front of national numbers (`0241234567`). Default '233'. */
export function HubtelCountryCodeOption(): PropertyDecorator {
  const message =
    'defaultCountryCode must be a country calling code of 1 to 3 digits without "+" (e.g. "233")';
  return HubtelOption({
    is: rules(IsString(), Matches(/^[1-9]\d{0,2}$/, { message })),
    env: HUBTEL_ENV.defaultCountryCode,
    default: HUBTEL_DEFAULT_COUNTRY_CODE,
  });
}

/**
 * A key pair (`callbackCredentials`; over `base`, a module's own `clientId` / `clientSecret`) read
 * from `env`'s variables: each account's own as a whole, never completed with the default's.
 */
export function declareCredentials<B extends object = object>(
  env: { clientId?: string; clientSecret?: string } = {},
  base: new () => B = Object as never,
): new () => B & { clientId: string; clientSecret: string } {
  class HubtelCredentialsDto extends (base as new () => object) {
    // Not blank, and no colon: it would split the Basic auth pair in the wrong place on the platform's side.
    @IsString()
    @Matches(/^[^:]*[^\s:][^:]*$/, { message: 'clientId must not be empty nor contain ":"' })
    @HubtelOption({ env: env.clientId, account: 'own' })
    clientId: string;

    @IsString()
    @Matches(/\S/, { message: 'clientSecret must not be empty' })
    @HubtelOption({ env: env.clientSecret, account: 'own' })
    clientSecret: string;
  }
  return HubtelCredentialsDto as new () => B & { clientId: string; clientSecret: string };
}

/**
 * A backoff's first ceiling (`baseDelayMs`, doubling on every retry) and its cap (`maxDelayMs`), in ms
 * from `min`: the cap defaults to at least the base, and is refused below it.
 */
export function declareBackoff(defaults: { baseDelayMs: number; maxDelayMs: number }, min = 1) {
  class HubtelBackoffOptions {
    @HubtelOption({ int: min, default: defaults.baseDelayMs })
    baseDelayMs?: number;

    @HubtelOption({
      int: min,
      atLeast: 'baseDelayMs',
      defaultFrom: (backoff) => Math.max(defaults.maxDelayMs, backoff.baseDelayMs as number),
    })
    maxDelayMs?: number;
  }
  return HubtelBackoffOptions;
}

/** Every module's `retry` of its calls to the platform. */
export class HubtelRetryOptionsDto {
  /** Attempts in all, the first one included. 1 disables retries. Default 3. */
  @HubtelOption({ int: [1, 20], env: HUBTEL_ENV.retryMaxAttempts, default: 3 })
  maxAttempts?: number;

  /** First backoff ceiling; doubles on every retry (full jitter: a random wait below it). Default 250. */
  @HubtelOption({ int: 1, env: HUBTEL_ENV.retryBaseDelayMs, default: 250 })
  baseDelayMs?: number;

  /** No backoff, nor any honoured `Retry-After`, is longer than this. Default 5000 (or the base). */
  @HubtelOption({
    int: 1,
    env: HUBTEL_ENV.retryMaxDelayMs,
    atLeast: 'baseDelayMs',
    defaultFrom: (retry) => Math.max(5_000, retry.baseDelayMs as number),
  })
  maxDelayMs?: number;
}

/** The transport settings every module that calls the platform accepts in its options. */
export class HubtelHttpOptions {
  /** Time-out of one HTTP attempt, in ms. Default 15000. */
  @HubtelOption({ int: [1, 600_000], env: HUBTEL_ENV.timeoutMs, default: 15_000 })
  timeoutMs?: number;

  // A named account's retry fields fall back to the default account's one by one.
  @HubtelOption({ nested: () => HubtelRetryOptionsDto, account: 'merged', default: {} })
  retry?: HubtelRetryOptionsDto;

  /** Country code put in front of national numbers (`0241234567`). Default '233'. */
  @HubtelCountryCodeOption()
  defaultCountryCode?: string;
}

/** `shutdownGraceMs` (see HubtelShutdownOptions): 0 to 10 min. */
export function IsHubtelShutdownGraceMs(): PropertyDecorator {
  return HubtelOption({ int: [0, 600_000] });
}

/**
 * Shutdown of a module's inbound pipeline. Where jobs run is no option: here with the memory store, on
 * BullMQ with Redis (HubtelBullmqModule's `lockDurationMs` / `stalledIntervalMs` hand a dead replica's on).
 */
export class HubtelShutdownOptions {
  /**
   * On shutdown (SIGTERM with `app.enableShutdownHooks()`), how long handlers running in this
   * process may take to finish (0 to 10 min). What is still pending then is logged with its count;
   * with Redis, BullMQ runs it on another replica (or after the next start). Default 5000 ms.
   */
  @IsHubtelShutdownGraceMs()
  shutdownGraceMs?: number;
}

/**
 * The instance's budget of transaction status checks (checkout's and the service app's: the smaller
 * wins). A check over budget is not sent: a confirmation waits for a free slot, the reconciler and
 * payment checks retry later, `getStatus` throws HubtelStatusCheckBudgetError. Reaching it logs one
 * warning and counts `hubtel_status_checks_refused_total` (nestjs-hubtel/metrics).
 */
export class HubtelStatusCheckBudgetOptions {
  /** Status checks this instance makes in any minute (1 to 100000). Default 600. */
  @HubtelOption({ int: [1, 100_000] })
  perMinute?: number;
}

/**
 * A module's `access` option as a named account gets it (`account: 'merged'`): the default's allow-list
 * and proxies field by field, never its path secret (it names one account's route), which is read from
 * `pathSecretEnv` (`HUBTEL_<NAME>_…` for a named account).
 */
export function declareAccessOptions(pathSecretEnv: string): new () => InboundAccessOptions {
  class HubtelAccessOptionsDto implements InboundAccessOptions {
    @HubtelOption({ env: pathSecretEnv, account: 'notInherited' })
    pathSecret?: string;
  }
  return HubtelAccessOptionsDto;
}

/** What replaced `leaseMs` and `sweepIntervalMs` (removed in 0.2.0: one engine per deployment). */
const TAKEN_OVER_BY_BULLMQ =
  "jobs on Redis run on BullMQ; a dead replica's job is taken over by BullMQ's stalled-job check (HubtelBullmqModule lockDurationMs / stalledIntervalMs)";

/** The job options removed in 0.2.0 (no leases, sweeps or recovery of our own), with what replaced each. */
const REMOVED_JOB_OPTIONS: Readonly<Record<string, string>> = {
  leaseMs: TAKEN_OVER_BY_BULLMQ,
  sweepIntervalMs: TAKEN_OVER_BY_BULLMQ,
  recoverOnBootstrap:
    'jobs on Redis run on BullMQ, which keeps unfinished jobs in Redis and runs them on any replica, after a restart too (with the memory store nothing outlives the process)',
};

/** Refuses a removed option in the raw `section` (`checkout.handlers`), naming what replaced it. */
export function refuseRemovedOptions(section: unknown, prefix: string, removed = REMOVED_JOB_OPTIONS): void {
  if (section === null || typeof section !== 'object') return;
  for (const [option, replacement] of Object.entries(removed))
    if ((section as Record<string, unknown>)[option] !== undefined)
      throw new HubtelConfigError(`${prefix}.${option}`, `was removed in 0.2.0: ${replacement}; remove it`);
}

/**
 * Checks options against a DTO: the first bad field a HubtelConfigError naming it, never its value
 * (a secret). A null optional field is left out, as `@IsOptional()` reads it.
 */
export function checkOptions<T>(
  dto: new () => T,
  value: unknown,
  prefix: string,
  options: CompileValidatorOptions = {},
): T {
  const checked = compileValidator(dto, options)(value);
  if (checked.ok) return withoutNulls(checked.value) as T;
  const [issue] = checked.issues;
  // The value itself is not an object: the validator words it for a request body.
  if (issue!.field === '(body)')
    throw new HubtelConfigError(
      prefix || '(options)',
      issue!.message.replace(/^request body must be a JSON object/, 'must be an object'),
    );
  const field = issue!.field;
  // The message starts with the field's path (or, for a nested DTO's own message, its last name).
  const lead = [field, field.split('.').pop()!].find((name) => name && issue!.message.startsWith(`${name} `));
  const problem = lead ? issue!.message.slice(lead.length + 1) : issue!.message;
  // An empty prefix names top-level options bare (the sandbox's `port`).
  const option = prefix ? `${prefix}.${field}` : field;
  throw new HubtelConfigError(option, problem);
}

/** An object literal (not an array, nor an instance of a class). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A copy of an accepted options object without its null fields, nested plain objects included. */
function withoutNulls(value: unknown): unknown {
  if (!isPlainObject(value)) return value; // arrays, instances: as given
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (field !== null) out[key] = withoutNulls(field);
  return out;
}
