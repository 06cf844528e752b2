// `#internal`: what the suite's libraries share among themselves. No entry point: scripts/build.mjs
// rewrites `#internal` to a relative path. test/api/internal.api.txt lists it (npm run api:update).
export {
  InboundPipeline,
  DEFAULT_JOB_RETRY,
  type JobRefusal,
  type JobFollowUps,
  type JobRecord,
  type JobRetryPolicy,
  type JobStatus,
  type JobRunContext,
} from './inbound/inbound-pipeline.js';
export { InboundAccessPolicy, type InboundRequestLike } from './inbound/inbound-access.js';
export {
  inboundPaths,
  routeInbound,
  inboundPathAccount,
  type InboundAccount,
} from './inbound/inbound-route.js';
export { mountController } from './inbound/inbound-controller.js';
export { inboundHttpError } from './inbound/inbound-http-errors.js';
export { answerInbound, inboundSignal, type InboundAnswerOptions } from './inbound/inbound-answer.js';
export { inboundKit } from './inbound/inbound-kit.js';
export { parseInbound } from './inbound/inbound-body.js';
export {
  DEFAULT_JOB_RECORD_TTL_MS,
  listDeadLetters,
  requeueDeadLetter,
} from './inbound/inbound-dead-letters.js';
export { JobDeferral } from './inbound/inbound-job.types.js';
export { createHandlerDecorator, createListenerDecorator } from './events/handler-decorator.js';
export { AccountRegistry } from './accounts/hubtel-accounts.js';
export {
  ACCOUNT_TRANSPORTS,
  accountLoggerContext,
  hasAccountTransports,
  type HasAccountTransports,
  type ResolvedAccountResolver,
} from './accounts/hubtel-accounts.resolver.js';
export { accountEnvVariable } from './accounts/accounts-env.js';

export {
  HUBTEL_ACCOUNT_NAME,
  HUBTEL_DEFAULT_BASE_URLS,
  HUBTEL_DEFAULT_COUNTRY_CODE,
  HUBTEL_ENV,
  HUBTEL_STATUS_CHECK_BUDGET,
} from './hubtel.constants.js';
export { HubtelOption, optionFields, rules } from './options/hubtel-option.decorator.js';
export { withOptionDefaults } from './options/hubtel-options.declared.js';
export {
  hubtelModuleRecipe,
  type HubtelAccountAsyncOptions,
  type HubtelAccountParts,
  type HubtelDefaultAccount,
  type HubtelModuleExtras,
} from './options/hubtel-module.recipe.js';
export {
  hubtelOptionsRecipe,
  type HubtelAccountOptions,
  type HubtelEnvAccounts,
} from './options/hubtel-options.recipe.js';
export { HTTP_GROUPED, httpParts, type HubtelHttpParts } from './options/hubtel-options.http.js';
export { dropUndefined } from './options/hubtel-env.js';
export { assertStoreOption } from './store/store-option.js';
export { hubtelConnectionModule, type HubtelConnectionExtras } from './store/hubtel-connection.module.js';
export * from './store/redis.checks.js';
export { ErrorLogThrottle } from './logging/log-throttle.js';
export { within, withTimeout } from './retry/backoff.js';

export * from './http/http-transport.js';
export { hubtelHttpModule } from './http/undici-axios-adapter.js';
export { refusalDetail } from './http/hubtel-codes.js';
export { StatusCheckBudget } from './http/status-check.budget.js';
export * from './http/transaction-status.js';
export { ANSWER_FIELDS, fieldOf, withFieldNames } from './http/answer-fields.js';
export {
  judgeAmounts,
  amountsOf,
  amountMatches,
  cents,
  money,
  type AmountRule,
} from './http/payment-amounts.js';

export { echoValue, invalidMsisdnsError } from './phone/msisdn.js';
export { LOG_LINE_MAX_LENGTH, capLogText, escapeLogText, sanitizeLogLine } from './logging/log-sanitize.js';
export { describeError, redactToString } from './logging/redact.js';
export { sanitizingLogger } from './logging/hubtel-logger.js';

export {
  checkOptions,
  refuseRemovedOptions,
  declareAccessOptions,
  declareBackoff,
  declareCredentials,
  // The classes behind public option types: here under names no public entry point uses.
  HubtelHttpOptions as HubtelHttpOptionsDto,
  HubtelShutdownOptions as HubtelShutdownOptionsDto,
  IsHubtelShutdownGraceMs,
  HubtelStatusCheckBudgetOptions as HubtelStatusCheckBudgetOptionsDto,
  HubtelCountryCodeOption,
  IsOptionalSection,
  IsHubtelPosSalesId,
} from './options/hubtel-options.dto.js';
export * from './validation/validation.ajv.js';
export { deleteIfVersion } from './store/hubtel-store.interface.js';
export { isGsm7, gsm7Cost, ussdScreen, DEFAULT_USSD_SCREEN, type UssdScreenLimits } from './text/gsm7.js';
export * from './channel/service-app.channel.js';
