import type { InjectionToken } from '@nestjs/common';
import {
  HubtelConfigError,
  type HubtelCredentials,
  type HubtelEnvSource,
  type HubtelHttpOptions,
  type HubtelShutdownOptions,
  type HubtelStatusCheckBudgetOptions,
  type HubtelStore,
  type InboundAccessOptions,
} from 'nestjs-hubtel';
import {
  DEFAULT_JOB_RETRY,
  HUBTEL_DEFAULT_BASE_URLS,
  HUBTEL_ENV,
  checkOptions,
  checkOptionsFromEnv,
  assertStoreOption,
  InboundAccessPolicy,
  assertOptionsObject,
  dropUndefined,
  hubtelHttpEnvVariables,
  hubtelHttpOptionsFromEnv,
  backoffDelays,
  refuseRemovedJobOptions,
  readHubtelEnv,
  resolveCredentials,
  resolveHttpOptions,
  resolveUrl,
  inheritAccountOptions,
  resolveAccountResolver,
  type AccountInheritance,
  type HttpTransportConfig,
  type JobRetryPolicy,
  type ResolvedAccountResolver,
  type ResolvedHubtelHttpOptions,
} from '#internal';
import { CheckoutOptionsDto } from './checkout.options.dto.js';
import {
  CHECKOUT_DEFAULTS,
  CHECKOUT_DEFAULT_ACCOUNT,
  CHECKOUT_DEFAULT_CALLBACK_PATH,
} from './checkout.constants.js';

/** How paid amounts are compared with the amount invoiced. */
export interface CheckoutAmountToleranceOptions {
  /** Largest difference accepted, in currency units (e.g. 0.5 for fees up to GH₵ 0.50). Default 0. */
  absolute?: number;
  /** Largest difference accepted, in percent of the invoiced amount (e.g. 2 for 2 %). Default 0. */
  percent?: number;
}

export interface CheckoutVerificationOptions {
  /**
   * Fees: by default the reported amount must equal the invoiced amount to the pesewa. When the
   * platform reports an amount that includes (or has deducted) fees, allow the difference here;
   * the larger of `absolute` and `percent` applies, in both directions.
   */
  amountTolerance?: CheckoutAmountToleranceOptions;
  /** Accept any amount above the invoiced one (tips, payer-borne fees). Default false. */
  allowOverpayment?: boolean;
  /**
   * Confirm each callback with the transaction status check before it counts. Default: true when
   * `posSalesId` is set (the status check needs it), false otherwise.
   */
  confirmWithStatusCheck?: boolean;
  /**
   * With `confirmWithStatusCheck`: how a status check that does not show the callback's payment
   * yet is asked again before the callback is rejected (`NOT_CONFIRMED`) and left to the
   * reconciler. The platform's status check can lag behind its own callback.
   */
  recheck?: CheckoutRecheckOptions;
}

/** Re-checks of a callback's payment whose status check does not show it yet. */
export interface CheckoutRecheckOptions {
  /** Checks after the first one (0: reject at once). Default 3. */
  attempts?: number;
  /** Wait before the first re-check; each next one waits twice as long. Default 2000 ms. */
  delayMs?: number;
  /** Longest wait between two re-checks. Default 10000 ms. */
  maxDelayMs?: number;
  /**
   * Confirmation rounds one invoice may start in an hour (1 to 60). A round is the checks of one
   * paid callback (and its copies): at most `attempts + 1` status checks, however many copies
   * come. Past this, paid callbacks of that invoice are ignored until the hour has passed (the
   * reconciler still checks it): forged copies cannot make the module spend the merchant's
   * status checks round after round. Default 3.
   */
  roundsPerHour?: number;
}

export interface CheckoutReconciliationOptions {
  /** Check invoices with no final callback through the status check. Default: true when `posSalesId` is set. */
  enabled?: boolean;
  /** Age of an invoice before its first check. Default 5 minutes (Hubtel's advice). */
  delayMs?: number;
  /** How often the reconciler looks for invoices due; also the first re-check spacing. Default 1 minute. */
  intervalMs?: number;
  /** Re-checks of one invoice back off (doubling) up to this spacing. Default 1 hour. */
  maxIntervalMs?: number;
  /** Stop checking (and emit `expired`) this long after creation. Default 24 hours. */
  giveUpAfterMs?: number;
  /**
   * Most status checks of one unpaid invoice (1 to 10,000). The backed-off checks come first; the
   * last one is kept for `giveUpAfterMs` after creation (a slow payment is still found), then the
   * invoice expires. Bounds what an invoice nobody pays (a flood of orders) costs in status checks.
   * Default 8.
   */
  maxChecks?: number;
  /** Status checks at once. Default 4. */
  concurrency?: number;
}

export interface CheckoutHandlerOptions {
  /**
   * Retry of a throwing event handler (and of a status-check confirmation that failed): attempts in
   * all, and full-jitter backoff. Default 5 attempts, from 500 ms, at most 30 s apart.
   */
  retry?: Partial<JobRetryPolicy>;
  /** How long a handled callback is remembered for de-duplication. Default 7 days. */
  recordTtlMs?: number;
  /**
   * On shutdown, how long handlers running here may take to finish (new callbacks are answered
   * 503 meanwhile). Default 5000 ms. See docs/operations.md.
   */
  shutdownGraceMs?: number;
}

export interface CheckoutModuleOptions extends HubtelHttpOptions {
  /** API id of the checkout and status-check APIs (Basic auth). */
  clientId: string;
  /** API secret of the checkout and status-check APIs. Never logged. */
  clientSecret: string;
  /** Sent as `merchantAccountNumber` on every invoice (unless the call gives one). */
  merchantAccountNumber?: string;
  /**
   * POS Sales ID: enables the transaction status check (`getStatus`), and with it, by default,
   * callback confirmation and reconciliation.
   */
  posSalesId?: string;
  /**
   * Public address of this app as the platform reaches it, including any global prefix
   * (`https://shop.example.com/api`). The default `callbackUrl` of invoices is this plus the
   * callback route (plus the path secret, when set).
   */
  publicBaseUrl?: string;
  /** Full default callback URL, when it is not `publicBaseUrl` + the route (a proxy rewrites paths). */
  callbackUrl?: string;
  /** Default `returnUrl` of invoices. */
  returnUrl?: string;
  /** Default `cancellationUrl` of invoices. */
  cancellationUrl?: string;
  /** Base URLs (defaults: production, `https://payproxyapi.hubtel.com`, `https://api-txnstatus.hubtel.com`). */
  baseUrls?: { checkout?: string; status?: string };
  /** What `createInvoice` does with `& * ! % @` in a description: refuse (default) or remove them. */
  descriptionSpecialCharacters?: 'reject' | 'strip';
  verification?: CheckoutVerificationOptions;
  reconciliation?: CheckoutReconciliationOptions;
  handlers?: CheckoutHandlerOptions;
  /** Guards of the callback route: path secret, IP allow-list with CIDR ranges, trusted proxies. Off by default. */
  access?: InboundAccessOptions;
  /**
   * Where invoices and callback records live: a HubtelStore instance, or the injection token of
   * one provided in your app. Default: the app-wide `HUBTEL_STORE` (e.g. `HubtelRedisModule`)
   * when provided, else a MemoryStore (lost on restart).
   */
  store?: HubtelStore | InjectionToken;
  /** How long invoices are kept (a callback for a forgotten invoice is rejected). Default 30 days. */
  invoiceTtlMs?: number;
  /** Callback bodies larger than this are answered 413. Default 64 KiB. */
  maxCallbackBodyBytes?: number;
  /**
   * The instance's budget of transaction status checks a minute, shared with ServiceAppModule
   * (see HubtelStatusCheckBudgetOptions). Default 600 a minute.
   */
  statusCheckBudget?: HubtelStatusCheckBudgetOptions;
  /**
   * Accounts known only at run time (a database of merchants): `checkout.forAccount(name)` and a
   * callback on `<path>/<name>` ask `resolve(name)` for a name registered nowhere else (cached
   * `cacheTtlMs`). Default account only.
   */
  accounts?: CheckoutAccountResolver;
}

/**
 * What a named account sets (`CheckoutModule.registerAccount`, `accounts.resolve`). Its own
 * `clientId` / `clientSecret` are required; `posSalesId`, `merchantAccountNumber`, `callbackUrl`
 * and `access.pathSecret` are its own or none (another account's POS Sales ID with these keys is
 * refused by the platform, 4101); every other option it leaves out is the default account's
 * (`retry`, `baseUrls`, `verification`, `access` field by field). The module-wide options (`store`,
 * `handlers`, `reconciliation`, `invoiceTtlMs`, `maxCallbackBodyBytes`, `statusCheckBudget`,
 * `accounts`) are the default account's only.
 */
export type CheckoutAccountOverrides = Pick<CheckoutModuleOptions, 'clientId' | 'clientSecret'> &
  Partial<Omit<CheckoutModuleOptions, CheckoutModuleWideOption | 'clientId' | 'clientSecret'>>;

/** Options of the whole module, set on the default account only (refused on a named one). */
export type CheckoutModuleWideOption =
  | 'store'
  | 'handlers'
  | 'reconciliation'
  | 'invoiceTtlMs'
  | 'maxCallbackBodyBytes'
  | 'statusCheckBudget'
  | 'accounts';

/** Where the checkout accounts known only at run time come from. */
export interface CheckoutAccountResolver {
  /**
   * The account's options (as `registerAccount` takes them, without `name`), or undefined when
   * there is no account by that name (the call then fails with CheckoutUnknownAccountError, a
   * callback on its path is answered 404). Called once per name per `cacheTtlMs`.
   */
  resolve: (
    name: string,
  ) => Promise<CheckoutAccountOverrides | undefined> | CheckoutAccountOverrides | undefined;
  /** How long a resolved account is kept, in ms (0 to one day). Default 300000 (5 min). */
  cacheTtlMs?: number;
}

/** Route extras of `forRoot`/`forRootAsync`: see `HubtelRouteOptions` in the core. */
export interface CheckoutRouteInfo {
  path: string;
  disabled: boolean;
}

export interface ResolvedCheckoutOptions {
  credentials: HubtelCredentials;
  http: ResolvedHubtelHttpOptions;
  baseUrls: { checkout: string; status: string };
  merchantAccountNumber?: string;
  posSalesId?: string;
  /** The default callback URL, when one can be built. */
  callbackUrl?: string;
  returnUrl?: string;
  cancellationUrl?: string;
  descriptionSpecialCharacters: 'reject' | 'strip';
  verification: {
    amountTolerance: { absolute: number; percent: number };
    allowOverpayment: boolean;
    confirmWithStatusCheck: boolean;
    recheck: { attempts: number; delayMs: number; maxDelayMs: number; roundsPerHour: number };
  };
  reconciliation: {
    enabled: boolean;
    delayMs: number;
    intervalMs: number;
    maxIntervalMs: number;
    giveUpAfterMs: number;
    maxChecks: number;
    concurrency: number;
  };
  handlers: {
    retry: JobRetryPolicy;
    recordTtlMs?: number;
  } & HubtelShutdownOptions;
  access: InboundAccessOptions;
  store?: HubtelStore | InjectionToken;
  invoiceTtlMs: number;
  maxCallbackBodyBytes: number;
  /** Absent: this module leaves the instance's budget as others (or the default) set it. */
  statusCheckBudget: { perMinute?: number };
  /** Only on the default account, only when `accounts` is given. */
  accounts?: ResolvedAccountResolver<CheckoutAccountOverrides>;
}

const PREFIX = 'checkout';
/**
 * A confirmation round's re-checks end within minutes: later checks are the reconciler's (from
 * `reconciliation.delayMs`, 5 minutes), and a round holds its callback's key while it waits.
 */
const MAX_RECHECK_TOTAL_MS = 4 * 60_000;

function section(raw: Record<string, unknown>, key: string, scope: string): Record<string, unknown> {
  const value = raw[key];
  if (value === undefined) return {};
  assertOptionsObject(value, `${scope}.${key}`);
  return value;
}

/** The waits before each re-check: `delayMs`, doubling, at most `maxDelayMs` each. */
export function recheckDelays(recheck: ResolvedCheckoutOptions['verification']['recheck']): number[] {
  return Array.from({ length: recheck.attempts }, (_, index) =>
    Math.min(recheck.maxDelayMs, recheck.delayMs * 2 ** index),
  );
}

/**
 * Validates the module's options and fills in defaults. Throws a HubtelConfigError naming the bad
 * option (`checkout.reconciliation.delayMs`), so a bad configuration stops the app at bootstrap.
 */
export function resolveCheckoutOptions(
  options: unknown,
  route: CheckoutRouteInfo = { path: CHECKOUT_DEFAULT_CALLBACK_PATH, disabled: false },
  /** Whose options: a named account's errors say `checkout[north].…`, its callback URL ends in `/north`. */
  account: string = CHECKOUT_DEFAULT_ACCOUNT,
): ResolvedCheckoutOptions {
  const scope = account === CHECKOUT_DEFAULT_ACCOUNT ? PREFIX : `${PREFIX}[${account}]`;
  assertOptionsObject(options, scope);
  const raw = options;
  const credentials = resolveCredentials(raw, scope);
  const http = resolveHttpOptions(raw as HubtelHttpOptions, scope);
  const { finite, forever } = splitInfiniteAttempts(raw);
  const checked = checkOptions(CheckoutOptionsDto, finite, scope);
  const { merchantAccountNumber, posSalesId } = checked;
  const urls = section(raw, 'baseUrls', scope);
  const baseUrls = {
    checkout: resolveUrl(urls.checkout, `${scope}.baseUrls.checkout`, HUBTEL_DEFAULT_BASE_URLS.checkout),
    status: resolveUrl(urls.status, `${scope}.baseUrls.status`, HUBTEL_DEFAULT_BASE_URLS.status),
  };
  const returnUrl = raw.returnUrl === undefined ? undefined : resolveUrl(raw.returnUrl, `${scope}.returnUrl`);
  const cancellationUrl =
    raw.cancellationUrl === undefined
      ? undefined
      : resolveUrl(raw.cancellationUrl, `${scope}.cancellationUrl`);

  // Access first: the path secret is part of the default callback URL.
  const access = section(raw, 'access', scope) as InboundAccessOptions;
  new InboundAccessPolicy(access, `${scope}.access.`); // validates, naming the bad option

  let callbackUrl: string | undefined;
  if (raw.callbackUrl !== undefined) {
    callbackUrl = resolveUrl(raw.callbackUrl, `${scope}.callbackUrl`);
  } else if (raw.publicBaseUrl !== undefined) {
    const base = resolveUrl(raw.publicBaseUrl, `${scope}.publicBaseUrl`);
    if (!route.disabled) {
      // A named account's callbacks come on its own segment: one route serves every account.
      const path =
        route.path.replace(/^\/+|\/+$/g, '') + (account === CHECKOUT_DEFAULT_ACCOUNT ? '' : `/${account}`);
      // The secret was checked to be URL-safe by the access policy above.
      const secret = access.pathSecret === undefined ? '' : `/${access.pathSecret}`;
      callbackUrl = `${base}/${path}${secret}`;
    }
  }

  const verificationRaw = checked.verification ?? {};
  const recheckRaw = verificationRaw.recheck ?? {};
  const recheckDelayMs = recheckRaw.delayMs ?? CHECKOUT_DEFAULTS.recheckDelayMs;
  const recheck = {
    attempts: recheckRaw.attempts ?? CHECKOUT_DEFAULTS.recheckAttempts,
    delayMs: recheckDelayMs,
    maxDelayMs: recheckRaw.maxDelayMs ?? Math.max(CHECKOUT_DEFAULTS.recheckMaxDelayMs, recheckDelayMs),
    roundsPerHour: recheckRaw.roundsPerHour ?? CHECKOUT_DEFAULTS.recheckRoundsPerHour,
  };
  // Cross-field: the backed-off wait never drops below the first one.
  if (recheck.maxDelayMs < recheckDelayMs) {
    throw new HubtelConfigError(
      `${scope}.verification.recheck.maxDelayMs`,
      `must be at least verification.recheck.delayMs (${recheckDelayMs})`,
    );
  }
  if (recheckDelays(recheck).reduce((sum, ms) => sum + ms, 0) > MAX_RECHECK_TOTAL_MS) {
    throw new HubtelConfigError(
      `${scope}.verification.recheck`,
      `the re-checks' waits add up to more than ${MAX_RECHECK_TOTAL_MS} ms; use fewer attempts or shorter delays (the reconciler checks later ones)`,
    );
  }
  const verification = {
    amountTolerance: {
      absolute: verificationRaw.amountTolerance?.absolute ?? 0,
      percent: verificationRaw.amountTolerance?.percent ?? 0,
    },
    allowOverpayment: verificationRaw.allowOverpayment ?? false,
    confirmWithStatusCheck: verificationRaw.confirmWithStatusCheck ?? posSalesId !== undefined,
    recheck,
  };
  if (verification.confirmWithStatusCheck && posSalesId === undefined) {
    throw new HubtelConfigError(
      `${scope}.verification.confirmWithStatusCheck`,
      `needs ${scope}.posSalesId (the status check is per POS Sales ID)`,
    );
  }

  const rec = checked.reconciliation ?? {};
  const intervalMs = rec.intervalMs ?? CHECKOUT_DEFAULTS.reconcileIntervalMs;
  const maxIntervalMs = rec.maxIntervalMs ?? Math.max(CHECKOUT_DEFAULTS.reconcileMaxIntervalMs, intervalMs);
  // Cross-field: the backed-off interval never drops below the first one.
  if (maxIntervalMs < intervalMs) {
    throw new HubtelConfigError(
      `${scope}.reconciliation.maxIntervalMs`,
      `must be at least reconciliation.intervalMs (${intervalMs})`,
    );
  }
  const reconciliation = {
    enabled: rec.enabled ?? posSalesId !== undefined,
    delayMs: rec.delayMs ?? CHECKOUT_DEFAULTS.reconcileDelayMs,
    intervalMs,
    maxIntervalMs,
    giveUpAfterMs: rec.giveUpAfterMs ?? CHECKOUT_DEFAULTS.reconcileGiveUpAfterMs,
    maxChecks: rec.maxChecks ?? CHECKOUT_DEFAULTS.reconcileMaxChecks,
    concurrency: rec.concurrency ?? CHECKOUT_DEFAULTS.reconcileConcurrency,
  };
  if (reconciliation.enabled && posSalesId === undefined) {
    throw new HubtelConfigError(
      `${scope}.reconciliation.enabled`,
      `needs ${scope}.posSalesId (the status check is per POS Sales ID)`,
    );
  }

  refuseRemovedJobOptions(raw.handlers, `${scope}.handlers`);
  const { retry: retryRaw = {}, recordTtlMs, shutdownGraceMs } = checked.handlers ?? {};
  // Cross-field: retrying forever needs a deadline.
  if (forever && retryRaw.deadlineMs === undefined) {
    throw new HubtelConfigError(
      `${scope}.handlers.retry.maxAttempts`,
      'Infinity needs handlers.retry.deadlineMs',
    );
  }
  const handlers = {
    retry: {
      maxAttempts: forever ? Infinity : (retryRaw.maxAttempts ?? DEFAULT_JOB_RETRY.maxAttempts),
      ...backoffDelays(retryRaw, DEFAULT_JOB_RETRY, `${scope}.handlers.retry`),
      ...dropUndefined({ deadlineMs: retryRaw.deadlineMs }),
    },
    ...dropUndefined({ recordTtlMs, shutdownGraceMs }),
  };

  const store = assertStoreOption(raw.store, `${scope}.store`);

  const invoiceTtlMs = checked.invoiceTtlMs ?? CHECKOUT_DEFAULTS.invoiceTtlMs;
  // Cross-field: an invoice must outlive its reconciliation.
  if (reconciliation.enabled && invoiceTtlMs <= reconciliation.giveUpAfterMs) {
    throw new HubtelConfigError(
      `${scope}.invoiceTtlMs`,
      `must be longer than reconciliation.giveUpAfterMs (${reconciliation.giveUpAfterMs})`,
    );
  }

  const accounts = resolveAccountResolver<CheckoutAccountOverrides>(raw.accounts, scope);
  return {
    credentials,
    http,
    baseUrls,
    ...dropUndefined({
      accounts,
      merchantAccountNumber,
      posSalesId,
      callbackUrl,
      returnUrl,
      cancellationUrl,
      store: store as ResolvedCheckoutOptions['store'],
    }),
    descriptionSpecialCharacters: checked.descriptionSpecialCharacters ?? 'reject',
    verification,
    reconciliation,
    handlers,
    access,
    invoiceTtlMs,
    maxCallbackBodyBytes: checked.maxCallbackBodyBytes ?? CHECKOUT_DEFAULTS.maxCallbackBodyBytes,
    statusCheckBudget: dropUndefined({ perMinute: checked.statusCheckBudget?.perMinute }),
  };
}

/** How a named account inherits (see CheckoutAccountOverrides). */
const CHECKOUT_ACCOUNT_INHERITANCE = {
  own: ['clientId', 'clientSecret'],
  // Each account's own or none: the platform refuses another account's POS Sales ID (4101), and a
  // callback URL or path secret names one account's route. (`access` and `verification` are
  // merged before, field by field, the path secret left out.)
  notInherited: ['posSalesId', 'merchantAccountNumber', 'callbackUrl', 'access', 'verification'],
  defaultOnly: [
    'store',
    'handlers',
    'reconciliation',
    'invoiceTtlMs',
    'maxCallbackBodyBytes',
    'statusCheckBudget',
    'accounts',
  ],
  merged: ['retry', 'baseUrls'],
} as const satisfies AccountInheritance;

/**
 * The options of named account `name`: the default account's raw options (`defaults`) minus what is
 * each account's own or the module's, under the account's own (`overrides`), resolved as forRoot's
 * are (errors name `checkout[name].<option>`). The module-wide settings are then the default's
 * (`module`): one store, one pipeline, one reconciler, one body limit for every account.
 */
export function resolveCheckoutAccountOptions(
  name: string,
  defaults: CheckoutModuleOptions,
  overrides: unknown,
  module: ResolvedCheckoutOptions,
  route: CheckoutRouteInfo = { path: CHECKOUT_DEFAULT_CALLBACK_PATH, disabled: false },
): ResolvedCheckoutOptions {
  const scope = `${PREFIX}[${name}]`;
  const own = (isPlainObject(overrides) ? overrides : {}) as Record<string, unknown>;
  const { pathSecret: _notInherited, ...sharedAccess } = isPlainObject(defaults.access)
    ? defaults.access
    : {};
  const prepared = isPlainObject(overrides)
    ? dropUndefined({
        ...own,
        access: mergeFields(sharedAccess, own.access),
        verification: mergeFields(defaults.verification, own.verification),
      })
    : overrides;
  const merged = inheritAccountOptions(scope, defaults, prepared, CHECKOUT_ACCOUNT_INHERITANCE);
  const resolved = resolveCheckoutOptions(merged, route, name);
  return {
    ...resolved,
    ...dropUndefined({ store: module.store }),
    handlers: module.handlers,
    reconciliation: module.reconciliation,
    invoiceTtlMs: module.invoiceTtlMs,
    maxCallbackBodyBytes: module.maxCallbackBodyBytes,
    statusCheckBudget: module.statusCheckBudget,
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * `own` over `inherited`, field by field and nested objects too (`verification.recheck.attempts`
 * keeps the default's `delayMs`); anything but two objects is `own` when given. Undefined when
 * neither gives anything.
 */
function mergeFields(inherited: unknown, own: unknown): unknown {
  if (own === undefined)
    return isPlainObject(inherited) && Object.keys(inherited).length === 0 ? undefined : inherited;
  if (!isPlainObject(inherited) || !isPlainObject(own)) return own;
  const merged: Record<string, unknown> = { ...inherited };
  for (const [key, value] of Object.entries(own))
    if (value !== undefined) merged[key] = mergeFields(inherited[key], value);
  return merged;
}

/** The transport of one account: the checkout API and the status check share its API key pair. */
export function checkoutTransportConfig(
  options: ResolvedCheckoutOptions,
  loggerContext = 'HubtelCheckout',
): Omit<HttpTransportConfig, 'telemetry'> {
  return {
    baseUrls: { checkout: options.baseUrls.checkout, status: options.baseUrls.status },
    credentials: { checkout: options.credentials, status: options.credentials },
    timeoutMs: options.http.timeoutMs,
    retry: options.http.retry,
    loggerContext,
  };
}

/**
 * The options as CheckoutOptionsDto checks them: `handlers.retry.maxAttempts: Infinity` (retry
 * until the deadline) is no JSON number, so no decorator accepts it; it is left out of the DTO's
 * check (`forever`) and handled in code, where it needs `deadlineMs`.
 */
function splitInfiniteAttempts(raw: Record<string, unknown>): {
  finite: Record<string, unknown>;
  forever: boolean;
} {
  const handlers = raw.handlers as { retry?: { maxAttempts?: unknown } } | null | undefined;
  if (handlers?.retry?.maxAttempts !== Infinity) return { finite: raw, forever: false };
  const retry = { ...handlers.retry, maxAttempts: undefined };
  return { finite: { ...raw, handlers: { ...handlers, retry } }, forever: true };
}

/** The variable behind each option checkoutOptionsFromEnv reads (for errors naming it). */
export const CHECKOUT_ENV_VARIABLES: Readonly<Record<string, string>> = {
  [`${PREFIX}.clientId`]: HUBTEL_ENV.clientId,
  [`${PREFIX}.clientSecret`]: HUBTEL_ENV.clientSecret,
  [`${PREFIX}.posSalesId`]: HUBTEL_ENV.posSalesId,
  [`${PREFIX}.merchantAccountNumber`]: HUBTEL_ENV.merchantAccountNumber,
  [`${PREFIX}.baseUrls.checkout`]: HUBTEL_ENV.checkoutUrl,
  [`${PREFIX}.baseUrls.status`]: HUBTEL_ENV.statusUrl,
  ...hubtelHttpEnvVariables(PREFIX),
};

/**
 * Options read from HUBTEL_* environment variables (`HUBTEL_CLIENT_ID`, `HUBTEL_CLIENT_SECRET`,
 * `HUBTEL_CHECKOUT_URL`, `HUBTEL_STATUS_URL`, `HUBTEL_POS_SALES_ID`, `HUBTEL_MERCHANT_ACCOUNT_NUMBER`,
 * `HUBTEL_TIMEOUT_MS`, `HUBTEL_RETRY_*`), merged under `overrides`. A missing or bad value of one of
 * these variables fails here naming the variable (`HUBTEL_CLIENT_SECRET`) and the option. Typical use:
 * `CheckoutModule.forRootAsync({ useFactory: (config: ConfigService) => checkoutOptionsFromEnv((k) => config.get(k), { publicBaseUrl }), inject: [ConfigService] })`.
 */
export function checkoutOptionsFromEnv(
  source: HubtelEnvSource = process.env,
  overrides: Partial<CheckoutModuleOptions> = {},
): CheckoutModuleOptions {
  const env = readHubtelEnv(source);
  const fromEnv = {
    ...hubtelHttpOptionsFromEnv(env),
    ...dropUndefined({
      clientId: env.clientId,
      clientSecret: env.clientSecret,
      posSalesId: env.posSalesId,
      merchantAccountNumber: env.merchantAccountNumber,
    }),
  } as Partial<CheckoutModuleOptions>;
  const baseUrls = dropUndefined({
    checkout: env.checkoutUrl,
    status: env.statusUrl,
    ...(overrides.baseUrls ?? {}),
  });
  const merged = { ...fromEnv, ...dropUndefined(overrides) } as CheckoutModuleOptions;
  if (Object.keys(baseUrls).length > 0) merged.baseUrls = baseUrls;
  checkOptionsFromEnv(() => resolveCheckoutOptions(merged), CHECKOUT_ENV_VARIABLES, overrides);
  return merged;
}
