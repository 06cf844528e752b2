import { IsBoolean, IsInt, IsOptional, Max, Min } from 'class-validator';

/*
 * The service app's top-level options that are plain data, checked at bootstrap by the validator
 * of the inbound bodies (checkOptions). Rules no decorator says stay in service-app.options.ts:
 * sessionStartTtlMs ≤ sessionTtlMs (cross-field), flows (ServiceFlowBuilder objects), the store
 * (token or instance), URLs, the country code (core's shared check and default), back inputs (string, list or false) and the nested retry/verification
 * sections with their own cross-field rules.
 */
export class ServiceAppOptionsDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(600_000)
  callbackTimeoutMs?: number;

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

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxPendingSessions?: number;

  @IsOptional()
  @IsBoolean()
  recoverOnBootstrap?: boolean;
}
