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
 * The checkout callback body. Only what the module relies on is required: a genuine callback refused
 * for a missing detail would be a lost payment. Extra fields are ignored; string lengths are capped.
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
