import { applyDecorators } from '@nestjs/common';
import {
  Allow,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsPositive,
  IsString,
  Matches,
  MaxLength,
} from 'class-validator';
import { type TransactionPaymentStatus, type TransactionStatus } from '#internal';
import { CLIENT_REFERENCE_MAX_LENGTH, NOT_BLANK, PRINTABLE_REFERENCE } from '../checkout.constants.js';

/** The platform's `data` for a created invoice. Send the payer to `checkoutUrl`. */
export interface CheckoutInvoiceCreated {
  checkoutUrl: string;
  checkoutId: string;
  clientReference: string;
  /** Lets the payer pay on the page the request came from. */
  checkoutDirectUrl: string;
  /** The platform's message (empty in the contract's sample). */
  message: string;
}

/** The request body of `POST {checkout_url}/items/initiate`, in the contract's exact casing. */
export interface CheckoutInitiateRequestBody {
  totalAmount: number;
  description: string;
  callbackUrl: string;
  returnUrl: string;
  cancellationUrl: string;
  clientReference: string;
  merchantAccountNumber?: string;
  PayeeName?: string;
  PayeeMobileNumber?: string;
  PayeeEmail?: string;
}

/** The response envelope of `/items/initiate`. */
export interface CheckoutInitiateResponseBody {
  responseCode?: string;
  status?: string;
  data?: Partial<CheckoutInvoiceCreated> | null;
  message?: string;
}

// Bottom-up, as stacked decorators apply (the rules keep their order).
const OptionalText = () => applyDecorators(IsString(), IsOptional());
const NotBlank = (field: string) => Matches(NOT_BLANK, { message: `${field} must not be empty` });

/**
 * Input of `CheckoutService.createInvoice` (camelCase; the request uses the contract's casing); the
 * service checks what decorators cannot (decimals, characters, URLs, phone, e-mail, metadata size).
 */
export class CreateInvoiceDto {
  /** Amount to pay (`totalAmount`): positive, at most 2 decimals. */
  @IsNumber()
  @IsPositive()
  totalAmount: number;

  /**
   * What is bought: not empty. `& * ! % @` make the platform fail the payment (2001): refused, or
   * removed with `descriptionSpecialCharacters: 'strip'`.
   */
  @IsString()
  @NotBlank('description')
  description: string;

  /** Your unique reference (1 to 32 printable ASCII, no spaces; generated when omitted): your order id. */
  @OptionalText()
  @IsNotEmpty()
  @MaxLength(CLIENT_REFERENCE_MAX_LENGTH)
  @Matches(PRINTABLE_REFERENCE, {
    message: 'clientReference must contain only printable ASCII characters, without spaces',
  })
  clientReference?: string;

  /** Defaults: the module's callback route on `publicBaseUrl`, its `returnUrl` and `cancellationUrl`. */
  @OptionalText() callbackUrl?: string;
  @OptionalText() returnUrl?: string;
  @OptionalText() cancellationUrl?: string;

  @OptionalText()
  @NotBlank('payeeName')
  @MaxLength(100)
  payeeName?: string;

  /** Normalised to `233241234567` form. */
  @Allow()
  payeeMobileNumber?: string;

  @OptionalText()
  @MaxLength(254)
  payeeEmail?: string;

  @OptionalText()
  @NotBlank('merchantAccountNumber')
  merchantAccountNumber?: string;

  /** Your own data, handed back in the invoice's events: plain JSON, at most 4 KB serialised. */
  @Allow()
  metadata?: Record<string, unknown>;
}

/** Input of `CheckoutService.createInvoice`. */
export type CreateInvoiceInput = CreateInvoiceDto;

/** The status check's `data.status`: `Paid`, `Unpaid` or `Refunded` (other values are passed through). */
export type CheckoutPaymentStatus = TransactionPaymentStatus;

/** The typed answer of `CheckoutService.getStatus` (core's transaction status check). */
export type CheckoutTransactionStatus = TransactionStatus;
