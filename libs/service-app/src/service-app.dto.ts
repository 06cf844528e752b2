import { Allow, IsNotEmpty, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { compileValidator, rules } from '#internal';

/* The platform's request bodies: fields the module reads are required, the rest loose or ignored. */

const ID_MAX = 128;

/** A required, non-empty text of at most `max` characters; an optional text of at most `max`. */
const IsText = (max: number) => rules(IsString(), IsNotEmpty(), MaxLength(max));
const IsOptionalText = (max: number) => rules(IsOptional(), IsString(), MaxLength(max));

/** Service-flow request (platform → app), once validated (unknown extra fields are dropped). */
export class ServiceFlowRequestDto {
  /** As sent: compare case-insensitively (an unknown value gets a polite `Release`). */
  @IsText(64)
  Type!: string;

  /** Empty on initiation; the user's entry or the chosen option's `Value` otherwise. */
  @IsString()
  @MaxLength(4_096)
  Message!: string;

  @IsString()
  @MaxLength(64)
  ServiceCode!: string;

  @IsText(32)
  Mobile!: string;

  @IsText(ID_MAX)
  SessionId!: string;

  @IsOptionalText(256)
  Operator?: string;

  @IsOptionalText(4_096)
  ClientState?: string;

  /** Only on the initiating call. */
  @Allow()
  Sequence?: string | number;

  /** `USSD` on the USSD channel (newer platform field, not in the contract); read when a string. */
  @Allow()
  Platform?: unknown;
}

/** Fulfillment request (platform → app), once validated. */
export class FulfillmentRequestDto {
  @IsText(ID_MAX)
  OrderId!: string;

  @IsText(ID_MAX)
  SessionId!: string;

  @IsOptional()
  @IsObject()
  ExtraData?: Record<string, unknown>;

  @Allow()
  OrderInfo?: unknown;
}

/** Validators built once per DTO (core's compileValidator). */
export const validateServiceFlowRequest = compileValidator(ServiceFlowRequestDto);
export const validateFulfillmentRequest = compileValidator(FulfillmentRequestDto);
