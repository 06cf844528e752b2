import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HUBTEL_ENV } from '../hubtel.constants.js';
import { readEnvValue, type HubtelEnvSource } from '../options/hubtel-env.js';
import { checkAccountName } from './hubtel-accounts.resolver.js';

/** No account names here: a default variable's first word (HUBTEL_SMS_CLIENT_ID is also account `sms`'s). */
const RESERVED_ACCOUNT_NAMES = new Set(
  Object.values(HUBTEL_ENV).map((variable) => variable.split('_')[1]!.toLowerCase()),
);

/**
 * The further accounts named in HUBTEL_ACCOUNTS (`north,south`), in order. Refused, naming the variable:
 * a bad or reserved name, `default`, a name listed twice or two with the same variables (`a-b`, `a_b`).
 */
export function accountNamesFromEnv(source: HubtelEnvSource): string[] {
  const list = readEnvValue(source, HUBTEL_ENV.accounts);
  if (!list) return [];
  const names: string[] = [];
  const prefixes = new Set<string>();
  for (const name of list.split(',').map((entry) => entry.trim())) {
    if (name === '') continue;
    try {
      checkAccountName(name, HUBTEL_ENV.accounts, "each module's forRoot");
    } catch (error) {
      const { problem } = error as HubtelConfigError; // the only error it throws
      throw new HubtelConfigError(HUBTEL_ENV.accounts, `${problem} (in "${list}")`);
    }
    if (RESERVED_ACCOUNT_NAMES.has(name))
      throw new HubtelConfigError(
        HUBTEL_ENV.accounts,
        `"${name}" cannot name an account in the environment: its variables would be read as the default account's (HUBTEL_${name.toUpperCase()}_...)`,
      );
    const prefix = accountEnvPrefix(name);
    if (prefixes.has(prefix))
      throw new HubtelConfigError(
        HUBTEL_ENV.accounts,
        `"${name}" is listed twice, or its variables (${prefix}...) are another listed account's`,
      );
    prefixes.add(prefix);
    names.push(name);
  }
  return names;
}

/** `HUBTEL_SMS_CLIENT_ID` of account `north-east` → `HUBTEL_NORTH_EAST_SMS_CLIENT_ID`. */
export function accountEnvVariable(name: string, defaultVariable: string): string {
  return accountEnvPrefix(name) + defaultVariable.slice('HUBTEL_'.length);
}

/** `north-east` → `HUBTEL_NORTH_EAST_`. */
function accountEnvPrefix(name: string): string {
  return `HUBTEL_${name.toUpperCase().replace(/-/g, '_')}_`;
}
