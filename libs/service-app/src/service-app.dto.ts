import { Allow, IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength, validateSync, type ValidationError } from 'class-validator';
import type { ValidationIssue } from 'nestjs-hubtel';
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
  @IsString()
  @Matches(/^(initiation|response|release|timeout)$/i, {
    message: 'Type must be one of initiation, Response, release (any letter case)',
  })
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

export type BodyValidation<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/**
 * Builds a validator for a flat DTO: copies only the declared fields onto a fresh instance (so
 * hostile keys such as `__proto__` never reach class-validator or the app), validates, and
 * returns the plain picked object.
 */
function flatValidator<T>(dto: new () => object, fields: readonly (keyof T & string)[]): (input: unknown) => BodyValidation<T> {
  return (input) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      return { ok: false, issues: [{ field: '', message: 'the body must be a JSON object' }] };
    }
    const source = input as Record<string, unknown>;
    const instance = Object.create(dto.prototype) as Record<string, unknown>;
    const value: Record<string, unknown> = {};
    for (const field of fields) {
      if (Object.prototype.hasOwnProperty.call(source, field) && source[field] !== undefined) {
        instance[field] = source[field];
        value[field] = source[field];
      }
    }
    const errors = validateSync(instance, { forbidUnknownValues: false, validationError: { target: false, value: false } });
    if (errors.length > 0) return { ok: false, issues: flatten(errors) };
    return { ok: true, value: value as T };
  };
}

function flatten(errors: ValidationError[], parent = ''): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) issues.push({ field, message });
    if (error.children?.length) issues.push(...flatten(error.children, field));
  }
  return issues;
}

export const validateServiceFlowRequest = flatValidator<ServiceFlowRequest>(ServiceFlowRequestDto, [
  'Type',
  'Message',
  'ServiceCode',
  'Mobile',
  'SessionId',
  'Operator',
  'ClientState',
  'Sequence',
]);

export const validateFulfillmentRequest = flatValidator<FulfillmentRequest>(FulfillmentRequestDto, [
  'OrderId',
  'SessionId',
  'ExtraData',
  'OrderInfo',
]);
