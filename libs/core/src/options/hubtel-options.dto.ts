import { Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString, Matches, Max, Min, ValidateNested } from 'class-validator';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { compileValidator } from '../validation/validation.ajv.js';

/*
 * The options every module shares (credentials, timeout, retry, country code) as class-validator
 * DTOs, checked at bootstrap by the same validator as the inbound bodies. Cross-field rules
 * (retry.maxDelayMs ≥ baseDelayMs) and defaults stay in hubtel-options.validation.ts.
 */

const NOT_BLANK = /\S/;

export class HubtelCredentialsDto {
  @IsString()
  // Not blank, and no colon: it would split the Basic auth pair in the wrong place on the platform's side.
  @Matches(/^[^:]*[^\s:][^:]*$/, { message: 'clientId must not be empty nor contain ":"' })
  clientId: string;

  @IsString()
  @Matches(NOT_BLANK, { message: 'clientSecret must not be empty' })
  clientSecret: string;
}

export class HubtelRetryOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(20)
  maxAttempts?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  baseDelayMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  maxDelayMs?: number;
}

export class HubtelHttpOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(600_000)
  timeoutMs?: number;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => HubtelRetryOptionsDto)
  retry?: HubtelRetryOptionsDto;

  @IsOptional()
  @IsString()
  @Matches(/^[1-9]\d{0,2}$/, {
    message: 'defaultCountryCode must be a country calling code of 1 to 3 digits without "+" (e.g. "233")',
  })
  defaultCountryCode?: string;
}

/**
 * Checks a module's options (or a part of them) against a DTO; the first bad field becomes a
 * HubtelConfigError naming it (`sms.retry.maxAttempts`). Unknown fields are left to the module.
 * Messages name the type of a bad value, never the value (it may be a secret).
 */
export function checkOptions<T>(dto: new () => T, value: unknown, prefix: string): T {
  const checked = compileValidator(dto)(value);
  if (checked.ok) return checked.value;
  const [issue] = checked.issues;
  const field = issue!.field === '(body)' ? '' : issue!.field;
  // The message starts with the field's path (or, for a nested DTO's own message, its last name).
  const lead = [field, field.split('.').pop()!].find((name) => name && issue!.message.startsWith(`${name} `));
  const problem = lead ? issue!.message.slice(lead.length + 1) : issue!.message;
  // An empty prefix names top-level options bare (the sandbox's `port`).
  const option = prefix && field ? `${prefix}.${field}` : prefix || field || '(options)';
  throw new HubtelConfigError(option, problem);
}
