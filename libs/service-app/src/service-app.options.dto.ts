import {
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import {
  HubtelBackoffOptionsDto,
  HubtelCredentialsDto,
  HubtelShutdownOptionsDto,
  HubtelStatusCheckBudgetOptionsDto,
  IsHubtelCountryCode,
  IsHubtelPosSalesId,
  IsOptionalSection,
} from '#internal';
import { SERVICE_APP_DEFAULT_MESSAGES } from './service-app.constants.js';

/*
 * The service app's options that are plain data, checked at bootstrap by the validator of the
 * inbound bodies (checkOptions). Rules no decorator says stay in service-app.options.ts:
 * sessionStartTtlMs ≤ sessionTtlMs and every maxDelayMs ≥ baseDelayMs (cross-field),
 * verification.enabled needing statusCheck, defaults that depend on other options, flows
 * (ServiceFlowBuilder objects), the store (token or instance), URLs (parsed and trimmed, not just
 * checked), access (InboundAccessPolicy) and back inputs (a string, a list or false).
 */

/** `callbackRetry`: backoff until the platform accepts, or the deadline. */
export class ServiceAppCallbackRetryOptionsDto extends HubtelBackoffOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  deadlineMs?: number;
}

/** `fulfillmentRetry`: attempts of the @OnFulfillment handler, and their backoff. */
export class ServiceAppFulfillmentRetryOptionsDto extends HubtelBackoffOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  maxAttempts?: number;
}

/** `statusCheck`: the key pair (core's credentials DTO), the POS Sales ID and the time-out; `url` is in code. */
export class ServiceAppStatusCheckOptionsDto extends HubtelCredentialsDto {
  @IsHubtelPosSalesId()
  posSalesId: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(600_000)
  timeoutMs?: number;
}

export class ServiceAppVerificationOptionsDto {
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  recheckForMs?: number;

  @IsOptionalSection(() => HubtelBackoffOptionsDto)
  recheckDelay?: HubtelBackoffOptionsDto;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  amountTolerance?: number;
}

/**
 * `messages`: a string per known message, checked with unknown fields refused (a misspelt key
 * would silently keep the default). Its fields are declared from SERVICE_APP_DEFAULT_MESSAGES, so
 * a new message needs no second list.
 */
export class ServiceAppMessagesDto {}
for (const key of Object.keys(SERVICE_APP_DEFAULT_MESSAGES)) {
  IsOptional()(ServiceAppMessagesDto.prototype, key);
  IsString()(ServiceAppMessagesDto.prototype, key);
}

/**
 * `ussd`: the screen and the navigation of long menus. `operators` / `appOperators` (lists) are
 * checked in code, with the rules no decorator says (keys distinct from each other and from the
 * back inputs; the navigation lines leave room for an option).
 */
export class ServiceAppUssdOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(60)
  @Max(1_000)
  screenSize?: number;

  @IsOptional()
  @IsInt()
  @Min(40)
  @Max(1_000)
  unicodeScreenSize?: number;

  @IsOptional()
  @IsBoolean()
  transliterate?: boolean;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(4)
  moreKey?: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(30)
  moreLabel?: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(4)
  backKey?: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(30)
  backLabel?: string;
}

/**
 * The top-level options, with the shutdown grace shared with every module. The options removed in
 * 0.2 (`leaseMs`, `sweepIntervalMs`, `recoverOnBootstrap`) are refused in service-app.options.ts
 * (refuseRemovedJobOptions), naming what replaced them.
 */
export class ServiceAppOptionsDto extends HubtelShutdownOptionsDto {
  @IsOptionalSection(() => ServiceAppUssdOptionsDto)
  ussd?: ServiceAppUssdOptionsDto;

  @IsOptionalSection(() => HubtelCredentialsDto)
  callbackCredentials?: HubtelCredentialsDto;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(600_000)
  callbackTimeoutMs?: number;

  @IsOptionalSection(() => ServiceAppCallbackRetryOptionsDto)
  callbackRetry?: ServiceAppCallbackRetryOptionsDto;

  @IsOptionalSection(() => ServiceAppFulfillmentRetryOptionsDto)
  fulfillmentRetry?: ServiceAppFulfillmentRetryOptionsDto;

  @IsOptional()
  @IsInt()
  @Min(1)
  sessionTtlMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  sessionStartTtlMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  cartTtlMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(60_000)
  stepBudgetMs?: number;

  @IsOptional()
  @IsBoolean()
  requireCart?: boolean;

  @IsOptionalSection(() => ServiceAppStatusCheckOptionsDto)
  statusCheck?: ServiceAppStatusCheckOptionsDto;

  @IsOptionalSection(() => ServiceAppVerificationOptionsDto)
  verification?: ServiceAppVerificationOptionsDto;

  @IsOptionalSection(() => HubtelStatusCheckBudgetOptionsDto)
  statusCheckBudget?: HubtelStatusCheckBudgetOptionsDto;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxPendingSessions?: number;

  @IsOptional()
  @IsHubtelCountryCode()
  defaultCountryCode?: string;
}
