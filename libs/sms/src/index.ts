/* nestjs-hubtel/sms. test/api/sms.api.txt pins this list (npm run api:update after a deliberate change). */
export { SmsModule } from './sms.module.js';
export { SmsService } from './sms.service.js';
export type { SmsSender } from './sms.client.js';
export type {
  SmsAccountAsyncOptions,
  SmsAccountOptions,
  SmsModuleAsyncOptions,
  SmsModuleExtras,
  SmsModuleForRootOptions,
} from './sms.module.js';
export type { SmsAccountOverrides, SmsAccountResolver, SmsModuleOptions } from './sms.options.js';
export { smsAccountsFromEnv, smsOptionsFromEnv, type SmsEnvAccounts } from './sms.options.js';
// Several accounts: @InjectSms(name), its token (for overrideProvider), the default account's name.
export { InjectSms } from './sms.decorators.js';
export { SMS_DEFAULT_ACCOUNT, getSmsAccountToken } from './sms.constants.js';
// The transport token (tests replace it, see SmsCapture of nestjs-hubtel/testing) and the API paths.
export { SMS_HTTP_TRANSPORT, SMS_PATHS, SMS_TRANSPORT_FACTORY } from './sms.constants.js';
export type { SmsTransportFactory } from './sms.accounts.js';
export { SmsBatchAbortedError, SmsUnknownAccountError } from './sms.errors.js';
export { countSmsSegments, type SmsEncoding, type SmsSegmentInfo } from './sms.segments.js';
export type {
  SendBatchCounts,
  SendBatchInput,
  SendBatchProgress,
  SendBatchResult,
  SendSmsInput,
  SendSmsResult,
  SmsBatchReport,
  SmsBatchStatus,
  SmsBatchSummary,
  SmsFailedRecipient,
  SmsMessageStatus,
  SmsRecipients,
  SmsSentRecipient,
} from './sms.types.js';
