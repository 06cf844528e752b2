import { Type } from 'class-transformer';
import {
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { compileValidator, type CompileValidatorOptions } from '../validation/validation.ajv.js';
import { HUBTEL_MAX_STATUS_CHECKS_PER_MINUTE } from '../hubtel.constants.js';
import type { HubtelJobOwnershipOptions, HubtelStatusCheckBudgetOptions } from './hubtel-options.types.js';

/*
 * The options every module shares (credentials, timeout, retry, country code, job ownership, the
 * POS Sales ID) as class-validator DTOs and decorators, checked at bootstrap by the same validator
 * as the inbound bodies. Cross-field rules (retry.maxDelayMs ≥ baseDelayMs) and defaults stay in
 * hubtel-options.validation.ts.
 */

/** Not blank: at least one non-space character. */
const NOT_BLANK = /\S/;

/** Several class-validator rules as one decorator, so a rule shared by DTOs is written once. */
function rules(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => {
    for (const decorator of decorators) decorator(target, property);
  };
}

/** An optional section of options (`checkout.handlers`): absent, null, or an object checked as `type` declares. */
export function IsOptionalSection(type: () => Function): PropertyDecorator {
  return rules(IsOptional(), IsObject(), ValidateNested(), Type(type));
}

/** A POS Sales ID (checkout's `posSalesId`, the service app's `statusCheck.posSalesId`): it goes into the status check's path. */
export function IsHubtelPosSalesId(): PropertyDecorator {
  return rules(
    IsString(),
    MaxLength(64),
    Matches(/^[A-Za-z0-9_-]+$/, { message: 'posSalesId must contain only letters, digits, "-" and "_"' }),
  );
}

/** A country calling code put in front of national numbers: 1 to 3 digits, not starting with 0. */
export function IsHubtelCountryCode(): PropertyDecorator {
  return rules(
    IsString(),
    Matches(/^[1-9]\d{0,2}$/, {
      message: 'defaultCountryCode must be a country calling code of 1 to 3 digits without "+" (e.g. "233")',
    }),
  );
}

export class HubtelCredentialsDto {
  @IsString()
  // Not blank, and no colon: it would split the Basic auth pair in the wrong place on the platform's side.
  @Matches(/^[^:]*[^\s:][^:]*$/, { message: 'clientId must not be empty nor contain ":"' })
  clientId: string;

  @IsString()
  @Matches(NOT_BLANK, { message: 'clientSecret must not be empty' })
  clientSecret: string;
}

/** A backoff's first ceiling and cap; `maxDelayMs ≥ baseDelayMs` is checked by `backoffDelays`. */
export class HubtelBackoffOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  baseDelayMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  maxDelayMs?: number;
}

export class HubtelRetryOptionsDto extends HubtelBackoffOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(20)
  maxAttempts?: number;
}

export class HubtelHttpOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(600_000)
  timeoutMs?: number;

  @IsOptionalSection(() => HubtelRetryOptionsDto)
  retry?: HubtelRetryOptionsDto;

  @IsOptional()
  @IsHubtelCountryCode()
  defaultCountryCode?: string;
}

/**
 * Job ownership of a module's inbound pipeline (see HubtelJobOwnershipOptions), extended by the
 * modules' DTOs that carry it. `sweepIntervalMs` is 0 or at least 100 ms, a rule no decorator says:
 * `checkJobOwnership` applies it.
 */
export class HubtelJobOwnershipOptionsDto implements HubtelJobOwnershipOptions {
  @IsOptional()
  @IsInt()
  @Min(1_000)
  @Max(3_600_000)
  leaseMs?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  sweepIntervalMs?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(600_000)
  shutdownGraceMs?: number;
}

/** `statusCheckBudget` of the modules that call the transaction status check. */
export class HubtelStatusCheckBudgetOptionsDto implements HubtelStatusCheckBudgetOptions {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(HUBTEL_MAX_STATUS_CHECKS_PER_MINUTE)
  perMinute?: number;
}

/** The minimum sweep interval other than 0 (off): a typo cannot make every instance hammer the store. */
const MIN_SWEEP_INTERVAL_MS = 100;

/** The job ownership options as checked by HubtelJobOwnershipOptionsDto, plus its one rule in code. */
export function checkJobOwnership<T extends HubtelJobOwnershipOptions>(checked: T, prefix: string): T {
  const sweep = checked.sweepIntervalMs;
  // "0 or 100 ms to 1 h" is a union of ranges, which no decorator says.
  if (sweep !== undefined && sweep !== 0 && sweep < MIN_SWEEP_INTERVAL_MS)
    throw new HubtelConfigError(
      `${prefix}.sweepIntervalMs`,
      `must be 0 (no sweep) or at least ${MIN_SWEEP_INTERVAL_MS}`,
    );
  return checked;
}

/**
 * Checks a module's options (or a part of them) against a DTO; the first bad field becomes a
 * HubtelConfigError naming it (`sms.retry.maxAttempts`). Unknown fields are left to the module,
 * unless `forbidUnknown`. Messages name the type of a bad value, never the value (it may be a
 * secret). An optional field given as null is left out of the result, as if not given: that is how
 * `@IsOptional()` reads it, so defaults (`??`) and presence checks (`!== undefined`) agree.
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

/** A copy of an accepted options object without its null fields, nested plain objects included. */
function withoutNulls(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value; // arrays, instances: as given
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (field !== null) out[key] = withoutNulls(field);
  return out;
}
