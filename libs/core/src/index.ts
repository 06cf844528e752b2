// nestjs-hubtel: what every module shares and a user may need (what the libraries share among
// themselves is `internal.ts`). test/api/core.api.txt pins this list (npm run api:update).
export * from './errors/hubtel.errors.js';

// A payment's verified figures (gross, charges, net), as the paid events of checkout and the service app carry them.
export type { ChargeBearer, PaymentAmounts } from './http/payment-amounts.js';

// Stores: the interface, the in-memory default, and how a module is given one.
export type {
  HubtelStore,
  HubtelStoreLoss,
  StoreEntry,
  StoreWriteOptions,
} from './store/hubtel-store.interface.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory.store.js';
export { isHubtelStore, type HubtelStoreOption } from './store/store-option.js';
export { HUBTEL_STORE, HUBTEL_JOB_RUNNER } from './hubtel.constants.js';

// Job runners: where and when recorded jobs run; what a job that gave up emits.
export * from './inbound/job-runner.js';
export { DeadLetterEvent } from './inbound/inbound-pipeline.js';

// Shutdown and dead letters (listed and replayed through the modules' services).
export { HubtelShuttingDownError } from './inbound/inbound-shutdown.js';
export {
  HubtelDeadLetterNotFoundError,
  HubtelNotDeadLetterError,
  type DeadLetter,
} from './inbound/inbound-dead-letters.js';

// Instrumentation: one observer of what the modules do (nestjs-hubtel/metrics is one).
export * from './telemetry/hubtel-telemetry.js';

// Option types shared by the modules, and reading them from the environment.
export type { HubtelApi, HubtelCredentials, HubtelRetryOptions } from './options/hubtel-options.types.js';
export type {
  HubtelHttpOptions,
  HubtelShutdownOptions,
  HubtelStatusCheckBudgetOptions,
} from './options/hubtel-options.dto.js';
export { readEnvValue, type HubtelEnvSource } from './options/hubtel-env.js';
export type { HubtelRouteOptions } from './inbound/inbound-controller.js';
export type { InboundAccessOptions } from './inbound/inbound-access.js';
export type { HubtelHandlerOptions } from './events/handler-decorator.js';

// Several accounts per module: the default account's name, resolvers, their errors.
export { HUBTEL_DEFAULT_ACCOUNT } from './hubtel.constants.js';
export {
  HubtelAccountLookupLimitError,
  HubtelUnknownAccountError,
  type HubtelAccountResolver,
} from './accounts/hubtel-accounts.resolver.js';

// Phone numbers.
export { tryNormalizeMsisdn, normalizeMsisdn, type MsisdnResult } from './phone/msisdn.js';

// Logging: lines safe to write, phone numbers masked.
export { HubtelLogger, sanitizeLogParam } from './logging/hubtel-logger.js';
export { sanitizeLogValue } from './logging/log-sanitize.js';
export { maskMsisdn, maskPhoneNumbers } from './logging/redact.js';
