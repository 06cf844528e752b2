import { HUBTEL_ENV } from '#internal';
import type { HubtelSandbox } from './hubtel-sandbox.js';

/**
 * The `HUBTEL_*` variables that point an app at this sandbox, as the modules' env pickers
 * (`smsOptionsFromEnv`, `checkoutOptionsFromEnv`, `serviceAppOptionsFromEnv`) read them: its base
 * URLs, the credentials it accepts, its POS Sales ID (which is also the merchant account number
 * it accepts).
 */
export function sandboxEnv(sandbox: HubtelSandbox): Record<string, string> {
  const urls = sandbox.baseUrls();
  const { sms, api } = sandbox.credentials;
  return {
    [HUBTEL_ENV.clientId]: api.clientId,
    [HUBTEL_ENV.clientSecret]: api.clientSecret,
    [HUBTEL_ENV.posSalesId]: sandbox.posSalesId,
    [HUBTEL_ENV.merchantAccountNumber]: sandbox.posSalesId,
    [HUBTEL_ENV.checkoutUrl]: urls.checkout,
    [HUBTEL_ENV.statusUrl]: urls.status,
    [HUBTEL_ENV.smsClientId]: sms.clientId,
    [HUBTEL_ENV.smsClientSecret]: sms.clientSecret,
    [HUBTEL_ENV.smsUrl]: urls.sms,
    [HUBTEL_ENV.callbackUrl]: urls.fulfillmentCallback,
  };
}

/** A value as a dotenv file holds it: bare when plain, else double-quoted with `\`, `"`, newlines escaped. */
function dotenvValue(value: string): string {
  if (/^[\w.:/@+-]*$/.test(value)) return value;
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r/g, '\\r').replace(/\n/g, '\\n')}"`;
}

/** `sandboxEnv` as the lines of a `.env` file, with a comment saying where they point. */
export function sandboxDotenv(sandbox: HubtelSandbox): string {
  const lines = Object.entries(sandboxEnv(sandbox)).map(([key, value]) => `${key}=${dotenvValue(value)}`);
  return `# nestjs-hubtel sandbox at ${sandbox.url} (hubtel-sandbox --env): valid while it runs there\n${lines.join('\n')}\n`;
}
