// nestjs-hubtel/service-app: service flows, fulfillment of paid orders and its callback.
// test/api/service-app.api.txt pins this list (npm run api:update after a deliberate change).
export { ServiceAppModule } from './service-app.module.js';
export type { ServiceAppAccountOptions, ServiceAppAccountAsyncOptions } from './service-app.module.js';
export { ServiceAppUnknownAccountError, ServiceAppWrongAccountError } from './service-app.errors.js';
export {
  serviceAppAccountsFromEnv,
  serviceAppOptionsFromEnv,
  type ServiceAppEnvAccounts,
} from './service-app.options.js';
export type { ServiceAppAccountOverrides, ServiceAppModuleOptions } from './service-app.options.js';
export type {
  ServiceAppStatusCheckOptions,
  ServiceAppVerificationOptions,
  ServiceAppUssdOptions,
} from './service-app.option-sections.js';
export type { ServiceFlowChannel } from './service-app.ussd.js';
export { SERVICE_APP_ROUTES, type ServiceAppMessages } from './service-app.constants.js';
export type * from './service-app.types.js';
export { ServiceFlowRequestDto, FulfillmentRequestDto } from './service-app.dto.js';

// Writing flows
export {
  ServiceFlow,
  FlowStep,
  ServiceFlowBuilder,
  ServiceFlowService,
  type ServiceFlowOptions,
  type FlowStepOptions,
} from './flow/index.js';
export * from './service-flow.context.js';
export type * from './service-flow.types.js';

// Fulfillment
export {
  FulfillmentService,
  FulfillmentAccount,
  FulfillmentRejectedError,
  type FulfillmentOrderStatus,
  type FulfillmentReceipt,
} from './fulfillment/index.js';
export type {
  FulfillmentOrderClaims,
  FulfillmentClaimedItem,
  FulfillmentClaimedPayment,
} from './fulfillment.claims.js';
export {
  ServiceAppEvents,
  FulfillmentRequestedEvent,
  FulfillmentCallbackSentEvent,
  FulfillmentRejectedEvent,
  FulfillmentAttentionEvent,
  type FulfillmentAttention,
  deferFulfillment,
  failFulfillment,
  fulfilled,
  type FulfillmentOutcome,
  type FulfillmentPayment,
  type FulfillmentRejection,
  type ServiceAppDeadLetterEvent,
  ServiceQueryEvent,
  type ServiceQueryAnswer,
} from './service-app.events.js';
export * from './service-app.decorators.js';
