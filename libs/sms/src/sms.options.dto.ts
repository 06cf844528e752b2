import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { SMS_LIMITS } from './sms.constants.js';

/*
 * The plain-data options of SmsModule, checked at bootstrap by the validator of the inbound bodies
 * (checkOptions). What no decorator says stays in sms.options.ts: senderId's length depends on
 * maxSenderLength (cross-field), baseUrl's rules (http(s), no credentials, no query) and defaults.
 */
export class SmsOptionsDto {
  @IsOptional()
  @IsString()
  @Matches(/\S/, { message: 'senderId must not be empty' })
  senderId?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(64)
  maxSenderLength?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  maxContentLength?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(SMS_LIMITS.maxBatchSize)
  batchSize?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(SMS_LIMITS.maxConcurrency)
  concurrency?: number;
}
