import { Type } from 'class-transformer';
import {
  IsDefined,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

/*
 * The checkout web callback body (platform → merchant), as the contract defines it. Only what the
 * module relies on is required (ResponseCode, Data.CheckoutId, Data.ClientReference, Data.Status);
 * the rest may be missing or null, because a genuine callback refused for a missing detail would be
 * a lost payment notification. Unknown extra fields are accepted and ignored. String lengths are
 * capped: the platform's values are short, and a megabyte "reference" is not a callback.
 */

export class CheckoutCallbackPaymentDetailsDto {
  @IsOptional()
  @IsString()
  @MaxLength(64)
  MobileMoneyNumber?: string | null;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  PaymentType?: string | null;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  Channel?: string | null;
}

export class CheckoutCallbackDataDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  CheckoutId: string;

  @IsOptional()
  @IsString()
  @MaxLength(128)
  SalesInvoiceId?: string | null;

  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  ClientReference: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  Status: string;

  /** Required for a successful payment (checked by the verifier); may be absent on a failure. */
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  Amount?: number | null;

  @IsOptional()
  @IsString()
  @MaxLength(32)
  CustomerPhoneNumber?: string | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => CheckoutCallbackPaymentDetailsDto)
  PaymentDetails?: CheckoutCallbackPaymentDetailsDto | null;

  @IsOptional()
  @IsString()
  @MaxLength(1024)
  Description?: string | null;
}

export class CheckoutCallbackDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(16)
  ResponseCode: string;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  Status?: string | null;

  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => CheckoutCallbackDataDto)
  Data: CheckoutCallbackDataDto;
}
