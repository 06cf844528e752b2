// `#light/core`: what `hubtel-trigger`'s commands use of core, without loading Nest, axios or
// class-validator (about 1.6 s of CPU a run). No entry point: scripts/build.mjs rewrites it to a
// relative path, as `#internal`; the names are the same objects as the entry points' (same files).
export {
  HubtelApiError,
  HubtelConfigError,
  HubtelError,
  HubtelNetworkError,
  HubtelTimeoutError,
  HubtelValidationError,
  type ValidationIssue,
} from './errors/hubtel.errors.js';
export { HUBTEL_ACCOUNT_NAME, HUBTEL_DEFAULT_ACCOUNT } from './hubtel.constants.js';
export { tryNormalizeMsisdn } from './phone/msisdn.js';
export { maskPhoneNumbers } from './logging/redact.js';
export { DEFAULT_USSD_SCREEN, ussdScreen } from './text/gsm7.js';
export { isUssdRequest, serviceAppChannel } from './channel/service-app.channel.js';
