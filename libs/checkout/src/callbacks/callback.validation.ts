import { type ValidationIssue } from 'nestjs-hubtel';
import { compileValidator, findHostileStructure, type CompiledValidator } from '#internal';
import { CheckoutCallbackDto } from './callback.dto.js';

export type CallbackValidation =
  { ok: true; value: CheckoutCallbackDto } | { ok: false; issues: ValidationIssue[] };

let compiled: CompiledValidator<CheckoutCallbackDto> | undefined;

/**
 * The callback DTO's validator, built once by the core's `compileValidator` (the DTO's rules as
 * JSON Schema, run by Ajv). Called at module start-up so a broken DTO fails at bootstrap.
 */
export function checkoutCallbackValidator(): CompiledValidator<CheckoutCallbackDto> {
  return (compiled ??= compileValidator(CheckoutCallbackDto));
}

/**
 * Validates a checkout web callback body. Never throws; anything that is not a JSON object with
 * the contract's fields comes back as issues (one per bad field). `value` is a fresh plain object
 * with the contract's fields only: unknown extra fields are accepted and left out.
 */
export function validateCheckoutCallback(body: unknown): CallbackValidation {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    const got =
      body === null
        ? 'null'
        : Array.isArray(body)
          ? 'an array'
          : body === undefined
            ? 'no body'
            : typeof body;
    return { ok: false, issues: [{ field: '(body)', message: `body must be a JSON object, got ${got}` }] };
  }
  // Refused before validation: unknown keys are otherwise accepted and ignored, and these must not be.
  const hostile = findHostileStructure(body);
  if (hostile) return { ok: false, issues: [hostile] };
  return checkoutCallbackValidator()(body);
}
