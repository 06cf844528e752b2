import type { InjectionToken } from '@nestjs/common';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import {
  HubtelConfigError,
  type HubtelAccountResolver,
  type HubtelRouteOptions,
  type HubtelShutdownOptions,
  type HubtelStatusCheckBudgetOptions,
  type HubtelStore,
  type InboundAccessOptions,
} from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  HubtelHttpOptionsDto,
  HubtelOption,
  HubtelStatusCheckBudgetOptionsDto,
  InboundAccessPolicy,
  IsHubtelPosSalesId,
  declareCredentials,
  assertStoreOption,
  dropUndefined,
  hubtelOptionsRecipe,
  refuseRemovedOptions,
  type HubtelEnvAccounts,
  type JobRetryPolicy,
  type ResolvedAccountResolver,
  declareAccessOptions,
  HTTP_GROUPED,
  httpParts,
  type HubtelHttpParts,
} from '#internal';
import {
  CHECKOUT_DEFAULTS,
  CHECKOUT_DEFAULT_ACCOUNT,
  CHECKOUT_DEFAULT_CALLBACK_PATH,
  NOT_BLANK,
} from './checkout.constants.js';
import {
  CheckoutAmountToleranceOptions,
  CheckoutRecheckOptions,
  CheckoutVerificationOptions,
  CheckoutReconciliationOptions,
  CheckoutHandlerOptions,
  CheckoutBaseUrlOptions,
  recheckDelays,
} from './checkout.option-sections.js';

/** `access`: the path secret from HUBTEL_CHECKOUT_PATH_SECRET, each account's own. */
const CheckoutAccessOptions = declareAccessOptions(HUBTEL_ENV.checkoutPathSecret);

/** What a named account may set too (CheckoutAccountOverrides); CheckoutModuleOptions adds the rest. */
export class CheckoutAccountSettings extends declareCredentials(
  { clientId: HUBTEL_ENV.clientId, clientSecret: HUBTEL_ENV.clientSecret },
  HubtelHttpOptionsDto,
) {
  /** Sent as `merchantAccountNumber` on every invoice (unless the call gives one). */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Matches(NOT_BLANK, { message: 'merchantAccountNumber must not be empty' })
  @HubtelOption({ env: HUBTEL_ENV.merchantAccountNumber, account: 'notInherited' })
  merchantAccountNumber?: string;

  /** Enables the status check, and by default confirmation and reconciliation; never inherited (4101). */
  @HubtelOption({ is: IsHubtelPosSalesId(), env: HUBTEL_ENV.posSalesId, account: 'notInherited' })
  posSalesId?: string;

  /** This app's public address with any global prefix: the default `callbackUrl` is it plus the route. */
  @HubtelOption({ url: true })
  publicBaseUrl?: string;

  /** Full default callback URL, when not `publicBaseUrl` + the route (a proxy rewrites paths). */
  @HubtelOption({ url: true, account: 'notInherited' })
  callbackUrl?: string;

  /** Default `returnUrl` of invoices. */
  @HubtelOption({ url: true })
  returnUrl?: string;

  /** Default `cancellationUrl` of invoices. */
  @HubtelOption({ url: true })
  cancellationUrl?: string;

  /** Base URLs (defaults: production, `https://payproxyapi.hubtel.com`, `https://api-txnstatus.hubtel.com`). */
  @HubtelOption({ account: 'merged', default: {}, section: () => CheckoutBaseUrlOptions })
  baseUrls?: CheckoutBaseUrlOptions;

  /** What `createInvoice` does with `& * ! % @` in a description: refuse (default) or remove them. */
  @HubtelOption({ oneOf: ['reject', 'strip'], default: 'reject' })
  descriptionSpecialCharacters?: 'reject' | 'strip';

  @HubtelOption({ nested: () => CheckoutVerificationOptions, account: 'merged', default: {} })
  verification?: CheckoutVerificationOptions;

  /** Guards of the callback route (path secret, IP allow-list, proxies); off by default. */
  @HubtelOption({ account: 'merged', default: {}, section: () => CheckoutAccessOptions })
  access?: InboundAccessOptions;
}

/**
 * Options of `CheckoutModule.forRoot` / `forRootAsync`, and of a named account (see
 * CheckoutAccountOverrides). The key pair is the checkout and status-check APIs' (Basic auth).
 */
export class CheckoutModuleOptions extends CheckoutAccountSettings {
  @HubtelOption({ nested: () => CheckoutReconciliationOptions, account: 'defaultOnly', default: {} })
  reconciliation?: CheckoutReconciliationOptions;

  @HubtelOption({ nested: () => CheckoutHandlerOptions, account: 'defaultOnly', default: {} })
  handlers?: CheckoutHandlerOptions;

  /** A HubtelStore or its token. Default: the app's `HUBTEL_STORE`, else a MemoryStore (lost on restart). */
  @HubtelOption({ account: 'defaultOnly' })
  store?: HubtelStore | InjectionToken;

  /** How long invoices are kept (a callback for a forgotten one is rejected). Default 30 days. */
  @HubtelOption({ int: 60_000, account: 'defaultOnly', default: CHECKOUT_DEFAULTS.invoiceTtlMs })
  invoiceTtlMs?: number;

  /** Callback bodies larger than this are answered 413. Default 64 KiB. */
  @HubtelOption({
    int: [1024, 10 * 1024 * 1024],
    account: 'defaultOnly',
    default: CHECKOUT_DEFAULTS.maxCallbackBodyBytes,
  })
  maxCallbackBodyBytes?: number;

  /** The instance's status checks a minute, shared with ServiceAppModule. Default 600. */
  @HubtelOption({ nested: () => HubtelStatusCheckBudgetOptionsDto, account: 'defaultOnly', default: {} })
  statusCheckBudget?: HubtelStatusCheckBudgetOptions;

  /** Accounts known only at run time: `forAccount(name)` and callbacks on `<path>/<name>` ask `resolve`. */
  @HubtelOption({ account: 'defaultOnly' })
  accounts?: CheckoutAccountResolver;
}

/**
 * What a named account sets: its own key pair; `posSalesId`, `merchantAccountNumber`, `callbackUrl`
 * and `access.pathSecret` its own or none; what else it leaves out is the default account's.
 */
export type CheckoutAccountOverrides = Pick<CheckoutModuleOptions, 'clientId' | 'clientSecret'> &
  Partial<Omit<CheckoutAccountSettings, 'clientId' | 'clientSecret'>>;

/** The options only `forRoot` sets (declared `defaultOnly`; test/options-declarations.spec.ts checks). */
export type CheckoutModuleWideOption = Exclude<keyof CheckoutModuleOptions, keyof CheckoutAccountSettings>;

/** Accounts known only at run time: an unknown name fails a call (CheckoutUnknownAccountError) or 404s. */
export type CheckoutAccountResolver = HubtelAccountResolver<CheckoutAccountOverrides>;

/** The callback route, from forRoot's extras. */
export type CheckoutRouteInfo = Required<Pick<HubtelRouteOptions, 'path' | 'disabled'>>;

const GROUPED = [...HTTP_GROUPED, 'publicBaseUrl'] as const;
type Grouped = (typeof GROUPED)[number];
/** The options passed on as checked that have a default. */
type Defaulted = 'descriptionSpecialCharacters' | 'invoiceTtlMs' | 'maxCallbackBodyBytes';

/** Options after validation, every default filled in; credentials and transport settings grouped. */
export type ResolvedCheckoutOptions = Omit<CheckoutModuleOptions, Grouped | keyof CheckoutComputedOptions> &
  Required<Pick<CheckoutModuleOptions, Defaulted>> &
  CheckoutComputedOptions;

/** What `resolve` computes rather than passes on as checked. */
interface CheckoutComputedOptions extends HubtelHttpParts {
  baseUrls: Required<CheckoutBaseUrlOptions>;
  /** The default callback URL, when one can be built. */
  callbackUrl?: string;
  verification: Required<Pick<CheckoutVerificationOptions, 'allowOverpayment' | 'confirmWithStatusCheck'>> & {
    amountTolerance: Required<CheckoutAmountToleranceOptions>;
    recheck: Required<CheckoutRecheckOptions>;
  };
  reconciliation: Required<CheckoutReconciliationOptions>;
  handlers: { retry: JobRetryPolicy; recordTtlMs?: number } & HubtelShutdownOptions;
  access: InboundAccessOptions;
  /** Absent: this module leaves the instance's budget as others (or the default) set it. */
  statusCheckBudget: HubtelStatusCheckBudgetOptions;
  accounts?: ResolvedAccountResolver<CheckoutAccountOverrides>;
}

/** Default options and named accounts read from the environment. */
export interface CheckoutEnvAccounts extends HubtelEnvAccounts<
  CheckoutModuleOptions,
  CheckoutAccountOverrides
> {}

const DEFAULT_ROUTE: CheckoutRouteInfo = { path: CHECKOUT_DEFAULT_CALLBACK_PATH, disabled: false };
/** A round's re-checks hold its callback's key: later checks are the reconciler's (from 5 minutes). */
const MAX_RECHECK_TOTAL_MS = 4 * 60_000;

const REMOVED_RECHECK_OPTIONS = {
  roundsPerHour:
    "one invoice's status checks are now spaced by verification.recheck.minIntervalMs (at most 6 a minute by default) and never refused to a later callback",
};

/** The checkout module's options, derived from CheckoutModuleOptions; errors name `checkout[north].clientId`. */
export const CHECKOUT_OPTIONS_RECIPE = hubtelOptionsRecipe<
  CheckoutModuleOptions,
  ResolvedCheckoutOptions,
  CheckoutAccountOverrides,
  CheckoutRouteInfo
>({
  scope: 'checkout',
  options: CheckoutModuleOptions,
  grouped: GROUPED,
  prepare: withoutInfiniteAttempts,
  resolve: (o, { scope, account, raw, context: route = DEFAULT_ROUTE }) => {
    const forever = infiniteAttempts(raw);
    const http = httpParts(o);
    // Access first: the path secret is part of the default callback URL.
    const access = o.access as InboundAccessOptions;
    new InboundAccessPolicy(access, `${scope}.access.`); // validates, naming the bad option
    let callbackUrl = o.callbackUrl;
    if (callbackUrl === undefined && o.publicBaseUrl !== undefined && !route.disabled) {
      // A named account's callbacks come on its own segment; the secret is URL-safe (checked above).
      const path =
        route.path.replace(/^\/+|\/+$/g, '') + (account === CHECKOUT_DEFAULT_ACCOUNT ? '' : `/${account}`);
      const secret = access.pathSecret === undefined ? '' : `/${access.pathSecret}`;
      callbackUrl = `${o.publicBaseUrl}/${path}${secret}`;
    }
    const { recheck, confirmWithStatusCheck } = o.verification as ResolvedCheckoutOptions['verification'];
    const givenRecheck = (raw.verification as { recheck?: unknown } | undefined)?.recheck;
    refuseRemovedOptions(givenRecheck, `${scope}.verification.recheck`, REMOVED_RECHECK_OPTIONS);
    if (recheckDelays(recheck).reduce((sum, ms) => sum + ms, 0) > MAX_RECHECK_TOTAL_MS)
      throw new HubtelConfigError(
        `${scope}.verification.recheck`,
        `the re-checks' waits add up to more than ${MAX_RECHECK_TOTAL_MS} ms; use fewer attempts or shorter delays (the reconciler checks later ones)`,
      );
    const reconciliation = o.reconciliation as ResolvedCheckoutOptions['reconciliation'];
    for (const [option, on] of [
      ['verification.confirmWithStatusCheck', confirmWithStatusCheck],
      ['reconciliation.enabled', reconciliation.enabled],
    ] as const)
      if (on && o.posSalesId === undefined)
        throw new HubtelConfigError(
          `${scope}.${option}`,
          `needs ${scope}.posSalesId (the status check is per POS Sales ID)`,
        );
    refuseRemovedOptions(raw.handlers, `${scope}.handlers`);
    const { retry, ...handlers } = o.handlers as { retry: JobRetryPolicy };
    if (forever && retry.deadlineMs === undefined)
      throw new HubtelConfigError(
        `${scope}.handlers.retry.maxAttempts`,
        'Infinity needs handlers.retry.deadlineMs',
      );
    const store = assertStoreOption(o.store, `${scope}.store`);
    // An invoice must outlive its reconciliation.
    if (reconciliation.enabled && o.invoiceTtlMs! <= reconciliation.giveUpAfterMs)
      throw new HubtelConfigError(
        `${scope}.invoiceTtlMs`,
        `must be longer than reconciliation.giveUpAfterMs (${reconciliation.giveUpAfterMs})`,
      );
    const maxAttempts = forever ? Infinity : retry.maxAttempts;
    return {
      ...http,
      ...dropUndefined({ callbackUrl, store }),
      handlers: { retry: { ...retry, maxAttempts }, ...handlers },
    };
  },
});

/** `handlers.retry.maxAttempts: Infinity` (with `deadlineMs`): no JSON number, so checked in `resolve`. */
const infiniteAttempts = (raw: Record<string, unknown>) =>
  (raw.handlers as { retry?: { maxAttempts?: unknown } } | null | undefined)?.retry?.maxAttempts === Infinity;

function withoutInfiniteAttempts(raw: Record<string, unknown>): Record<string, unknown> {
  if (!infiniteAttempts(raw)) return raw;
  const handlers = raw.handlers as { retry: object };
  return { ...raw, handlers: { ...handlers, retry: { ...handlers.retry, maxAttempts: undefined } } };
}

/** Options from the environment (see docs/checkout.md), `overrides` winning; a bad value fails here. */
export const checkoutOptionsFromEnv = CHECKOUT_OPTIONS_RECIPE.optionsFromEnv;

/** The default account and those named in HUBTEL_ACCOUNTS (HUBTEL_NORTH_CLIENT_ID...; docs/accounts.md). */
export const checkoutAccountsFromEnv = CHECKOUT_OPTIONS_RECIPE.accountsFromEnv;
