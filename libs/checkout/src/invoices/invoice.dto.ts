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

/** Input of `CheckoutService.createInvoice`. Our names are camelCase; the request uses the contract's casing. */
export interface CreateInvoiceInput {
  /** Amount to pay (`totalAmount`): positive, at most 2 decimals. */
  totalAmount: number;
  /**
   * What is bought: not empty. `& * ! % @` make the platform fail the payment (2001): refused, or
   * removed with `descriptionSpecialCharacters: 'strip'`.
   */
  description: string;
  /** Your unique reference (1 to 32 printable ASCII, no spaces; generated when omitted): your order id. */
  clientReference?: string;
  /** Defaults: the module's callback route on `publicBaseUrl`, its `returnUrl` and `cancellationUrl`. */
  callbackUrl?: string;
  returnUrl?: string;
  cancellationUrl?: string;
  payeeName?: string;
  /** Normalised to `233241234567` form. */
  payeeMobileNumber?: string;
  payeeEmail?: string;
  merchantAccountNumber?: string;
  /** Your own data, handed back in the invoice's events: plain JSON, at most 4 KB serialised. */
  metadata?: Record<string, unknown>;
}

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

/**
 * The shape `createInvoice` accepts, checked by core's validator; what no decorator says (decimals,
 * forbidden characters, URLs, phone, e-mail, metadata size) is checked by the service.
 */
export class CreateInvoiceDto implements CreateInvoiceInput {
  @IsNumber()
  @IsPositive()
  totalAmount: number;

  @IsString()
  @Matches(NOT_BLANK, { message: 'description must not be empty' })
  description: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(CLIENT_REFERENCE_MAX_LENGTH)
  @Matches(PRINTABLE_REFERENCE, {
    message: 'clientReference must contain only printable ASCII characters, without spaces',
  })
  clientReference?: string;

  @IsOptional()
  @IsString()
  callbackUrl?: string;

  @IsOptional()
  @IsString()
  returnUrl?: string;

  @IsOptional()
  @IsString()
  cancellationUrl?: string;

  @IsOptional()
  @IsString()
  @Matches(NOT_BLANK, { message: 'payeeName must not be empty' })
  @MaxLength(100)
  payeeName?: string;

  /** Checked and normalised by normalizeMsisdn. */
  @Allow()
  payeeMobileNumber?: string;

  @IsOptional()
  @IsString()
  @MaxLength(254)
  payeeEmail?: string;

  @IsOptional()
  @IsString()
  @Matches(NOT_BLANK, { message: 'merchantAccountNumber must not be empty' })
  merchantAccountNumber?: string;

  /** Plain JSON of at most 4 KB: checked by the service (a size is no decorator). */
  @Allow()
  metadata?: Record<string, unknown>;
}

/** The status check's `data.status`: `Paid`, `Unpaid` or `Refunded` (other values are passed through). */
export type CheckoutPaymentStatus = TransactionPaymentStatus;

/** The typed answer of `CheckoutService.getStatus` (core's transaction status check). */
export type CheckoutTransactionStatus = TransactionStatus;
