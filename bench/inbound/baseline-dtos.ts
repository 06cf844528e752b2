import { Type } from 'class-transformer';
import {
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';

/**
 * Baseline (c): the class-validator DTOs a user would write by hand for the same three bodies,
 * with the same rules the suite enforces (required strings, numbers, MSISDN digits, nested
 * objects), validated by Nest's global ValidationPipe.
 */

export class PaymentDetailsDto {
  @IsString() MobileMoneyNumber!: string;
  @IsString() @IsNotEmpty() PaymentType!: string;
  @IsString() Channel!: string;
}

export class CheckoutCallbackDataDto {
  @IsString() @IsNotEmpty() CheckoutId!: string;
  @IsString() SalesInvoiceId!: string;
  @IsString() @IsNotEmpty() @MaxLength(32) ClientReference!: string;
  @IsString() @IsNotEmpty() Status!: string;
  @IsNumber() Amount!: number;
  @IsString() @Matches(/^\d{9,15}$/) CustomerPhoneNumber!: string;
  @ValidateNested() @Type(() => PaymentDetailsDto) PaymentDetails!: PaymentDetailsDto;
  @IsString() Description!: string;
}

export class CheckoutCallbackDto {
  @IsString() @IsNotEmpty() ResponseCode!: string;
  @IsString() @IsNotEmpty() Status!: string;
  @ValidateNested() @Type(() => CheckoutCallbackDataDto) Data!: CheckoutCallbackDataDto;
}

export class ServiceFlowRequestDto {
  @IsOptional() @IsString() Sequence?: string;
  @IsString() @IsNotEmpty() Type!: string;
  @IsString() Message!: string;
  @IsString() @IsNotEmpty() ServiceCode!: string;
  @IsString() Operator!: string;
  @IsString() ClientState!: string;
  @IsString() @Matches(/^\d{9,15}$/) Mobile!: string;
  @IsString() @IsNotEmpty() SessionId!: string;
}

export class FulfillmentRequestDto {
  @IsString() @IsNotEmpty() OrderId!: string;
  @IsString() @IsNotEmpty() SessionId!: string;
  @IsOptional() @IsObject() ExtraData?: Record<string, unknown>;
  @IsOptional() OrderInfo?: unknown;
}
