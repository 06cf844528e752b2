/**
 * `nestjs-hubtel/testing`: what you need to test your own app with the suite — the sandbox in
 * your test (with module options pointing at it), contract-exact builders of the platform's
 * callbacks and requests, helpers that send them to your app, and an SMS capture that needs no
 * network. Works with Jest (ESM or CommonJS) and any other runner; no module mocking.
 * test/api/testing.api.txt pins this list (npm run api:update after a deliberate change).
 */
export {
  createTestSandbox,
  TestSandbox,
  type TestSandboxOptions,
  type CheckoutTestOptions,
  type MarkPaidOptions,
  type TestSandboxAccount,
} from './testing.sandbox.js';
export {
  buildCheckoutCallback,
  buildFulfillmentRequest,
  buildFulfillmentCallback,
  buildServiceFlowRequest,
  type BuildCheckoutCallbackInput,
  type BuildFulfillmentRequestInput,
  type BuildFulfillmentCallbackInput,
  type BuildServiceFlowRequestInput,
  type CheckoutCallbackOutcome,
  type CheckoutInvoiceLike,
  type FulfillmentCallbackBody,
} from './testing.builders.js';
export {
  sendCheckoutCallback,
  sendFulfillmentRequest,
  sendServiceFlowRequest,
  sendFulfillmentCallback,
  sendJson,
  type HubtelTestTarget,
  type NestAppLike,
  type SendOptions,
  type SentResponse,
} from './testing.http.js';
export { SmsCapture, type CapturedSms, type OverridableModuleBuilder } from './testing.sms-capture.js';
export type { CheckoutCallbackBody, FulfillmentRequestBody, ServiceFlowRequest } from 'nestjs-hubtel/sandbox';

// Developer tools (also the `hubtel-simulate` and `hubtel-trigger` commands), for scripts of your own
export { TerminalSimulator } from './cli/simulate.terminal.js';
export type { TerminalSimulatorOptions, SimulationResult } from './cli/simulate.types.js';
export { runSimulateCli } from './cli/simulate.cli.js';
export {
  runTriggerCli,
  runTrigger,
  type TriggerKind,
  type Forgery,
  type TriggerOptions,
  type TriggerReport,
} from './cli/trigger.cli.js';
export type { CliStreams } from './cli/cli.support.js';
