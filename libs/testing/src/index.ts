/**
 * `nestjs-hubtel/testing`: what you need to test your own app with the suite — the sandbox in
 * your test (with module options pointing at it), contract-exact builders of the platform's
 * callbacks and requests, helpers that send them to your app, and an SMS capture that needs no
 * network. Works with Jest (ESM or CommonJS) and any other runner; no module mocking.
 */
export {
  createTestSandbox,
  TestSandbox,
  type TestSandboxOptions,
  type CheckoutTestOptions,
  type MarkPaidOptions,
} from './test-sandbox.js';
export {
  buildCheckoutCallback,
  buildFulfillmentRequest,
  buildFulfillmentCallback,
  buildServiceFlowRequest,
  mobileMoneyChannel,
  randomHubtelId,
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
  endpointUrl,
  type HubtelTestTarget,
  type NestAppLike,
  type SendOptions,
  type SentResponse,
} from './testing.http.js';
export { SmsCapture, type CapturedSms, type OverridableModuleBuilder } from './sms-capture.js';
export { TESTING_DEFAULTS, TESTING_PATHS, TEST_SANDBOX_TUNNEL_PATH } from './testing.constants.js';
export type { CheckoutCallbackBody, FulfillmentRequestBody, ServiceFlowRequest } from 'nestjs-hubtel/sandbox';

// Developer tools (also the `hubtel-simulate` and `hubtel-trigger` commands)
export {
  TerminalSimulator,
  toOptionValue,
  defaultFulfillmentUrl,
  type TerminalSimulatorOptions,
  type SimulationResult,
} from './cli/terminal-simulator.js';
export {
  runSimulateCli,
  parseSimulateCliArgs,
  SIMULATE_CLI_USAGE,
  type ParsedSimulateCli,
} from './cli/simulate-cli.js';
export {
  runTriggerCli,
  runTrigger,
  buildTriggerBody,
  parseTriggerCliArgs,
  TRIGGER_CLI_USAGE,
  TRIGGER_KINDS,
  FORGERIES,
  type TriggerKind,
  type Forgery,
  type TriggerOptions,
  type TriggerReport,
  type ParsedTriggerCli,
} from './cli/trigger-cli.js';
export { CliUsageError, stripAnsi, type CliStreams } from './cli/cli-support.js';
