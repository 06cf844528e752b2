import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import {
  HubtelShutdownOptionsDto,
  HubtelStatusCheckBudgetOptionsDto,
  IsHubtelPosSalesId,
  IsOptionalSection,
} from '#internal';
import { NOT_BLANK } from './dto/create-invoice.dto.js';

/** Longest delay or interval the checkout options take: 30 days. */
export const CHECKOUT_MAX_DELAY_MS = 30 * 24 * 3600_000;

/*
 * Checkout options that are plain data, checked at bootstrap by the validator of the inbound bodies
 * (checkOptions). Rules no decorator says stay in checkout.options.ts: maxIntervalMs ≥ intervalMs,
 * `enabled` needing posSalesId, defaults that depend on posSalesId.
 */
export class CheckoutReconciliationOptionsDto {
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(CHECKOUT_MAX_DELAY_MS)
  delayMs?: number;

  @IsOptional()
  @IsInt()
  @Min(5)
  @Max(CHECKOUT_MAX_DELAY_MS)
  intervalMs?: number;

  @IsOptional()
  @IsInt()
  @Min(5)
  @Max(CHECKOUT_MAX_DELAY_MS)
  maxIntervalMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(365 * 24 * 3600_000)
  giveUpAfterMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000)
  maxChecks?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(64)
  concurrency?: number;
}

const FINITE = { allowNaN: false, allowInfinity: false } as const;

export class CheckoutAmountToleranceDto {
  @IsOptional()
  @IsNumber(FINITE)
  @Min(0)
  absolute?: number;

  @IsOptional()
  @IsNumber(FINITE)
  @Min(0)
  @Max(100)
  percent?: number;
}

/** Rules outside it (in checkout.options.ts): maxDelayMs ≥ delayMs, the waits' total, posSalesId. */
export class CheckoutRecheckOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10)
  attempts?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(60_000)
  delayMs?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(60_000)
  maxDelayMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(60)
  roundsPerHour?: number;
}

export class CheckoutVerificationOptionsDto {
  @IsOptionalSection(() => CheckoutAmountToleranceDto)
  amountTolerance?: CheckoutAmountToleranceDto;

  @IsOptional()
  @IsBoolean()
  allowOverpayment?: boolean;

  @IsOptional()
  @IsBoolean()
  confirmWithStatusCheck?: boolean;

  @IsOptionalSection(() => CheckoutRecheckOptionsDto)
  recheck?: CheckoutRecheckOptionsDto;
}

/**
 * `handlers.retry`. Outside it (in checkout.options.ts): `maxAttempts: Infinity` (no JSON number,
 * so no decorator takes it) and its need of deadlineMs, maxDelayMs ≥ baseDelayMs, the defaults.
 */
export class CheckoutHandlerRetryOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  maxAttempts?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  baseDelayMs?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  maxDelayMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  deadlineMs?: number;
}

/**
 * `handlers`: retry, record TTL, and the shutdown grace shared with every module. The options
 * removed in 0.2 (`leaseMs`, `sweepIntervalMs`, `recoverOnBootstrap`) are refused in
 * checkout.options.ts (refuseRemovedJobOptions), naming what replaced them.
 */
export class CheckoutHandlerOptionsDto extends HubtelShutdownOptionsDto {
  @IsOptionalSection(() => CheckoutHandlerRetryOptionsDto)
  retry?: CheckoutHandlerRetryOptionsDto;

  @IsOptional()
  @IsInt()
  @Min(1)
  recordTtlMs?: number;
}

/**
 * The checkout options that are plain data, with their sections. Outside it (checkout.options.ts):
 * credentials and HTTP options (core's shared DTOs), URLs (parsed and trimmed, not just checked),
 * access (InboundAccessPolicy), the store (a token or an instance), and the cross-field rules and
 * posSalesId-dependent defaults.
 */
export class CheckoutOptionsDto {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Matches(NOT_BLANK, { message: 'merchantAccountNumber must not be empty' })
  merchantAccountNumber?: string;

  @IsOptional()
  @IsHubtelPosSalesId()
  posSalesId?: string;

  @IsOptional()
  @IsIn(['reject', 'strip'])
  descriptionSpecialCharacters?: 'reject' | 'strip';

  @IsOptionalSection(() => CheckoutVerificationOptionsDto)
  verification?: CheckoutVerificationOptionsDto;

  @IsOptionalSection(() => CheckoutReconciliationOptionsDto)
  reconciliation?: CheckoutReconciliationOptionsDto;

  @IsOptionalSection(() => CheckoutHandlerOptionsDto)
  handlers?: CheckoutHandlerOptionsDto;

  @IsOptionalSection(() => HubtelStatusCheckBudgetOptionsDto)
  statusCheckBudget?: HubtelStatusCheckBudgetOptionsDto;

  @IsOptional()
  @IsInt()
  @Min(60_000)
  invoiceTtlMs?: number;

  @IsOptional()
  @IsInt()
  @Min(1024)
  @Max(10 * 1024 * 1024)
  maxCallbackBodyBytes?: number;
}
