import type { HubtelApi } from './options/hubtel-options.types.js';

/** The platform's production addresses; each can be overridden per module (the SMS host has moved twice). */
export const HUBTEL_DEFAULT_BASE_URLS: Readonly<Record<HubtelApi, string>> = Object.freeze({
  sms: 'https://sms.hubtel.com',
  checkout: 'https://payproxyapi.hubtel.com',
  status: 'https://api-txnstatus.hubtel.com',
  // Port 9055, not 443: the platform's fulfillment callback receiver listens there.
  fulfillment: 'https://gs-callback.hubtel.com:9055',
});

/** Name of the account `forRoot` / `forRootAsync` configure, in every module (and its labels). */
export const HUBTEL_DEFAULT_ACCOUNT = 'default';

/** An account name: safe in a URL path segment, a metric label, a log context and a store key. */
export const HUBTEL_ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Country code put in front of national numbers written with a leading 0 (Ghana). */
export const HUBTEL_DEFAULT_COUNTRY_CODE = '233';

/** Environment variable names the options classes declare (`@HubtelOption({ env })`), and HUBTEL_ACCOUNTS. */
export const HUBTEL_ENV = Object.freeze({
  clientId: 'HUBTEL_CLIENT_ID',
  clientSecret: 'HUBTEL_CLIENT_SECRET',
  smsClientId: 'HUBTEL_SMS_CLIENT_ID',
  smsClientSecret: 'HUBTEL_SMS_CLIENT_SECRET',
  smsUrl: 'HUBTEL_SMS_URL',
  smsSenderId: 'HUBTEL_SMS_SENDER_ID',
  checkoutUrl: 'HUBTEL_CHECKOUT_URL',
  statusUrl: 'HUBTEL_STATUS_URL',
  callbackUrl: 'HUBTEL_CALLBACK_URL',
  /** HUBTEL_CALLBACK_CLIENT_ID: the Basic-auth pair of the fulfillment callback, when the account has one. */
  callbackClientId: 'HUBTEL_CALLBACK_CLIENT_ID',
  callbackClientSecret: 'HUBTEL_CALLBACK_CLIENT_SECRET',
  /** The path secret of checkout's callback route (`access.pathSecret`). */
  checkoutPathSecret: 'HUBTEL_CHECKOUT_PATH_SECRET',
  /** The path secret of the service app's two endpoints (`access.pathSecret`). */
  serviceAppPathSecret: 'HUBTEL_SERVICE_APP_PATH_SECRET',
  posSalesId: 'HUBTEL_POS_SALES_ID',
  merchantAccountNumber: 'HUBTEL_MERCHANT_ACCOUNT_NUMBER',
  timeoutMs: 'HUBTEL_TIMEOUT_MS',
  retryMaxAttempts: 'HUBTEL_RETRY_MAX_ATTEMPTS',
  retryBaseDelayMs: 'HUBTEL_RETRY_BASE_DELAY_MS',
  retryMaxDelayMs: 'HUBTEL_RETRY_MAX_DELAY_MS',
  defaultCountryCode: 'HUBTEL_DEFAULT_COUNTRY_CODE',
  /** Further accounts (`north,south`), each read with its name after `HUBTEL_` (HUBTEL_NORTH_SMS_…). */
  accounts: 'HUBTEL_ACCOUNTS',
} as const);

/** Injection token of the app-wide HubtelStore (`HubtelRedisModule.forRoot()`); else a MemoryStore. */
export const HUBTEL_STORE = Symbol.for('nestjs-hubtel:store');

/** Injection token of an app-wide JobRunner (`HubtelBullmqModule.forRoot()`); without one, jobs run here. */
export const HUBTEL_JOB_RUNNER = Symbol.for('nestjs-hubtel:job-runner');

/** Injection token of the instance's one StatusCheckBudget, shared by every module's status checks. */
export const HUBTEL_STATUS_CHECK_BUDGET = Symbol.for('nestjs-hubtel:status-check-budget');

/** Default `statusCheckBudget.perMinute` (10 a second; the platform's per-merchant limit is undocumented). */
export const HUBTEL_DEFAULT_STATUS_CHECKS_PER_MINUTE = 600;
