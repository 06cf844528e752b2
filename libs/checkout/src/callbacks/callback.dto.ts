import { applyDecorators } from '@nestjs/common';
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
import { compileValidator } from '#internal';

/*
 * The checkout callback body. Only what the module relies on is required: a genuine callback refused
 * for a missing detail would be a lost payment. Extra fields are ignored; string lengths are capped.
 */
// Listed bottom-up, as stacked decorators apply: the rules (and messages) keep their order.
const Text = (max: number) => applyDecorators(MaxLength(max), IsNotEmpty(), IsString());
const OptionalText = (max: number) => applyDecorators(MaxLength(max), IsString(), IsOptional());
const Nested = (type: () => new () => object) => applyDecorators(Type(type), ValidateNested(), IsObject());

export class CheckoutCallbackPaymentDetailsDto {
  @OptionalText(64) MobileMoneyNumber?: string | null;
  @OptionalText(64) PaymentType?: string | null;
  @OptionalText(64) Channel?: string | null;
}

export class CheckoutCallbackDataDto {
  @Text(128) CheckoutId: string;
  @OptionalText(128) SalesInvoiceId?: string | null;
  @Text(32) ClientReference: string;
  @Text(64) Status: string;

  /** Required for a successful payment (checked by the verifier); may be absent on a failure. */
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  Amount?: number | null;

  @OptionalText(32) CustomerPhoneNumber?: string | null;

  @IsOptional()
  @Nested(() => CheckoutCallbackPaymentDetailsDto)
  PaymentDetails?: CheckoutCallbackPaymentDetailsDto | null;

  @OptionalText(1024) Description?: string | null;
}

export class CheckoutCallbackDto {
  @Text(16) ResponseCode: string;
  @OptionalText(64) Status?: string | null;
  @IsDefined() @Nested(() => CheckoutCallbackDataDto) Data: CheckoutCallbackDataDto;
}

/**
 * Validates a callback body, never throwing; `value` is a fresh object of the contract's fields only.
 * Built at load: a broken DTO fails at start-up, not on the first callback.
 */
export const validateCheckoutCallback = compileValidator(CheckoutCallbackDto);
