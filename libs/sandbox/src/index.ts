/**
 * `nestjs-hubtel/sandbox`: a local stand-in for the Hubtel platform (SMS, online checkout with a
 * hosted payment page, the transaction status check, programmable services), with fault
 * injection, for development and tests without real money or a public address.
 * test/api/sandbox.api.txt pins this list (npm run api:update after a deliberate change).
 */
export { HubtelSandbox } from './sandbox.server.js';
export type { WaitOptions } from './sandbox.records.js';
export { SandboxModule, type SandboxModuleOptions } from './sandbox.module.js';
export { SandboxNotFoundError, SandboxStateError, type FieldError } from './sandbox.errors.js';
export {
  SandboxFaults,
  type InboundFaultSpec,
  type CallbackFaultSpec,
  type CallbackFaultMatch,
  type FaultHandle,
} from './sandbox.faults.js';
export type { PayOptions, PaymentResult } from './checkout.payments.js';
export { SandboxServiceSession } from './service-app.driver.js';
export type {
  ServiceAppDriverOptions,
  ServicePayOptions,
  ForgedFulfillmentOptions,
  ServicePayResult,
} from './service-app.driver-types.js';
export type { RecordServicePaymentOptions } from './service-app.payments.js';
export type { SandboxChargeOptions } from './payment.charges.js';
export type * from './sandbox.types.js';
export type * from './sandbox.option-types.js';
export type * from './sandbox.route-types.js';
export { sandboxEnv, type SandboxEnvOptions } from './sandbox.env.js';
// What the testing kit uses too, said once here: the platform's wording and ids, one request's client.
export { ghanaNetwork, hexId, paymentDescription, requestOnce } from './sandbox.http.js';
export { serverOrigin } from './sandbox.listener.js';
export { messageStatusBody, sentMessageBody } from './sms.api.js';
