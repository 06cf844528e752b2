import type { HubtelEnvSource } from 'nestjs-hubtel';
import { accountNamesFromEnv, checkOptionsFromEnv, declaredOptionsFromEnv } from '#internal';
import type { CheckoutAccountOptions } from './checkout.module-definition.js';
import {
  CheckoutModuleOptions,
  checkoutOptionsFromEnv,
  resolveCheckoutAccountOptions,
  resolveCheckoutOptions,
  type CheckoutAccountOverrides,
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
  // Named accounts are checked against the default's resolved options (what they inherit); the
  // default's own problems were reported above, or are left to bootstrap as there.
  let resolved: ResolvedCheckoutOptions | undefined;
  try {
    if (names.length > 0) resolved = resolveCheckoutOptions(defaults);
  } catch {
    resolved = undefined;
  }
  const accountFromEnv = (name: string): CheckoutAccountOptions => {
    const env = declaredOptionsFromEnv<CheckoutAccountOverrides>(
      CheckoutModuleOptions,
      source,
      `checkout[${name}]`,
      name,
    );
    if (resolved)
      checkOptionsFromEnv(
        () => resolveCheckoutAccountOptions(name, defaults, env.options, resolved),
        env.variables,
      );
    return { name, ...(env.options as CheckoutAccountOverrides) };
  };
  return { default: defaults, accounts: names.map(accountFromEnv) };
}
