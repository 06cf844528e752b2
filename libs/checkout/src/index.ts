/*
 * nestjs-hubtel/checkout — the public entry of the CheckoutModule.
 */
export { CheckoutModule } from './checkout.module.js';
export {
  CHECKOUT_MODULE_OPTIONS,
  type CheckoutModuleExtras,
  type CheckoutModuleForRootOptions,
  type CheckoutModuleAsyncOptions,
} from './checkout.module-definition.js';
export {
  resolveCheckoutOptions,
  checkoutOptionsFromEnv,
  type CheckoutModuleOptions,
  type CheckoutVerificationOptions,
  type CheckoutAmountToleranceOptions,
  type CheckoutRecheckOptions,
  type CheckoutReconciliationOptions,
  type CheckoutHandlerOptions,
  type ResolvedCheckoutOptions,
} from './checkout.options.js';
export {
  CHECKOUT_RESOLVED_OPTIONS,
  CHECKOUT_STORE,
  CHECKOUT_DEFAULT_CALLBACK_PATH,
  CHECKOUT_KEY_PREFIX,
  CHECKOUT_DEFAULTS,
  CHECKOUT_CONFIRM_JOB,
  CHECKOUT_CURRENCY,
  CLIENT_REFERENCE_MAX_LENGTH,
  DESCRIPTION_FORBIDDEN_CHARACTERS,
} from './checkout.constants.js';
export { CheckoutService, type CheckoutCallbackResult } from './checkout.service.js';
export { CheckoutUnknownOutcomeError } from './checkout.errors.js';
export {
  CheckoutReconciler,
  type CheckoutReconcileReport,
  type CheckoutReconcileResult,
  type CheckoutReconcileOutcome,
} from './checkout-reconciler.js';
export { CheckoutCallbackController, type CheckoutCallbackAck } from './checkout-callback.controller.js';
export {
  CheckoutEvents,
  CheckoutPaidEvent,
  CheckoutFailedEvent,
  CheckoutRejectedEvent,
  CheckoutExpiredEvent,
  type CheckoutEventName,
  type CheckoutDeadLetterEvent,
  type CheckoutEvidenceSource,
  type CheckoutPaymentInfo,
  type CheckoutRejectionReason,
} from './checkout.events.js';
export {
  OnCheckoutPaid,
  OnCheckoutFailed,
  OnCheckoutRejected,
  OnCheckoutExpired,
  OnCheckoutDeadLetter,
} from './checkout.decorators.js';
export type { CheckoutInvoice, CheckoutInvoiceStatus } from './checkout-invoice.store.js';
export { amountMatches, classifyCallback, type CallbackClaim } from './checkout-verifier.js';
export { validateCheckoutCallback, type CallbackValidation } from './checkout-callback.validation.js';
export {
  CheckoutCallbackDto,
  CheckoutCallbackDataDto,
  CheckoutCallbackPaymentDetailsDto,
} from './dto/checkout-callback.dto.js';
export type {
  CreateInvoiceInput,
  CheckoutInvoiceCreated,
  CheckoutInitiateRequestBody,
  CheckoutInitiateResponseBody,
} from './dto/create-invoice.dto.js';
export type {
  CheckoutTransactionStatus,
  CheckoutPaymentStatus,
  TransactionStatusResponseBody,
} from './dto/transaction-status.dto.js';
