// Fixed, documented credentials: a zero-configuration app and the tests agree on them. They
// protect nothing; the real platform's keys never go near the sandbox.
export const SANDBOX_DEFAULT_CREDENTIALS = Object.freeze({
  sms: Object.freeze({ clientId: 'sandbox-sms', clientSecret: 'sandbox-sms-secret' }),
  api: Object.freeze({ clientId: 'sandbox-api', clientSecret: 'sandbox-api-secret' }),
});

export const SANDBOX_DEFAULT_POS_SALES_ID = '2000000';

export const SANDBOX_DEFAULT_ACCOUNT = 'default';

/** Named accounts' names: they go into env variable names, upper-cased with `-` as `_`. */
export const SANDBOX_ACCOUNT_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

export const SANDBOX_ENV_ACCOUNTS = 'HUBTEL_ACCOUNTS';

export const SANDBOX_DEFAULT_HOST = '127.0.0.1';
/** The CLI's default port; in-process sandboxes default to a random free port (0). */
export const SANDBOX_DEFAULT_CLI_PORT = 4010;

/** Exchanges kept per programmable-services session. */
export const SANDBOX_SESSION_EXCHANGE_LIMIT = 200;
/** Programmable-services sessions must be answered within 5 s on USSD (platform facts). */
export const SANDBOX_DEFAULT_SERVICE_TIMEOUT_MS = 5_000;
export const SANDBOX_DEFAULT_WAIT_TIMEOUT_MS = 10_000;
/** Response bodies kept on a delivery record (for the dashboard), in characters. */
export const SANDBOX_RESPONSE_BODY_KEEP = 2048;

/** Paths on a service application the driver posts to (the contract's). */
export const SERVICE_APP_DEFAULT_PATHS = Object.freeze({
  serviceFlow: '/api/service-flow',
  fulfillment: '/api/fulfillment',
});
