import { type ValidationIssue } from 'nestjs-hubtel';
import { compileValidator, findHostileStructure, type CompiledValidator } from '#internal';
import { CheckoutCallbackDto } from './callback.dto.js';

export type CallbackValidation =
  { ok: true; value: CheckoutCallbackDto } | { ok: false; issues: ValidationIssue[] };

let compiled: CompiledValidator<CheckoutCallbackDto> | undefined;

/** The callback DTO's validator, built once (at start-up: a broken DTO fails at bootstrap). */
export function checkoutCallbackValidator(): CompiledValidator<CheckoutCallbackDto> {
  return (compiled ??= compileValidator(CheckoutCallbackDto));
}

/** Validates a callback body, never throwing; `value` is a fresh object of the contract's fields only. */
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
