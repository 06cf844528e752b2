import type { HubtelEnvSource } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  accountEnvVariable,
  accountNamesFromEnv,
  checkOptionsFromEnv,
  dropUndefined,
  hubtelHttpOptionsFromEnv,
  readAccountEnv,
} from '#internal';
import type { CheckoutAccountOptions } from './checkout.module-definition.js';
import {
  CHECKOUT_ENV_VARIABLES,
  checkoutOptionsFromEnv,
  resolveCheckoutAccountOptions,
  resolveCheckoutOptions,
  type CheckoutAccountOverrides,
  type CheckoutModuleOptions,
  type ResolvedCheckoutOptions,
} from './checkout.options.js';

/** Default options and named accounts read from the environment (`checkoutAccountsFromEnv`). */
export interface CheckoutEnvAccounts {
  /** For `CheckoutModule.forRoot`. */
  default: CheckoutModuleOptions;
  /** For `CheckoutModule.registerAccount`, one each, in HUBTEL_ACCOUNTS order. */
  accounts: CheckoutAccountOptions[];
}

/**
 * The default account (as `checkoutOptionsFromEnv`, `overrides` included) and the further accounts
 * named in HUBTEL_ACCOUNTS (`north,south`). Each account's variables are the default's with its
 * name, upper-cased (`-` as `_`), after `HUBTEL_`: HUBTEL_NORTH_CLIENT_ID and
 * HUBTEL_NORTH_CLIENT_SECRET (required: an account never uses another's keys),
 * HUBTEL_NORTH_POS_SALES_ID and HUBTEL_NORTH_MERCHANT_ACCOUNT_NUMBER (its own or none, never the
 * default's), and optionally HUBTEL_NORTH_CHECKOUT_URL, HUBTEL_NORTH_STATUS_URL,
 * HUBTEL_NORTH_TIMEOUT_MS, HUBTEL_NORTH_RETRY_*, HUBTEL_NORTH_DEFAULT_COUNTRY_CODE; what an account
 * leaves unset of these is the default account's.
 *
 * ```ts
 * const checkout = checkoutAccountsFromEnv(process.env, { publicBaseUrl: 'https://shop.example.com' });
 * @Module({ imports: [CheckoutModule.forRoot(checkout.default),
 *   ...checkout.accounts.map((a) => CheckoutModule.registerAccount(a))] })
 * ```
 * A missing or bad value fails here, naming the variable (and the option it feeds).
 */
export function checkoutAccountsFromEnv(
  source: HubtelEnvSource = process.env,
  overrides: Partial<CheckoutModuleOptions> = {},
): CheckoutEnvAccounts {
  const defaults = checkoutOptionsFromEnv(source, overrides);
  const names = accountNamesFromEnv(source);
  if (names.length === 0) return { default: defaults, accounts: [] };
  // Named accounts are checked against the default's resolved options (what they inherit); the
  // default's own problems were reported above, or are left to bootstrap as there.
  let resolved: ResolvedCheckoutOptions;
  try {
    resolved = resolveCheckoutOptions(defaults);
  } catch {
    return { default: defaults, accounts: names.map((name) => accountFromEnv(source, name)) };
  }
  return {
    default: defaults,
    accounts: names.map((name) => {
      const account = accountFromEnv(source, name);
      checkOptionsFromEnv(
        () => resolveCheckoutAccountOptions(name, defaults, account, resolved),
        accountVariables(name, account),
      );
      return account;
    }),
  };
}

function accountFromEnv(source: HubtelEnvSource, name: string): CheckoutAccountOptions {
  const env = readAccountEnv(source, name);
  const baseUrls = dropUndefined({ checkout: env.checkoutUrl, status: env.statusUrl });
  const options = {
    ...hubtelHttpOptionsFromEnv(env),
    ...dropUndefined({
      clientId: env.clientId,
      clientSecret: env.clientSecret,
      posSalesId: env.posSalesId,
      merchantAccountNumber: env.merchantAccountNumber,
    }),
    ...(Object.keys(baseUrls).length > 0 ? { baseUrls } : {}),
  } as CheckoutAccountOverrides;
  return { name, ...options };
}

/**
 * Errors name this account's variable only for what it set (or must set): an inherited bad value
 * is the default's, reported there.
 */
function accountVariables(name: string, options: CheckoutAccountOptions): Record<string, string> {
  const scope = `checkout[${name}]`;
  const variables: Record<string, string> = {
    [`${scope}.clientId`]: accountEnvVariable(name, HUBTEL_ENV.clientId),
    [`${scope}.clientSecret`]: accountEnvVariable(name, HUBTEL_ENV.clientSecret),
  };
  for (const [path, key] of Object.entries(CHECKOUT_ENV_VARIABLES)) {
    const option = path.slice('checkout.'.length);
    if (valueAt(options, option) !== undefined)
      variables[`${scope}.${option}`] = accountEnvVariable(name, key);
  }
  return variables;
}

function valueAt(value: unknown, path: string): unknown {
  for (const key of path.split('.'))
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}
