import {
  HubtelConfigError,
  type HubtelAccountResolver,
  type HubtelCredentials,
  type HubtelEnvSource,
  type HubtelRouteOptions,
  type HubtelStatusCheckBudgetOptions,
  type HubtelStoreOption,
  type InboundAccessOptions,
} from 'nestjs-hubtel';
import {
  HUBTEL_DEFAULT_BASE_URLS,
  HUBTEL_DEFAULT_COUNTRY_CODE,
  assertOptionsObject,
  backoffDelays,
  readHubtelEnv,
  refuseRemovedJobOptions,
  checkOptions,
  checkOptionsFromEnv,
  dropUndefined,
  HUBTEL_ENV,
  resolveUrl,
  assertStoreOption,
  inheritAccountOptions,
  resolveAccountResolver,
  type ResolvedAccountResolver,
} from '#internal';
import {
  ServiceAppMessagesDto,
  ServiceAppOptionsDto,
  type ServiceAppStatusCheckOptionsDto,
  type ServiceAppUssdOptionsDto,
  type ServiceAppVerificationOptionsDto,
} from './service-app.options.dto.js';
import {
  SERVICE_APP_DEFAULT_MESSAGES,
  SERVICE_APP_DEFAULTS,
  SERVICE_APP_USSD_DEFAULTS,
  type ServiceAppMessages,
} from './service-app.constants.js';
import type { ServiceFlowDefinition } from './service-flow.types.js';
import { assertUssdTexts, type ResolvedUssdOptions } from './service-flow.ussd.js';

/**
 * The transaction status check (`GET {status_url}/transactions/{posSalesId}/status?clientReference=<SessionId>`),
 * which confirms an order's payment before its handlers run. The key pair is the one of the
 * checkout and status-check APIs (HUBTEL_CLIENT_ID / HUBTEL_CLIENT_SECRET), not the SMS pair.
 */
export interface ServiceAppStatusCheckOptions {
  clientId: string;
  /** Never logged. */
  clientSecret: string;
  /** POS Sales ID of the account (HUBTEL_POS_SALES_ID). */
  posSalesId: string;
  /** Base URL. Default `https://api-txnstatus.hubtel.com` (HUBTEL_STATUS_URL). */
  url?: string;
  /** Time-out of one status check, ms. Default 15000. */
  timeoutMs?: number;
}

/** How fulfillment requests are verified before any handler runs. */
export interface ServiceAppVerificationOptions {
  /**
   * Confirm each order's payment with the status check: the SessionId's transaction must be
   * `Paid`, for the cart's total. Default: true when `statusCheck` is set (and it needs it).
   */
  enabled?: boolean;
  /**
   * A payment the platform has not recorded yet (no transaction, or `Unpaid`) is checked again
   * for this long after the request arrived before it is refused (`NOT_PAID`): at most 6 status
   * checks in all, the last at this time. Default 10 min; at most 1 h (the platform wants its
   * callback within the hour).
   */
  recheckForMs?: number;
  /**
   * `baseDelayMs`: when the first re-check comes (the gaps then grow to fill `recheckForMs`).
   * `maxDelayMs`: the backoff cap of runs that failed for another reason (a store outage).
   * Default 2 s, 60 s.
   */
  recheckDelay?: { baseDelayMs?: number; maxDelayMs?: number };
  /** Largest accepted difference between the amount paid and the cart's total, in currency units. Default 0. */
  amountTolerance?: number;
}

export interface ServiceAppModuleOptions {
  /** `{callback_url}`: the platform's fulfillment callback receiver. Default `https://gs-callback.hubtel.com:9055`. */
  callbackUrl?: string;
  /** Basic-auth pair for the callback, if your account was given one (the contract shows none). */
  callbackCredentials?: HubtelCredentials;
  /** Time-out of one callback POST, ms. Default 15000. */
  callbackTimeoutMs?: number;
  /**
   * The callback is retried with backoff (full jitter) through 5xx, time-outs and refusals until the
   * platform accepts it (2xx) or `deadlineMs` after it was first due (default one hour, the
   * platform's limit), then a dead-letter event is emitted. Defaults: 2 s base, 5 min cap, 1 h.
   */
  callbackRetry?: { baseDelayMs?: number; maxDelayMs?: number; deadlineMs?: number };
  /** Attempts of your @OnFulfillment handler (first included) before `failed` is reported. Default 5, 1 s base, 60 s cap. */
  fulfillmentRetry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** An idle session is forgotten after this long (renewed by every answer). Default 10 min. */
  sessionTtlMs?: number;
  /** How long a cart waits for its fulfillment request. Default 24 h. */
  cartTtlMs?: number;
  /**
   * Longest a step may take before the user is answered "please try again" (the step's late
   * answer is dropped). Default 4000 ms, under the 5 s a USSD session allows.
   */
  stepBudgetMs?: number;
  /** Entries that return to the previous prompt. Default `'0'`; `false` turns "back" off. */
  backInput?: string | readonly string[] | false;
  /**
   * Refuse a fulfillment request whose SessionId did not end in an AddToCart answered by this app
   * (default true). Turn off only if carts can be created outside this module (another instance
   * without a shared store, a migration): the access options are then your only protection.
   */
  requireCart?: boolean;
  /**
   * The status check that verifies fulfillment requests (see `verification`). Without it,
   * fulfillment requests are trusted as they come (a warning says so at start-up): protect the
   * endpoint with `access` (IP allow-list, path secret) then.
   */
  statusCheck?: ServiceAppStatusCheckOptions;
  verification?: ServiceAppVerificationOptions;
  /**
   * The instance's budget of transaction status checks a minute, shared with CheckoutModule (when
   * both set it, the smaller wins; see HubtelStatusCheckBudgetOptions). Default 600 a minute.
   */
  statusCheckBudget?: HubtelStatusCheckBudgetOptions;
  /**
   * A started session that has not had its first answer yet is forgotten after this long (the
   * sliding `sessionTtlMs` applies from the first answer on). Keeps abandoned and forged
   * session starts cheap. Default 2 min.
   */
  sessionStartTtlMs?: number;
  /**
   * Most sessions waiting for their first answer at once, per instance; past it the oldest of them
   * gives way to a new one (a flood pushes out its own starts, not the customers who answered).
   * Default 50,000 (about 30 MB).
   */
  maxPendingSessions?: number;
  /**
   * Where sessions, carts and order records live: a HubtelStore instance, or the injection token of
   * one provided in your app. Default: the app-wide `HUBTEL_STORE` (e.g. `HubtelRedisModule`) when
   * provided, else a MemoryStore (single instance, lost on restart).
   */
  store?: HubtelStoreOption;
  /** Path secret and IP allow-list for both endpoints (see InboundAccessOptions). Default: open. */
  access?: InboundAccessOptions;
  /** Flows written with ServiceFlowBuilder (decorated `@ServiceFlow()` providers are found on their own). */
  flows?: ServiceFlowDefinition[];
  /** Texts the module answers by itself (expired session, busy, errors, re-ask explanations). */
  messages?: Partial<ServiceAppMessages>;
  /** Country code for national numbers typed in `phone` fields (`024…`). Default '233'. */
  defaultCountryCode?: string;
  /** The USSD channel: screen size, pages of long menus, operators (see ServiceAppUssdOptions). */
  ussd?: ServiceAppUssdOptions;
  /**
   * On shutdown, how long handlers and callbacks running here may take to finish (new requests
   * are answered 503 meanwhile). Default 5000 ms. See docs/operations.md.
   */
  shutdownGraceMs?: number;
  /**
   * Accounts known only at run time (a database of merchants): a request on
   * `/api/service-flow/<name>` (or `fulfillment.forAccount(name)`) for a name registered nowhere
   * else asks `resolve(name)` for that account's options (as `registerAccount` takes them).
   * Default account only.
   */
  accounts?: HubtelAccountResolver<ServiceAppAccountOverrides>;
}

/**
 * What a named account sets (`ServiceAppModule.registerAccount`). Its credentials are its own,
 * never the default account's: `statusCheck` (key pair and POS Sales ID; required when the default
 * account has one, so no account is left unverified) and `callbackCredentials` (required when the
 * default account has them); `access.pathSecret` is its own too (none when unset). Every other
 * option it leaves out is the default account's (objects field by field); the options of the
 * module as a whole (store, flows, job retry policies, shutdown, budgets, resolver) are the
 * default account's only and refused here.
 */
export type ServiceAppAccountOverrides = Omit<
  ServiceAppModuleOptions,
  (typeof SERVICE_APP_ACCOUNT_INHERITANCE.defaultOnly)[number]
>;

/**
 * How a named account inherits (core's inheritAccountOptions). `callbackUrl` is inherited: it is
 * the platform's one fulfillment-callback receiver (`gs-callback.hubtel.com:9055`, platform facts),
 * the same for every merchant, which tells accounts apart by the callback credentials.
 * `callbackRetry`, `fulfillmentRetry` are the module's job policies (one per job type), so they
 * are the default account's only, like the store and the flows.
 */
export const SERVICE_APP_ACCOUNT_INHERITANCE = {
  own: [] as string[],
  notInherited: ['statusCheck', 'callbackCredentials'],
  defaultOnly: [
    'store',
    'flows',
    'shutdownGraceMs',
    'statusCheckBudget',
    'maxPendingSessions',
    'accounts',
    'callbackRetry',
    'fulfillmentRetry',
  ],
  merged: ['access', 'verification', 'ussd', 'messages'],
} as const;

/**
 * The resolved options of named account `name`: its own options over the default account's
 * (`defaults`, as given to forRoot). Errors name the option under `serviceApp[name]`.
 */
export function resolveServiceAppAccountOptions(
  name: string,
  defaults: ServiceAppModuleOptions,
  overrides: unknown,
): ResolvedServiceAppOptions {
  const scope = `${SERVICE_APP_SCOPE}[${name}]`;
  const base = defaults ?? {};
  // Required where the default account has them: an account without its own would run unverified
  // (statusCheck) or be refused by the platform (callbackCredentials), silently.
  const own = (['statusCheck', 'callbackCredentials'] as const).filter((key) => base[key] !== undefined);
  // The path secret is each account's own (the platform's source addresses are everyone's).
  const inherited: ServiceAppModuleOptions = { ...base };
  if (base.access && typeof base.access === 'object') {
    const { pathSecret: _secret, ...access } = base.access;
    inherited.access = access;
  }
  const merged = inheritAccountOptions(scope, inherited, overrides, {
    ...SERVICE_APP_ACCOUNT_INHERITANCE,
    own,
    notInherited: SERVICE_APP_ACCOUNT_INHERITANCE.notInherited.filter((key) => !own.includes(key)),
  });
  // The status check's address and time-out are no credentials: inherited when not set.
  const given = merged.statusCheck as ServiceAppStatusCheckOptions | undefined;
  if (given && typeof given === 'object' && base.statusCheck && typeof base.statusCheck === 'object') {
    const { url, timeoutMs } = base.statusCheck;
    merged.statusCheck = { ...dropUndefined({ url, timeoutMs }), ...dropUndefined({ ...given }) };
  }
  return resolveServiceAppOptions(merged as ServiceAppModuleOptions, scope);
}

/**
 * The USSD channel (a request with `Platform: USSD` or a telco `Operator`): the phone shows
 * `Message` only, so menus are written into it, paged to the screen. See docs/service-app.md.
 */
export interface ServiceAppUssdOptions {
  /** Characters of a GSM 7-bit screen. Default 182. */
  screenSize?: number;
  /** Characters of a screen holding any character outside GSM-7. Default 70. */
  unicodeScreenSize?: number;
  /** Replace characters outside GSM-7 (`’` → `'`, `ō` → `o`, others `?`) instead of losing the 182. Default false. */
  transliterate?: boolean;
  /** Key and label of the entry to a long menu's next page. Default `9`, `More`. */
  moreKey?: string;
  moreLabel?: string;
  /** Key and label of the entry to a long menu's previous page. Default `8`, `Back`. */
  backKey?: string;
  backLabel?: string;
  /** More `Operator` values that mean USSD (a telco not in the built-in list), any case, country suffix allowed. */
  operators?: readonly string[];
  /** `Operator` values that are app channels even though they look like a telco. */
  appOperators?: readonly string[];
}

/** Where and how the two endpoints are mounted. Given as a module extra: routes are fixed before async options resolve. */
export interface ServiceAppRouteOptions extends HubtelRouteOptions {
  /** Prefix of both endpoints. Default `api` (→ `POST /api/service-flow`, `POST /api/fulfillment`). */
  path?: string;
  /** Path of the service interaction endpoint under the prefix. Default `service-flow`. */
  serviceFlowPath?: string;
  /** Path of the fulfillment endpoint under the prefix. Default `fulfillment`. */
  fulfillmentPath?: string;
}

export interface ServiceAppModuleExtras {
  /** Register the module globally. Default false. */
  isGlobal?: boolean;
  routes?: ServiceAppRouteOptions;
}

export interface ResolvedServiceAppOptions {
  callbackUrl: string;
  callbackCredentials?: HubtelCredentials;
  callbackTimeoutMs: number;
  callbackRetry: { baseDelayMs: number; maxDelayMs: number; deadlineMs: number };
  fulfillmentRetry: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number };
  sessionTtlMs: number;
  cartTtlMs: number;
  stepBudgetMs: number;
  backInputs: string[];
  requireCart: boolean;
  statusCheck?: { credentials: HubtelCredentials; posSalesId: string; url: string; timeoutMs: number };
  verification: {
    enabled: boolean;
    recheckForMs: number;
    recheckDelay: { baseDelayMs: number; maxDelayMs: number };
    amountTolerance: number;
  };
  /** Absent: this module leaves the instance's budget as others (or the default) set it. */
  statusCheckBudget: { perMinute?: number };
  sessionStartTtlMs: number;
  maxPendingSessions: number;
  store?: HubtelStoreOption;
  access: InboundAccessOptions;
  flows: ServiceFlowDefinition[];
  messages: ServiceAppMessages;
  defaultCountryCode: string;
  ussd: ResolvedUssdOptions;
  shutdownGraceMs?: number;
  /** The account resolver (default account only). */
  accounts?: ResolvedAccountResolver<ServiceAppAccountOverrides>;
}

/** The prefix of the module's option names in errors (a named account's: `serviceApp[north]`). */
export const SERVICE_APP_SCOPE = 'serviceApp';
const P = SERVICE_APP_SCOPE;

/** Validates the options at bootstrap; a bad one stops the app with a HubtelConfigError naming it. */
export function resolveServiceAppOptions(
  raw: ServiceAppModuleOptions | undefined,
  /** Names options in errors: `serviceApp`, or `serviceApp[north]` for a named account. */
  P = SERVICE_APP_SCOPE,
): ResolvedServiceAppOptions {
  const options = raw ?? {};
  assertOptionsObject(options, P);
  const o = options as Record<string, unknown>;
  const D = SERVICE_APP_DEFAULTS;
  const top = checkOptions(ServiceAppOptionsDto, o, P);
  refuseRemovedJobOptions(o, P);
  // Checked apart: unknown fields are refused here only (the options carry flows, store, access...).
  const messages = checkOptions(ServiceAppMessagesDto, o.messages ?? {}, `${P}.messages`, {
    forbidUnknown: true,
  }) as Partial<ServiceAppMessages>;

  const callbackUrl = resolveUrl(o.callbackUrl, `${P}.callbackUrl`, D.callbackUrl);
  let access: InboundAccessOptions = {};
  if (o.access !== undefined) {
    assertOptionsObject(o.access, `${P}.access`);
    access = o.access as InboundAccessOptions;
  }

  const statusCheck = resolveStatusCheck(top.statusCheck, o.statusCheck, P);
  const verification = resolveVerification(top.verification ?? {}, statusCheck !== undefined, P);
  const sessionTtlMs = top.sessionTtlMs ?? D.sessionTtlMs;
  const sessionStartTtlMs = top.sessionStartTtlMs ?? Math.min(D.sessionStartTtlMs, sessionTtlMs);
  // Cross-field: a session cannot start with more time than a whole session gets.
  if (sessionStartTtlMs > sessionTtlMs)
    throw new HubtelConfigError(`${P}.sessionStartTtlMs`, `must be at most sessionTtlMs (${sessionTtlMs})`);

  const flows = o.flows === undefined ? [] : o.flows;
  if (!Array.isArray(flows))
    throw new HubtelConfigError(`${P}.flows`, 'must be an array of flows built with ServiceFlowBuilder');

  const callbackRetry = top.callbackRetry ?? {};
  const fulfillmentRetry = top.fulfillmentRetry ?? {};
  const backInputs = resolveBackInputs(o.backInput, P);
  const resolvedMessages: ServiceAppMessages = { ...SERVICE_APP_DEFAULT_MESSAGES, ...messages };
  return {
    callbackUrl,
    callbackCredentials: top.callbackCredentials,
    callbackTimeoutMs: top.callbackTimeoutMs ?? D.callbackTimeoutMs,
    callbackRetry: {
      ...backoffDelays(callbackRetry, D.callbackRetry, `${P}.callbackRetry`),
      deadlineMs: callbackRetry.deadlineMs ?? D.callbackRetry.deadlineMs,
    },
    fulfillmentRetry: {
      maxAttempts: fulfillmentRetry.maxAttempts ?? D.fulfillmentRetry.maxAttempts,
      ...backoffDelays(fulfillmentRetry, D.fulfillmentRetry, `${P}.fulfillmentRetry`),
    },
    sessionTtlMs,
    cartTtlMs: top.cartTtlMs ?? D.cartTtlMs,
    stepBudgetMs: top.stepBudgetMs ?? D.stepBudgetMs,
    backInputs,
    requireCart: top.requireCart ?? D.requireCart,
    statusCheck,
    verification,
    statusCheckBudget: dropUndefined({ perMinute: top.statusCheckBudget?.perMinute }),
    sessionStartTtlMs,
    maxPendingSessions: top.maxPendingSessions ?? D.maxPendingSessions,
    store: assertStoreOption(o.store, `${P}.store`),
    access,
    flows: flows as ServiceFlowDefinition[],
    messages: resolvedMessages,
    defaultCountryCode: top.defaultCountryCode ?? HUBTEL_DEFAULT_COUNTRY_CODE,
    ussd: resolveUssd(top.ussd ?? {}, o.ussd, backInputs, resolvedMessages, P),
    ...dropUndefined({ accounts: resolveAccountResolver<ServiceAppAccountOverrides>(o.accounts, P) }),
    ...dropUndefined({ shutdownGraceMs: top.shutdownGraceMs }),
  };
}

/** The variable behind each option serviceAppOptionsFromEnv reads (for errors naming it). */
const SERVICE_APP_ENV_VARIABLES = {
  [`${P}.callbackUrl`]: HUBTEL_ENV.callbackUrl,
  [`${P}.defaultCountryCode`]: HUBTEL_ENV.defaultCountryCode,
  [`${P}.statusCheck.clientId`]: HUBTEL_ENV.clientId,
  [`${P}.statusCheck.clientSecret`]: HUBTEL_ENV.clientSecret,
  [`${P}.statusCheck.posSalesId`]: HUBTEL_ENV.posSalesId,
  [`${P}.statusCheck.url`]: HUBTEL_ENV.statusUrl,
};

/**
 * ServiceAppModule options found in the environment (`HUBTEL_CALLBACK_URL`,
 * `HUBTEL_DEFAULT_COUNTRY_CODE`, and the status check when `HUBTEL_CLIENT_ID`,
 * `HUBTEL_CLIENT_SECRET` and `HUBTEL_POS_SALES_ID` are all set, with `HUBTEL_STATUS_URL`), for `forRootAsync({ useFactory: () => ({ ...serviceAppOptionsFromEnv(), ... }) })`.
 * A bad value of one of these variables fails here, naming the variable and the option.
 */
export function serviceAppOptionsFromEnv(source: HubtelEnvSource = process.env): ServiceAppModuleOptions {
  const env = readHubtelEnv(source);
  const out: ServiceAppModuleOptions = {};
  if (env.callbackUrl !== undefined) out.callbackUrl = env.callbackUrl;
  if (env.defaultCountryCode !== undefined) out.defaultCountryCode = env.defaultCountryCode;
  if (env.clientId !== undefined && env.clientSecret !== undefined && env.posSalesId !== undefined) {
    out.statusCheck = { clientId: env.clientId, clientSecret: env.clientSecret, posSalesId: env.posSalesId };
    if (env.statusUrl !== undefined) out.statusCheck.url = env.statusUrl;
  }
  checkOptionsFromEnv(() => resolveServiceAppOptions(out), SERVICE_APP_ENV_VARIABLES);
  return out;
}

/** The checked status check, its URL resolved (a transform: parsed, trailing slashes trimmed). */
function resolveStatusCheck(
  checked: ServiceAppStatusCheckOptionsDto | undefined,
  given: unknown,
  P: string,
): ResolvedServiceAppOptions['statusCheck'] {
  if (checked === undefined) return undefined;
  const name = `${P}.statusCheck`;
  return {
    credentials: { clientId: checked.clientId, clientSecret: checked.clientSecret },
    posSalesId: checked.posSalesId,
    url: resolveUrl((given as { url?: unknown }).url, `${name}.url`, HUBTEL_DEFAULT_BASE_URLS.status),
    timeoutMs: checked.timeoutMs ?? SERVICE_APP_DEFAULTS.callbackTimeoutMs,
  };
}

function resolveVerification(
  checked: ServiceAppVerificationOptionsDto,
  hasStatusCheck: boolean,
  P: string,
): ResolvedServiceAppOptions['verification'] {
  const name = `${P}.verification`;
  const D = SERVICE_APP_DEFAULTS.verification;
  const enabled = checked.enabled ?? hasStatusCheck;
  // Cross-field: the payment is confirmed with the status check.
  if (enabled && !hasStatusCheck)
    throw new HubtelConfigError(
      `${name}.enabled`,
      `needs ${P}.statusCheck (the payment is confirmed with it)`,
    );
  return {
    enabled,
    recheckForMs: checked.recheckForMs ?? D.recheckForMs,
    recheckDelay: backoffDelays(checked.recheckDelay ?? {}, D, `${name}.recheckDelay`),
    amountTolerance: checked.amountTolerance ?? 0,
  };
}

/**
 * The USSD options, with the rules across fields: the navigation keys differ from each other and
 * from the back inputs, and every text the module shows by itself fits one screen (a menu page
 * must still hold an option beside its two navigation lines) — found at start-up, not by a user.
 */
function resolveUssd(
  checked: ServiceAppUssdOptionsDto,
  given: unknown,
  backInputs: readonly string[],
  messages: ServiceAppMessages,
  P: string,
): ResolvedUssdOptions {
  const name = `${P}.ussd`;
  const D = SERVICE_APP_USSD_DEFAULTS;
  const raw = (given ?? {}) as { operators?: unknown; appOperators?: unknown };
  const ussd: ResolvedUssdOptions = {
    screenSize: checked.screenSize ?? D.screenSize,
    unicodeScreenSize: checked.unicodeScreenSize ?? D.unicodeScreenSize,
    transliterate: checked.transliterate ?? D.transliterate,
    moreKey: (checked.moreKey ?? D.moreKey).trim(),
    moreLabel: checked.moreLabel ?? D.moreLabel,
    backKey: (checked.backKey ?? D.backKey).trim(),
    backLabel: checked.backLabel ?? D.backLabel,
    operators: operatorList(raw.operators, `${name}.operators`),
    appOperators: operatorList(raw.appOperators, `${name}.appOperators`),
  };
  if (ussd.unicodeScreenSize > ussd.screenSize)
    throw new HubtelConfigError(
      `${name}.unicodeScreenSize`,
      `must be at most screenSize (${ussd.screenSize})`,
    );
  if (ussd.moreKey === ussd.backKey)
    throw new HubtelConfigError(`${name}.backKey`, `must differ from moreKey ("${ussd.moreKey}")`);
  for (const key of ['moreKey', 'backKey'] as const) {
    if (backInputs.includes(ussd[key]))
      throw new HubtelConfigError(
        `${name}.${key}`,
        `"${ussd[key]}" is also a backInput: a key must mean one thing`,
      );
  }
  assertUssdTexts(ussd, messages, name);
  return ussd;
}

function operatorList(value: unknown, option: string): ReadonlySet<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === ''))
    throw new HubtelConfigError(option, 'must be an array of non-empty strings');
  return new Set(value.map((v: string) => v.trim().toLowerCase()));
}

function resolveBackInputs(value: unknown, P: string): string[] {
  if (value === undefined) return [SERVICE_APP_DEFAULTS.backInput];
  if (value === false) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'string' || v.trim() === '')) {
    throw new HubtelConfigError(`${P}.backInput`, 'must be a non-empty string, an array of them, or false');
  }
  return list.map((v: string) => v.trim());
}
