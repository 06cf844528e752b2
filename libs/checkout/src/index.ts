/* nestjs-hubtel/checkout. test/api/checkout.api.txt pins this list (npm run api:update after a change). */
export { CheckoutModule } from './checkout.module.js';
export type {
  CheckoutModuleExtras,
  CheckoutModuleForRootOptions,
  CheckoutModuleAsyncOptions,
  CheckoutAccountOptions,
  CheckoutAccountAsyncOptions,
} from './checkout.module.js';
export {
  checkoutOptionsFromEnv,
  type CheckoutModuleOptions,
  type CheckoutAccountOverrides,
  type CheckoutAccountResolver,
  type CheckoutModuleWideOption,
} from './checkout.options.js';
export type {
  CheckoutVerificationOptions,
  CheckoutAmountToleranceOptions,
  CheckoutRecheckOptions,
  CheckoutReconciliationOptions,
  CheckoutHandlerOptions,
} from './checkout.option-sections.js';
export { checkoutAccountsFromEnv, type CheckoutEnvAccounts } from './checkout.options.js';
export { CHECKOUT_DEFAULT_CALLBACK_PATH } from './checkout.constants.js';
export {
  CheckoutService,
  type CheckoutAccountService,
  type CheckoutAttentionResolution,
} from './checkout.service.js';
export type { CheckoutCallbackResult } from './callbacks/callback.handler.js';
export type { CheckoutKnownInvoice } from './invoices/invoice.issuer.js';
export type { CallbackClaim } from './callbacks/callback.verifier.js';
export { CheckoutUnknownOutcomeError, CheckoutUnknownAccountError } from './checkout.errors.js';
export {
  CheckoutReconciler,
  type CheckoutReconcileReport,
  type CheckoutReconcileResult,
  type CheckoutReconcileOutcome,
} from './reconciliation/invoice.reconciler.js';
export {
  CheckoutEvents,
  type CheckoutInvoiceEvent,
  type CheckoutPaidEvent,
  type CheckoutFailedEvent,
  type CheckoutRejectedEvent,
  type CheckoutExpiredEvent,
  type CheckoutAttentionEvent,
  type CheckoutAttention,
  type CheckoutEventName,
  type CheckoutDeadLetterEvent,
  type CheckoutEvidenceSource,
  type CheckoutPaymentInfo,
  type CheckoutPayee,
  type CheckoutRejectionReason,
} from './checkout.events.js';
export {
  OnCheckoutPaid,
  OnCheckoutFailed,
  OnCheckoutRejected,
  OnCheckoutExpired,
  OnCheckoutDeadLetter,
  OnCheckoutAttention,
  InjectCheckout,
} from './checkout.decorators.js';
export type { CheckoutInvoice, CheckoutInvoiceStatus } from './invoices/invoice.store.js';
export {
  CheckoutCallbackDto,
  CheckoutCallbackDataDto,
  CheckoutCallbackPaymentDetailsDto,
} from './callbacks/callback.dto.js';
export type {
  CreateInvoiceInput,
  CheckoutInvoiceCreated,
  CheckoutTransactionStatus,
  CheckoutPaymentStatus,
} from './invoices/invoice.dto.js';
