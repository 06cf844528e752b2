import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HUBTEL_ENV } from '../hubtel.constants.js';
import { readHubtelEnv, type HubtelEnv, type HubtelEnvSource } from '../options/hubtel-env.js';
import { checkAccountName } from './hubtel-accounts.js';

/**
 * Names that cannot be accounts in the environment: the first word of a default variable
 * (`sms`: HUBTEL_SMS_CLIENT_ID is the default's SMS id, and would be account `sms`'s checkout id).
 */
const RESERVED_ACCOUNT_NAMES = new Set(
  Object.values(HUBTEL_ENV).map((variable) => variable.split('_')[1]!.toLowerCase()),
);

/**
 * The further accounts named in HUBTEL_ACCOUNTS (`north,south`), in order. Refused, naming the
 * variable: a name that is not an account name, `default`, a name listed twice or two names with
 * the same variables (`a-b`, `a_b`), and the first words of the default variables.
 */
export function accountNamesFromEnv(source: HubtelEnvSource): string[] {
  const list = rawEnvValue(source, HUBTEL_ENV.accounts)?.trim();
  if (!list) return [];
  const names: string[] = [];
  const prefixes = new Set<string>();
  for (const name of list.split(',').map((entry) => entry.trim())) {
    if (name === '') continue;
    try {
      checkAccountName(name, HUBTEL_ENV.accounts, "each module's forRoot");
    } catch (error) {
      throw error instanceof HubtelConfigError
        ? new HubtelConfigError(HUBTEL_ENV.accounts, `${configProblem(error)} (in "${list}")`)
        : error;
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

/**
 * Account `name`'s settings: the default variables' reader, looking at the account's variables.
 * A bad number names the account's variable.
 */
export function readAccountEnv(source: HubtelEnvSource, name: string): HubtelEnv {
  try {
    return readHubtelEnv((key) => rawEnvValue(source, accountEnvVariable(name, key)));
  } catch (error) {
    if (error instanceof HubtelConfigError && error.option.startsWith('HUBTEL_'))
      throw new HubtelConfigError(accountEnvVariable(name, error.option), configProblem(error));
    throw error;
  }
}

/** `north-east` → `HUBTEL_NORTH_EAST_`. */
function accountEnvPrefix(name: string): string {
  return `HUBTEL_${name.toUpperCase().replace(/-/g, '_')}_`;
}

/** One variable as the source holds it (the source kinds readHubtelEnv takes). */
function rawEnvValue(source: HubtelEnvSource, key: string): string | undefined {
  let raw: unknown;
  if (typeof source === 'function') raw = source(key);
  else if (typeof (source as { get?: unknown }).get === 'function')
    raw = (source as { get(key: string): unknown }).get(key);
  else raw = (source as Readonly<Record<string, unknown>>)[key];
  return raw === undefined || raw === null ? undefined : String(raw);
}

/** A HubtelConfigError's problem, without its `Invalid nestjs-hubtel option "..."` opening. */
function configProblem(error: HubtelConfigError): string {
  return error.message.replace(/^Invalid nestjs-hubtel option "[^"]*": /, '');
}
