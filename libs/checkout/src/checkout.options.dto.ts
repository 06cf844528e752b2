import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsNumber, IsObject, IsOptional, Max, Min, ValidateNested } from 'class-validator';

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
}

export class CheckoutVerificationOptionsDto {
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => CheckoutAmountToleranceDto)
  amountTolerance?: CheckoutAmountToleranceDto;

  @IsOptional()
  @IsBoolean()
  allowOverpayment?: boolean;

  @IsOptional()
  @IsBoolean()
  confirmWithStatusCheck?: boolean;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => CheckoutRecheckOptionsDto)
  recheck?: CheckoutRecheckOptionsDto;
}
