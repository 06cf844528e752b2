import {
  compileValidator,
  findHostileStructure,
  type CompiledValidator,
  type ValidationResult,
} from '#internal';
import { CheckoutCallbackDto } from './callback.dto.js';

let compiled: CompiledValidator<CheckoutCallbackDto> | undefined;

/** The callback DTO's validator, built once (at start-up: a broken DTO fails at bootstrap). */
export function checkoutCallbackValidator(): CompiledValidator<CheckoutCallbackDto> {
  return (compiled ??= compileValidator(CheckoutCallbackDto));
}

/** Validates a callback body, never throwing; `value` is a fresh object of the contract's fields only. */
export function validateCheckoutCallback(body: unknown): ValidationResult<CheckoutCallbackDto> {
  // Refused before validation: unknown keys are otherwise accepted and ignored, and these must not be.
  const hostile = findHostileStructure(body);
  return hostile ? { ok: false, issues: [hostile] } : checkoutCallbackValidator()(body);
}
