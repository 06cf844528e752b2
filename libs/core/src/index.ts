export * from './errors/hubtel.errors.js';
export * from './store/hubtel-store.interface.js';
export * from './store/memory.store.js';
export * from './store/store-option.js';
export * from './store/memory-store-warning.js';
export * from './retry/backoff.js';
export * from './inbound/inbound-pipeline.js';
export * from './inbound/job-runner.js';
export * from './inbound/inbound-access.js';
export * from './inbound/inbound-http-errors.js';
export * from './inbound/inbound-body.js';
export * from './inbound/inbound-controller.js';
export * from './events/handler-decorator.js';
export * from './events/handler-registry.js';
export * from './hubtel.constants.js';
export * from './options/hubtel-options.types.js';
export * from './options/hubtel-options.validation.js';
export * from './options/hubtel-env.js';
export * from './http/http-transport.js';
export * from './http/hubtel-codes.js';
export * from './http/transaction-status.js';
export * from './logging/redact.js';
export * from './logging/log-level.js';
export * from './http/undici-axios-adapter.js';
export * from './phone/msisdn.js';
export {
  compileValidator,
  type CompileValidatorOptions,
  type CompiledValidator,
  type ValidationResult,
} from './validation/validation.ajv.js';
export {
  LOG_LINE_MAX_LENGTH,
  LOG_VALUE_MAX_LENGTH,
  capLogText,
  escapeLogText,
  sanitizeLogLine,
  sanitizeLogValue,
} from './logging/log-sanitize.js';
export { HubtelLogger, sanitizeLogParam, sanitizingLogger } from './logging/hubtel-logger.js';
