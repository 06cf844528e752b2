import { Allow, IsNotEmpty, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { HubtelValidationError } from 'nestjs-hubtel';
import { compileValidator, findHostileStructure, type CompiledValidator } from '#internal';
import type { FulfillmentRequest, ServiceFlowRequest } from './service-app.types.js';

/*
 * Request bodies the platform sends, as class-validator DTOs. Controllers take `@Body() body:
 * unknown` and validate here, so a host app's global ValidationPipe (whitelist, forbid...) never
 * rejects the platform's extra fields (`Timeout`, `Platform`, ...): unknown fields are ignored.
 *
 * Fields the module reads are required as the contract says ("always" present); fields it does
 * not read (`Operator`, `ClientState`, `Sequence`) are accepted in any shape, so a platform change
 * there cannot break live sessions.
 */

const ID_MAX = 128;

export class ServiceFlowRequestDto {
  // Any request type is answered (an unknown one with a polite Release, as the platform's SDK
  // does): only its shape is checked here.
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  Type!: string;

  @IsString()
  @MaxLength(4_096)
  Message!: string;

  @IsString()
  @MaxLength(64)
  ServiceCode!: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(32)
  Mobile!: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(ID_MAX)
  SessionId!: string;

  @IsOptional()
  @IsString()
  @MaxLength(256)
  Operator?: string;

  @IsOptional()
  @IsString()
  @MaxLength(4_096)
  ClientState?: string;

  @Allow()
  Sequence?: string | number;

  /** `USSD` on the USSD channel (newer platform field); read only when it is a string. */
  @Allow()
  Platform?: unknown;
}

export class FulfillmentRequestDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(ID_MAX)
  OrderId!: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(ID_MAX)
  SessionId!: string;

  @IsOptional()
  @IsObject()
  ExtraData?: Record<string, unknown>;

  @Allow()
  OrderInfo?: unknown;
}

/** Validators built once per DTO (core's compileValidator: the DTO's rules as JSON Schema, run by Ajv). */
export const validateServiceFlowRequest: CompiledValidator<ServiceFlowRequest> = compileValidator(
  ServiceFlowRequestDto,
) as CompiledValidator<ServiceFlowRequest>;

export const validateFulfillmentRequest: CompiledValidator<FulfillmentRequest> = compileValidator(
  FulfillmentRequestDto,
) as CompiledValidator<FulfillmentRequest>;

/**
 * The request a body holds, or a HubtelValidationError listing what is wrong. Prototype keys
 * (`__proto__`, `constructor`, `prototype`) and absurd nesting are refused before validation, not
 * dropped with the other unknown fields: the platform never sends them, and Express keeps
 * `"__proto__"` as a key where Fastify's parser refuses it, so both adapters answer the same 400.
 */
export function parseRequest<T>(validate: CompiledValidator<T>, body: unknown, what: string): T {
  const hostile = findHostileStructure(body);
  const checked = hostile ? { ok: false as const, issues: [hostile] } : validate(body);
  if (!checked.ok) {
    throw new HubtelValidationError(
      `Invalid ${what}: ${checked.issues.map((i) => i.message).join('; ')}`,
      checked.issues,
    );
  }
  return checked.value;
}
