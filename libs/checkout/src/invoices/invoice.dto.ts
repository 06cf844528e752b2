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
   * What is bought (`description`). Must not be empty. The characters `& * ! % @` make the
   * platform fail the payment (code 2001): they are refused, or removed when the module option
   * `descriptionSpecialCharacters` is `'strip'`.
   */
  description: string;
  /**
   * Your unique reference (`clientReference`): 1 to 32 printable ASCII characters, no spaces.
   * Generated (32 hex characters) when omitted. It is the key of the invoice: use your order id.
   */
  clientReference?: string;
  /** Where the platform posts the result. Default: this module's callback route on `publicBaseUrl`. */
  callbackUrl?: string;
  /** Where the payer's browser goes after paying. Default: the module option `returnUrl`. */
  returnUrl?: string;
  /** Where the payer's browser goes after cancelling. Default: the module option `cancellationUrl`. */
  cancellationUrl?: string;
  /** `PayeeName`. */
  payeeName?: string;
  /** `PayeeMobileNumber`, normalised to `233241234567` form. */
  payeeMobileNumber?: string;
  /** `PayeeEmail`. */
  payeeEmail?: string;
  /** `merchantAccountNumber`; default: the module option. */
  merchantAccountNumber?: string;
  /**
   * Your own data (an order id, a cart), kept with the invoice and handed back in its events.
   * Plain JSON only; at most 4 KB serialised.
   */
  metadata?: Record<string, unknown>;
}

/** The platform's `data` for a created invoice. Send the payer to `checkoutUrl`. */
export interface CheckoutInvoiceCreated {
  /** Page where the payer pays. */
  checkoutUrl: string;
  /** The platform's reference of the checkout. */
  checkoutId: string;
  /** Your reference (as sent). */
  clientReference: string;
  /** Page that lets the payer pay on the page the request came from. */
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
 * The shape `createInvoice` accepts, as a class-validator DTO checked by the core's validator
 * (the same road as the inbound bodies). What no decorator says stays in the service: the amount's
 * two decimals (with a float tolerance), the description's forbidden characters (refused or
 * stripped), URLs and their module-option defaults, the payee's phone number and e-mail, the
 * metadata's size. Null reads as "not given".
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

/**
 * The typed answer of `CheckoutService.getStatus` (transaction status check,
 * `GET /transactions/{posSalesId}/status?clientReference=...`), read by core's
 * `requestTransactionStatus`, which the service app's payment verification uses too.
 */
export type CheckoutTransactionStatus = TransactionStatus;
