import { HUBTEL_DEFAULT_ACCOUNT } from 'nestjs-hubtel';
import { accountEnvVariable, HUBTEL_ENV } from '#internal';
import type { HubtelSandbox } from './sandbox.server.js';
import type { SandboxAccount } from './sandbox.option-types.js';

export interface SandboxEnvOptions {
  /** Whose variables: `default` as `HUBTEL_*`, `north` as `HUBTEL_NORTH_*`. Default `['default']`. */
  accounts?: readonly string[];
}

/** The `HUBTEL_*` variables that point an app at this sandbox; an unknown account is a SandboxNotFoundError. */
export function sandboxEnv(sandbox: HubtelSandbox, options: SandboxEnvOptions = {}): Record<string, string> {
  const names = [...new Set(options.accounts ?? [HUBTEL_DEFAULT_ACCOUNT])];
  const accounts = names.map((name) => sandbox.account(name));
  const named = accounts.filter((a) => a.name !== HUBTEL_DEFAULT_ACCOUNT).map((a) => a.name);
  const env: Record<string, string> = {};
  if (named.length > 0) env[HUBTEL_ENV.accounts] = named.join(',');
  for (const account of accounts) Object.assign(env, accountEnv(sandbox, account));
  return env;
}

/** One account's variables: `HUBTEL_X` for the default one, `HUBTEL_<NAME>_X` for a named one. */
function accountEnv(sandbox: HubtelSandbox, account: SandboxAccount): Record<string, string> {
  const urls = sandbox.baseUrls();
  const { sms, api, callback } = account.credentials;
  const name = (variable: string) =>
    account.name === HUBTEL_DEFAULT_ACCOUNT ? variable : accountEnvVariable(account.name, variable);
  const values: [string, string | undefined][] = [
    [HUBTEL_ENV.clientId, api.clientId],
    [HUBTEL_ENV.clientSecret, api.clientSecret],
    [HUBTEL_ENV.posSalesId, account.posSalesId],
    [HUBTEL_ENV.merchantAccountNumber, account.posSalesId],
    [HUBTEL_ENV.checkoutUrl, urls.checkout],
    [HUBTEL_ENV.statusUrl, urls.status],
    [HUBTEL_ENV.smsClientId, sms.clientId],
    [HUBTEL_ENV.smsClientSecret, sms.clientSecret],
    [HUBTEL_ENV.smsUrl, urls.sms],
    [HUBTEL_ENV.smsSenderId, account.senderIds[0]],
    [HUBTEL_ENV.callbackUrl, urls.fulfillmentCallback],
    // The pair the sandbox's fulfillment callback receiver demands of this account, when it has one.
    [HUBTEL_ENV.callbackClientId, callback?.clientId],
    [HUBTEL_ENV.callbackClientSecret, callback?.clientSecret],
  ];
  const given = values.filter((entry): entry is [string, string] => entry[1] !== undefined);
  return Object.fromEntries(given.map(([variable, value]) => [name(variable), value]));
}

/** A dotenv value: bare when plain (`docker run --env-file` keeps quotes), else double-quoted. */
function dotenvValue(value: string): string {
  if (/^[\w.:/@+,-]*$/.test(value)) return value;
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r/g, '\\r').replace(/\n/g, '\\n')}"`;
}

/** `sandboxEnv` as the lines of a `.env` file, with a comment saying where they point. */
export function sandboxDotenv(sandbox: HubtelSandbox, options: SandboxEnvOptions = {}): string {
  const lines = Object.entries(sandboxEnv(sandbox, options)).map(
    ([key, value]) => `${key}=${dotenvValue(value)}`,
  );
  return `# nestjs-hubtel sandbox at ${sandbox.url} (hubtel-sandbox --env): valid while it runs there\n${lines.join('\n')}\n`;
}
