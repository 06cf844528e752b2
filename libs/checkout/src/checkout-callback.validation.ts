import { compileValidator, type CompiledValidator, type ValidationIssue } from 'nestjs-hubtel';
import { CheckoutCallbackDto } from './dto/checkout-callback.dto.js';

export type CallbackValidation =
  { ok: true; value: CheckoutCallbackDto } | { ok: false; issues: ValidationIssue[] };

/** Keys that can reach an object's prototype when copied onto it: never part of a callback. */
const HOSTILE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** A callback is two levels deep; anything much deeper is an attack on the walker, not data. */
const MAX_DEPTH = 8;
const MAX_NODES = 2_000;

/**
 * Finds the first reason a parsed JSON body must not be validated at all: a key that could pollute
 * a prototype if anything copied it (Express's JSON parser keeps `"__proto__"` as an own key), or a
 * structure far deeper or larger than any callback. Iterative, so a deep body cannot blow the stack.
 */
export function findHostileStructure(body: unknown): ValidationIssue | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: body, path: '', depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (++nodes > MAX_NODES)
      return { field: path || '(body)', message: `body has more than ${MAX_NODES} objects and arrays` };
    if (depth >= MAX_DEPTH)
      return { field: path || '(body)', message: `body is nested deeper than ${MAX_DEPTH} levels` };
    for (const key of Object.keys(value)) {
      const field = path ? `${path}.${key}` : key;
      if (HOSTILE_KEYS.has(key)) return { field, message: `key "${key}" is not allowed` };
      stack.push({ value: (value as Record<string, unknown>)[key], path: field, depth: depth + 1 });
    }
  }
  return undefined;
}

let compiled: CompiledValidator<CheckoutCallbackDto> | undefined;

/**
 * The callback DTO compiled once by the core's `compileValidator` (class-validator's rules and
 * messages, without building class instances). Called at module start-up so a broken DTO fails
 * at bootstrap.
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
