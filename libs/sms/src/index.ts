export { SmsModule } from './sms.module.js';
export { SmsService } from './sms.service.js';
export {
  SMS_MODULE_OPTIONS,
  type SmsModuleAsyncOptions,
  type SmsModuleExtras,
  type SmsModuleForRootOptions,
} from './sms.module-definition.js';
export {
  resolveSmsOptions,
  smsTransportConfig,
  type ResolvedSmsOptions,
  type SmsModuleOptions,
} from './sms.options.js';
export { smsOptionsFromEnv } from './sms.env.js';
export { SMS_DEFAULTS, SMS_HTTP_TRANSPORT, SMS_LIMITS, SMS_OPTIONS, SMS_PATHS } from './sms.constants.js';
export { SmsBatchAbortedError } from './sms.errors.js';
export { countSmsSegments, type SmsEncoding, type SmsSegmentInfo } from './sms-segments.js';
export type {
  SendBatchCounts,
  SendBatchInput,
  SendBatchProgress,
  SendBatchResult,
  SendSmsInput,
  SendSmsResult,
  SmsBatchApiResponse,
  SmsBatchReport,
  SmsBatchStatus,
  SmsBatchSummary,
  SmsFailedRecipient,
  SmsMessageStatus,
  SmsRecipients,
  SmsSentRecipient,
} from './sms.types.js';
