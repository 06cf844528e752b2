import {
  HubtelConfigError,
  type HubtelAccountResolver,
  type HubtelCredentials,
  type HubtelEnvSource,
  type HubtelStatusCheckBudgetOptions,
  type HubtelStoreOption,
  type InboundAccessOptions,
} from 'nestjs-hubtel';
import {
  HUBTEL_DEFAULT_COUNTRY_CODE,
  HUBTEL_ENV,
  HubtelBackoffOptionsDto,
  HubtelOption,
  HubtelStatusCheckBudgetOptionsDto,
  IsHubtelCountryCode,
  IsHubtelShutdownGraceMs,
  assertStoreOption,
  backoffDelays,
  checkOptions,
  dropUndefined,
  hubtelOptionsRecipe,
  refuseRemovedJobOptions,
  type HubtelEnvAccounts,
  type ResolvedAccountResolver,
  declareAccessOptions,
  declareCredentials,
} from '#internal';
import {
  SERVICE_APP_DEFAULT_MESSAGES,
  SERVICE_APP_DEFAULTS,
  type ServiceAppMessages,
  SERVICE_APP_SCOPE,
} from './service-app.constants.js';
import type { ServiceFlowDefinition } from './service-flow.context.js';
import type { ResolvedUssdOptions } from './service-app.ussd.js';
import {
  ServiceAppStatusCheckOptions,
  ServiceAppVerificationOptions,
  ServiceAppUssdOptions,
  ServiceAppCallbackRetryOptions,
  ServiceAppFulfillmentRetryOptions,
  ServiceAppMessagesOptions,
  resolveUssd,
  statusCheckFromEnv,
  resolveBackInputs,
} from './service-app.option-sections.js';

// Checked by the declarations below; the recipe's `resolve` keeps the rules across fields (backoff
// bounds, verification needing statusCheck, flows, store, back inputs, USSD keys and texts).
const D = SERVICE_APP_DEFAULTS;

/** `access`: the path secret from HUBTEL_SERVICE_APP_PATH_SECRET, each account's own. */
const ServiceAppAccessOptions = declareAccessOptions(HUBTEL_ENV.serviceAppPathSecret);

/** `callbackCredentials`, from HUBTEL_CALLBACK_CLIENT_ID / HUBTEL_CALLBACK_CLIENT_SECRET. */
const ServiceAppCallbackCredentials = declareCredentials({
  clientId: HUBTEL_ENV.callbackClientId,
  clientSecret: HUBTEL_ENV.callbackClientSecret,
});

/**
 * Options of `ServiceAppModule.forRoot` / `forRootAsync` and of a named account (`registerAccount`,
 * see ServiceAppAccountOverrides), each field declared once (rules, default, environment variable,
 * how a named account gets it). The options removed in 0.2.0 (`leaseMs`, `sweepIntervalMs`,
 * `recoverOnBootstrap`) are refused, naming what replaced them.
 */
export class ServiceAppModuleOptions {
  /**
   * The status check that verifies fulfillment requests (see `verification`). Without it,
   * fulfillment requests are trusted as they come (a warning says so at start-up): protect the
   * endpoint with `access` (IP allow-list, path secret) then. A named account gives its own (key
   * pair and POS Sales ID; its URL and time-out are the default's unless set) when the default
   * account has one, so no account is left unverified.
   */
  @HubtelOption({ nested: () => ServiceAppStatusCheckOptions, account: 'ownIfDefault' })
  statusCheck?: ServiceAppStatusCheckOptions;

  /** How fulfillment requests are verified (see ServiceAppVerificationOptions). */
  @HubtelOption({ nested: () => ServiceAppVerificationOptions, account: 'merged', default: {} })
  verification?: ServiceAppVerificationOptions;

  /**
   * `{callback_url}`: the platform's fulfillment callback receiver. Default
   * `https://gs-callback.hubtel.com:9055`. A named account inherits it: the platform has one
   * receiver for every merchant, which tells accounts apart by the callback credentials.
   */
  @HubtelOption({ url: true, env: HUBTEL_ENV.callbackUrl, default: D.callbackUrl })
  callbackUrl?: string;

  /**
   * Basic-auth pair for the callback, if your account was given one (the contract shows none). A
   * named account gives its own when the default account has one (the platform would refuse it).
   */
  @HubtelOption({ nested: () => ServiceAppCallbackCredentials, account: 'ownIfDefault' })
  callbackCredentials?: HubtelCredentials;

  /** Time-out of one callback POST, ms. Default 15000. */
  @HubtelOption({ int: [1, 600_000], default: D.callbackTimeoutMs })
  callbackTimeoutMs?: number;

  /**
   * The callback is retried with backoff (full jitter) through 5xx, time-outs and refusals until the
   * platform accepts it (2xx) or `deadlineMs` after it was first due (default one hour, the
   * platform's limit), then a dead-letter event is emitted. Defaults: 2 s base, 5 min cap, 1 h.
   * Default account only (one policy per job type).
   */
  @HubtelOption({ nested: () => ServiceAppCallbackRetryOptions, account: 'defaultOnly', default: {} })
  callbackRetry?: ServiceAppCallbackRetryOptions;

  /**
   * Attempts of your @OnFulfillment handler (first included) before `failed` is reported. Default
   * 5, 1 s base, 60 s cap. Default account only (one policy per job type).
   */
  @HubtelOption({ nested: () => ServiceAppFulfillmentRetryOptions, account: 'defaultOnly', default: {} })
  fulfillmentRetry?: ServiceAppFulfillmentRetryOptions;

  /** An idle session is forgotten after this long (renewed by every answer). Default 10 min. */
  @HubtelOption({ int: 1, default: D.sessionTtlMs })
  sessionTtlMs?: number;

  /**
   * A started session that has not had its first answer yet is forgotten after this long (the
   * sliding `sessionTtlMs` applies from the first answer on). Keeps abandoned and forged
   * session starts cheap. Default 2 min (at most `sessionTtlMs`).
   */
  @HubtelOption({
    int: 1,
    atMost: 'sessionTtlMs',
    defaultFrom: (options) => Math.min(D.sessionStartTtlMs, options.sessionTtlMs as number),
  })
  sessionStartTtlMs?: number;

  /** How long a cart waits for its fulfillment request. Default 24 h. */
  @HubtelOption({ int: 1, default: D.cartTtlMs })
  cartTtlMs?: number;

  /**
   * Longest a step may take before the user is answered "please try again" (the step's late
   * answer is dropped). Default 4000 ms, under the 5 s a USSD session allows.
   */
  @HubtelOption({ int: [1, 60_000], default: D.stepBudgetMs })
  stepBudgetMs?: number;

  /** Entries that return to the previous prompt. Default `'0'`; `false` turns "back" off. */
  @HubtelOption({ default: D.backInput })
  backInput?: string | readonly string[] | false;

  /**
   * Refuse a fulfillment request whose SessionId did not end in an AddToCart answered by this app
   * (default true). Turn off only if carts can be created outside this module (another instance
   * without a shared store, a migration): the access options are then your only protection.
   */
  @HubtelOption({ bool: true, default: D.requireCart })
  requireCart?: boolean;

  /**
   * The instance's budget of transaction status checks a minute, shared with CheckoutModule (when
   * both set it, the smaller wins; see HubtelStatusCheckBudgetOptions). Default 600 a minute.
   * Default account only.
   */
  @HubtelOption({ nested: () => HubtelStatusCheckBudgetOptionsDto, account: 'defaultOnly' })
  statusCheckBudget?: HubtelStatusCheckBudgetOptions;

  /**
   * Most sessions waiting for their first answer at once, per instance; past it the oldest of them
   * gives way to a new one (a flood pushes out its own starts, not the customers who answered).
   * Default 50,000 (about 30 MB). Default account only.
   */
  @HubtelOption({ int: [1, 10_000_000], account: 'defaultOnly', default: D.maxPendingSessions })
  maxPendingSessions?: number;

  /**
   * Where sessions, carts and order records live: a HubtelStore instance, or the injection token of
   * one provided in your app. Default: the app-wide `HUBTEL_STORE` (e.g. `HubtelRedisModule`) when
   * provided, else a MemoryStore (single instance, lost on restart). Default account only.
   */
  @HubtelOption({ account: 'defaultOnly' })
  store?: HubtelStoreOption;

  /**
   * Path secret and IP allow-list for both endpoints (see InboundAccessOptions). Default: open. A
   * named account inherits it field by field, except the path secret (its own, none when unset).
   */
  @HubtelOption({ account: 'merged', section: () => ServiceAppAccessOptions, default: {} })
  access?: InboundAccessOptions;

  /**
   * Flows written with ServiceFlowBuilder (decorated `@ServiceFlow()` providers are found on their
   * own). Default account only.
   */
  @HubtelOption({ account: 'defaultOnly', defaultFrom: () => [] })
  flows?: ServiceFlowDefinition[];

  /** Texts the module answers by itself (expired session, busy, errors, re-ask explanations). */
  @HubtelOption({ account: 'merged', default: {} })
  messages?: Partial<ServiceAppMessages>;

  /** Country code for national numbers typed in `phone` fields (`024…`). Default '233'. */
  @HubtelOption({
    is: IsHubtelCountryCode(),
    env: HUBTEL_ENV.defaultCountryCode,
    default: HUBTEL_DEFAULT_COUNTRY_CODE,
  })
  defaultCountryCode?: string;

  /** The USSD channel: screen size, pages of long menus, operators (see ServiceAppUssdOptions). */
  @HubtelOption({ nested: () => ServiceAppUssdOptions, account: 'merged', default: {} })
  ussd?: ServiceAppUssdOptions;

  /**
   * On shutdown, how long handlers and callbacks running here may take to finish (new requests
   * are answered 503 meanwhile). Default 5000 ms. See docs/operations.md. Default account only.
   */
  @IsHubtelShutdownGraceMs()
  @HubtelOption({ account: 'defaultOnly' })
  shutdownGraceMs?: number;

  /**
   * Accounts known only at run time (a database of merchants): a request on
   * `/api/service-flow/<name>` (or `fulfillment.forAccount(name)`) for a name registered nowhere
   * else asks `resolve(name)` for that account's options (as `registerAccount` takes them).
   * Default account only.
   */
  @HubtelOption({ account: 'defaultOnly' })
  accounts?: HubtelAccountResolver<ServiceAppAccountOverrides>;
}

/**
 * What a named account sets (`ServiceAppModule.registerAccount`): the options not declared
 * `defaultOnly` (store, flows, job retry policies, shutdown, budgets, resolver: refused here). Its
 * credentials are its own, never the default account's: `statusCheck` and `callbackCredentials`
 * (each required when the default account has it) and `access.pathSecret` (none when unset).
 * Every other option it leaves out is the default account's (`access`, `verification`, `ussd`,
 * `messages` field by field).
 */
export type ServiceAppAccountOverrides = Omit<ServiceAppModuleOptions, ServiceAppModuleWideOption>;

/** Options of the whole module, set on the default account only (declared `account: 'defaultOnly'`). */
export type ServiceAppModuleWideOption =
  | 'store'
  | 'flows'
  | 'shutdownGraceMs'
  | 'statusCheckBudget'
  | 'maxPendingSessions'
  | 'accounts'
  | 'callbackRetry'
  | 'fulfillmentRetry';

type Resolved<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };

/** The options that have no default: absent stays absent. */
type Undefaulted =
  'statusCheck' | 'callbackCredentials' | 'statusCheckBudget' | 'store' | 'shutdownGraceMs' | 'accounts';

/** The options as resolveDeclaredOptions gives them, every declared default filled in. */
type Defaulted = Resolved<Omit<ServiceAppModuleOptions, Undefaulted>> &
  Pick<ServiceAppModuleOptions, Undefaulted>;

/** Options after validation, every default filled in, in the shapes the module consumes. */
export type ResolvedServiceAppOptions = Omit<
  Defaulted,
  | 'backInput'
  | 'callbackRetry'
  | 'fulfillmentRetry'
  | 'statusCheck'
  | 'verification'
  | 'statusCheckBudget'
  | 'messages'
  | 'ussd'
  | 'accounts'
> & {
  callbackRetry: Resolved<ServiceAppCallbackRetryOptions>;
  fulfillmentRetry: Resolved<ServiceAppFulfillmentRetryOptions>;
  backInputs: string[];
  statusCheck?: Resolved<Omit<ServiceAppStatusCheckOptions, 'clientId' | 'clientSecret'>> & {
    credentials: HubtelCredentials;
  };
  verification: Resolved<Omit<ServiceAppVerificationOptions, 'recheckDelay'>> & {
    recheckDelay: Resolved<HubtelBackoffOptionsDto>;
  };
  /** Absent: this module leaves the instance's budget as others (or the default) set it. */
  statusCheckBudget: HubtelStatusCheckBudgetOptions;
  messages: ServiceAppMessages;
  ussd: ResolvedUssdOptions;
  /** The account resolver (default account only). */
  accounts?: ResolvedAccountResolver<ServiceAppAccountOverrides>;
};

/** Default options and named accounts read from the environment (`serviceAppAccountsFromEnv`). */
export interface ServiceAppEnvAccounts extends HubtelEnvAccounts<
  ServiceAppModuleOptions,
  ServiceAppAccountOverrides
> {
  /** For `ServiceAppModule.forRoot` (spread your other options over it). */
  default: ServiceAppModuleOptions;
}

/** The service app's options, derived from ServiceAppModuleOptions; errors name `serviceApp[north].…`. */
export const SERVICE_APP_OPTIONS_RECIPE = hubtelOptionsRecipe<
  ServiceAppModuleOptions,
  ResolvedServiceAppOptions,
  ServiceAppAccountOverrides
>({
  scope: SERVICE_APP_SCOPE,
  options: ServiceAppModuleOptions,
  optional: true,
  grouped: ['backInput'],
  resolve: (checked, { scope: P, raw }) => {
    const options = checked as Defaulted;
    refuseRemovedJobOptions(raw, P);
    // Checked apart: unknown fields are refused here only (the options carry flows, store, access...).
    const messages: ServiceAppMessages = {
      ...SERVICE_APP_DEFAULT_MESSAGES,
      ...(checkOptions(ServiceAppMessagesOptions, options.messages, `${P}.messages`, {
        forbidUnknown: true,
      }) as Partial<ServiceAppMessages>),
    };
    const check = options.statusCheck;
    const statusCheck = check && {
      credentials: { clientId: check.clientId, clientSecret: check.clientSecret },
      posSalesId: check.posSalesId,
      url: check.url!,
      timeoutMs: check.timeoutMs!,
    };
    if (!Array.isArray(options.flows))
      throw new HubtelConfigError(`${P}.flows`, 'must be an array of flows built with ServiceFlowBuilder');
    const { callbackRetry, fulfillmentRetry, verification } = options;
    // Cross-field: the payment is confirmed with the status check.
    if (verification.enabled && !statusCheck)
      throw new HubtelConfigError(
        `${P}.verification.enabled`,
        `needs ${P}.statusCheck (the payment is confirmed with it)`,
      );
    const backInputs = resolveBackInputs(options.backInput, P);
    return {
      callbackRetry: {
        ...backoffDelays(callbackRetry, D.callbackRetry, `${P}.callbackRetry`),
        deadlineMs: callbackRetry.deadlineMs!,
      },
      fulfillmentRetry: {
        maxAttempts: fulfillmentRetry.maxAttempts!,
        ...backoffDelays(fulfillmentRetry, D.fulfillmentRetry, `${P}.fulfillmentRetry`),
      },
      backInputs,
      statusCheck,
      verification: {
        ...(verification as ResolvedServiceAppOptions['verification']),
        recheckDelay: backoffDelays(
          verification.recheckDelay!,
          D.verification,
          `${P}.verification.recheckDelay`,
        ),
      },
      statusCheckBudget: dropUndefined({ perMinute: options.statusCheckBudget?.perMinute }),
      store: assertStoreOption(options.store, `${P}.store`),
      messages,
      ussd: resolveUssd(options.ussd, backInputs, messages, P),
    };
  },
  fromEnv: statusCheckFromEnv,
});

/** Validates the options at bootstrap; a bad one stops the app with a HubtelConfigError naming it. */
export const resolveServiceAppOptions = (
  raw: ServiceAppModuleOptions | undefined,
): ResolvedServiceAppOptions => SERVICE_APP_OPTIONS_RECIPE.resolve(raw);

/** Named account `name`'s options: its own over the default account's, as ServiceAppModuleOptions declares. */
export const resolveServiceAppAccountOptions = (
  name: string,
  defaults: ServiceAppModuleOptions,
  overrides: unknown,
): ResolvedServiceAppOptions => SERVICE_APP_OPTIONS_RECIPE.resolveAccount(name, defaults ?? {}, overrides);

/**
 * ServiceAppModule options found in the environment (see docs/service-app.md; the status check only
 * when HUBTEL_CLIENT_ID, HUBTEL_CLIENT_SECRET and HUBTEL_POS_SALES_ID are all set), with `overrides`
 * over them, sections field by field. A bad value fails here, naming the variable and the option.
 */
export function serviceAppOptionsFromEnv(
  source: HubtelEnvSource = process.env,
  overrides: Partial<ServiceAppModuleOptions> = {},
): ServiceAppModuleOptions {
  return SERVICE_APP_OPTIONS_RECIPE.optionsFromEnv(source, overrides);
}

/**
 * The default account (as `serviceAppOptionsFromEnv`) and the accounts named in HUBTEL_ACCOUNTS
 * (`north,south`), each from its own variables (see docs/accounts.md): its status check is whole
 * (all three of HUBTEL_NORTH_CLIENT_ID, _CLIENT_SECRET, _POS_SALES_ID) when the default account has
 * one or any of them is set: an account never uses another's keys.
 */
export function serviceAppAccountsFromEnv(
  source: HubtelEnvSource = process.env,
  /** Over the default account's variables, as `serviceAppOptionsFromEnv` takes them. */
  overrides: Partial<ServiceAppModuleOptions> = {},
): ServiceAppEnvAccounts {
  return SERVICE_APP_OPTIONS_RECIPE.accountsFromEnv(source, overrides);
}
