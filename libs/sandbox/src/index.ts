/**
 * `nestjs-hubtel/sandbox`: a local stand-in for the Hubtel platform (SMS, online checkout with a
 * hosted payment page, the transaction status check, programmable services), with fault
 * injection, for development and tests without real money or a public address.
 */
export { HubtelSandbox, type WaitOptions } from './hubtel-sandbox.js';
export { SandboxModule } from './sandbox.module.js';
export {
  SANDBOX_MODULE_OPTIONS,
  SANDBOX_OPTIONS_TYPE,
  SANDBOX_ASYNC_OPTIONS_TYPE,
  type SandboxModuleOptions,
} from './sandbox.module-definition.js';
export {
  SANDBOX_DEFAULT_CREDENTIALS,
  SANDBOX_DEFAULT_POS_SALES_ID,
  SANDBOX_DEFAULT_HOST,
  SANDBOX_DEFAULT_CLI_PORT,
  SANDBOX_DEFAULT_RECORD_LIMIT,
  SANDBOX_PATHS,
  SERVICE_APP_DEFAULT_PATHS,
} from './sandbox.constants.js';
export { SANDBOX_DASHBOARD_PATH } from './dashboard/sandbox-dashboard.js';
export { SandboxNotFoundError, SandboxStateError, type FieldError } from './sandbox.errors.js';
export {
  SandboxFaults,
  type InboundFaultSpec,
  type CallbackFaultSpec,
  type CallbackFaultMatch,
  type FaultHandle,
} from './sandbox-faults.js';
export type { PayOptions, PaymentResult } from './sandbox-payments.js';
export {
  SandboxServiceSession,
  checkServiceFlowResponse,
  type ServiceAppDriverOptions,
  type ServicePayOptions,
  type ForgedFulfillmentOptions,
  type RecordServicePaymentOptions,
  type ServicePayResult,
} from './sandbox-service-app.js';
export { basicAuthHeader } from './sandbox-http.js';
export { sandboxEnv } from './sandbox-env.js';
export {
  main as runSandboxCli,
  startSandboxCli,
  parseSandboxCliArgs,
  describeSandbox,
  SANDBOX_CLI_USAGE,
  CliUsageError,
  type CliIO,
} from './cli/sandbox-cli.js';
export type * from './sandbox.types.js';
