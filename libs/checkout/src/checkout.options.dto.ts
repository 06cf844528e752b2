import { IsBoolean, IsInt, IsOptional, Max, Min } from 'class-validator';

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
