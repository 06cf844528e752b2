import { compileValidator } from '#internal';
import { CheckoutCallbackDto } from './callback.dto.js';

/**
 * Validates a callback body, never throwing; `value` is a fresh object of the contract's fields only.
 * Built at load: a broken DTO fails at start-up, not on the first callback.
 */
export const validateCheckoutCallback = compileValidator(CheckoutCallbackDto);
