import { Type } from 'class-transformer';
import {
  Allow,
  IsBoolean,
  IsIn,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Min,
  ValidateNested,
} from 'class-validator';

// JSON bodies of the admin API (unknown fields refused; null reads as "not given"); what they
// mean is checked by `sandbox.pay` itself, before anything changes.

/** The one-off callback fault `POST /_sandbox/invoices/{ref}/pay` takes: `sandbox.pay`'s fault minus functions and rules. */
export class SandboxPayFaultDto {
  @IsOptional()
  @IsBoolean()
  drop?: boolean;

  @IsOptional()
  @IsNumber()
  duplicate?: number;

  @IsOptional()
  @IsBoolean()
  concurrent?: boolean;

  @IsOptional()
  @IsNumber()
  delayMs?: number;

  @IsOptional()
  @IsNumber()
  amount?: number;

  /** `true` (a random id) or a checkout id: two shapes no single rule says, checked by admin.api.ts. */
  @Allow()
  checkoutId?: true | string;

  @IsOptional()
  @IsBoolean()
  forge?: boolean;
}

/** What a recorded payment may say about its money: both pay bodies take it. */
class SandboxPaymentMoneyDto {
  /** The price paid for, before charges (an underpayment plays a wrong sum). */
  @IsOptional()
  @IsNumber()
  @Min(0)
  amount?: number;

  @IsOptional()
  @IsIn(['merchant', 'payer'])
  chargeBearer?: 'merchant' | 'payer';

  @IsOptional()
  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be a three-letter currency code (GHS)' })
  currency?: string;
}

/** The body of `POST /_sandbox/invoices/{ref}/pay`. */
export class SandboxPayBodyDto extends SandboxPaymentMoneyDto {
  @IsOptional()
  @IsIn(['paid', 'failed'])
  outcome?: 'paid' | 'failed';

  @IsOptional()
  @IsString()
  @Matches(/\S/, { message: 'phone must not be blank' })
  phone?: string;

  @IsOptional()
  @IsString()
  @Matches(/\S/, { message: 'channel must not be blank' })
  channel?: string;

  @IsOptional()
  @IsBoolean()
  deliver?: boolean;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => SandboxPayFaultDto)
  fault?: SandboxPayFaultDto;
}

/** The body of `POST /_sandbox/sessions/{sessionId}/pay`. */
export class SandboxServicePaymentBodyDto extends SandboxPaymentMoneyDto {
  @IsOptional()
  @IsString()
  @Matches(/\S/, { message: 'orderId must not be blank' })
  orderId?: string;

  /** The account whose service the session is (for a session the sandbox did not drive). */
  @IsOptional()
  @IsString()
  account?: string;
}
