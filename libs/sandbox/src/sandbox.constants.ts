// Fixed, documented credentials: a zero-configuration app and the tests agree on them. They
// protect nothing; the real platform's keys never go near the sandbox.
export const SANDBOX_DEFAULT_CREDENTIALS = Object.freeze({
  sms: Object.freeze({ clientId: 'sandbox-sms', clientSecret: 'sandbox-sms-secret' }),
  api: Object.freeze({ clientId: 'sandbox-api', clientSecret: 'sandbox-api-secret' }),
});

export const SANDBOX_DEFAULT_POS_SALES_ID = '2000000';

export const SANDBOX_DEFAULT_HOST = '127.0.0.1';
/** The CLI's default port; in-process sandboxes default to a random free port (0). */
export const SANDBOX_DEFAULT_CLI_PORT = 4010;
