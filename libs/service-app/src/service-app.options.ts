import {
  HubtelConfigError,
  type HubtelAccountResolver,
  type HubtelCredentials,
  type HubtelStatusCheckBudgetOptions,
  type HubtelStoreOption,
  type InboundAccessOptions,
} from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  HubtelOption,
  HubtelStatusCheckBudgetOptionsDto,
  HubtelCountryCodeOption,
  IsHubtelShutdownGraceMs,
  assertStoreOption,
  checkOptions,
  hubtelOptionsRecipe,
  refuseRemovedOptions,
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
import { resolveUssd, type ResolvedUssdOptions } from './service-app.ussd.js';
import {
  ServiceAppStatusCheckOptions,
  ServiceAppVerificationOptions,
  ServiceAppUssdOptions,
  ServiceAppCallbackRetryOptions,
  ServiceAppFulfillmentRetryOptions,
  ServiceAppMessagesOptions,
  type ServiceAppRecheckDelayOptions,
  resolveBackInputs,
} from './service-app.option-sections.js';

const D = SERVICE_APP_DEFAULTS;

const ServiceAppAccessOptions = declareAccessOptions(HUBTEL_ENV.serviceAppPathSecret);
const ServiceAppCallbackCredentials = declareCredentials({
  clientId: HUBTEL_ENV.callbackClientId,
  clientSecret: HUBTEL_ENV.callbackClientSecret,
});

/** The options only forRoot sets: a named account shares the default account's. */
export class ServiceAppModuleWideOptions {
  /** Callback retries until a 2xx or `deadlineMs`, then a dead letter. Default 2 s to 5 min, for 1 h. */
  @HubtelOption({ nested: () => ServiceAppCallbackRetryOptions, account: 'defaultOnly', default: {} })
  callbackRetry?: ServiceAppCallbackRetryOptions;

  /** Attempts of your @OnFulfillment handler before `failed` is reported. Default 5, 1 s to 60 s apart. */
  @HubtelOption({ nested: () => ServiceAppFulfillmentRetryOptions, account: 'defaultOnly', default: {} })
  fulfillmentRetry?: ServiceAppFulfillmentRetryOptions;

  /** The instance's status checks a minute, shared with CheckoutModule (the smaller wins). Default 600. */
  @HubtelOption({ nested: () => HubtelStatusCheckBudgetOptionsDto, account: 'defaultOnly', default: {} })
  statusCheckBudget?: HubtelStatusCheckBudgetOptions;

  /** Most sessions waiting for a first answer, per instance; then the oldest gives way. Default 50,000. */
  @HubtelOption({ int: [1, 10_000_000], account: 'defaultOnly', default: D.maxPendingSessions })
  maxPendingSessions?: number;

  /** A HubtelStore or its token. Default: the app's `HUBTEL_STORE`, else a MemoryStore (lost on restart). */
  @HubtelOption({ account: 'defaultOnly' })
  store?: HubtelStoreOption;

  /** Flows written with ServiceFlowBuilder (`@ServiceFlow()` providers are found on their own). */
  @HubtelOption({ account: 'defaultOnly', defaultFrom: () => [] })
  flows?: ServiceFlowDefinition[];

  /** On shutdown, how long running handlers and callbacks may take (new requests get 503). Default 5 s. */
  @IsHubtelShutdownGraceMs()
  @HubtelOption({ account: 'defaultOnly' })
  shutdownGraceMs?: number;

  /** Accounts known only at run time: requests on `/api/service-flow/<name>` for them ask `resolve(name)`. */
  @HubtelOption({ account: 'defaultOnly' })
  accounts?: HubtelAccountResolver<ServiceAppAccountOverrides>;
}

/**
 * Options of `ServiceAppModule.forRoot` / `forRootAsync` and of a named account (see
 * ServiceAppAccountOverrides). The options removed in 0.2.0 are refused, naming what replaced them.
 */
export class ServiceAppModuleOptions extends ServiceAppModuleWideOptions {
  /**
   * The status check that verifies fulfillment requests (without it they are trusted: protect the
   * endpoint with `access`). A named account gives its own when the default account has one.
   */
  @HubtelOption({ nested: () => ServiceAppStatusCheckOptions, account: 'ownIfDefault', envWhole: true })
  statusCheck?: ServiceAppStatusCheckOptions;

  @HubtelOption({ nested: () => ServiceAppVerificationOptions, account: 'merged', default: {} })
  verification?: ServiceAppVerificationOptions;

  /** The platform's fulfillment callback receiver. Default `https://gs-callback.hubtel.com:9055`. */
  @HubtelOption({ url: true, env: HUBTEL_ENV.callbackUrl, default: D.callbackUrl })
  callbackUrl?: string;

  /** The callback's Basic-auth pair, if you have one; a named account's own when the default has one. */
  @HubtelOption({ nested: () => ServiceAppCallbackCredentials, account: 'ownIfDefault' })
  callbackCredentials?: HubtelCredentials;

  /** Time-out of one callback POST, ms. Default 15000. */
  @HubtelOption({ int: [1, 600_000], default: D.callbackTimeoutMs })
  callbackTimeoutMs?: number;

  /** An idle session is forgotten after this long (renewed by every answer). Default 10 min. */
  @HubtelOption({ int: 1, default: D.sessionTtlMs })
  sessionTtlMs?: number;

  /** A started session with no answer yet is forgotten after this long. Default 2 min, ≤ `sessionTtlMs`. */
  @HubtelOption({
    int: 1,
    atMost: 'sessionTtlMs',
    defaultFrom: (options) => Math.min(D.sessionStartTtlMs, options.sessionTtlMs as number),
  })
  sessionStartTtlMs?: number;

  /** How long a cart waits for its fulfillment request. Default 24 h. */
  @HubtelOption({ int: 1, default: D.cartTtlMs })
  cartTtlMs?: number;

  /** Longest a step may take before "please try again" is answered. Default 4000 ms (USSD allows 5 s). */
  @HubtelOption({ int: [1, 60_000], default: D.stepBudgetMs })
  stepBudgetMs?: number;

  /** Entries that return to the previous prompt. Default `'0'`; `false` turns "back" off. */
  @HubtelOption({ default: D.backInput })
  backInput?: string | readonly string[] | false;

  /** Refuse fulfillment requests with no AddToCart answered here. Default true (off: `access` only). */
  @HubtelOption({ bool: true, default: D.requireCart })
  requireCart?: boolean;

  /** Path secret and IP allow-list of both endpoints; a named account's path secret is its own. */
  @HubtelOption({ account: 'merged', section: () => ServiceAppAccessOptions, default: {} })
  access?: InboundAccessOptions;

  /** Texts the module answers by itself (expired session, busy, errors, re-ask explanations). */
  @HubtelOption({ account: 'merged', default: {} })
  messages?: Partial<ServiceAppMessages>;

  /** Country code for national numbers typed in `phone` fields (`024…`). Default '233'. */
  @HubtelCountryCodeOption()
  defaultCountryCode?: string;

  /** The USSD channel: screen size, pages of long menus, operators. */
  @HubtelOption({ nested: () => ServiceAppUssdOptions, account: 'merged', default: {} })
  ussd?: ServiceAppUssdOptions;
}

/**
 * What a named account sets: `statusCheck` and `callbackCredentials` its own (required when the
 * default has them), and `access.pathSecret`; the rest it leaves out is the default account's.
 */
export type ServiceAppAccountOverrides = Omit<ServiceAppModuleOptions, keyof ServiceAppModuleWideOptions>;

type Resolved<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };

/** The options with no default: absent stays absent. */
type Undefaulted = 'statusCheck' | 'callbackCredentials' | 'store' | 'shutdownGraceMs' | 'accounts';
type Defaulted = Resolved<Omit<ServiceAppModuleOptions, Undefaulted>> &
  Pick<ServiceAppModuleOptions, Undefaulted>;

/** Options after validation, every default filled in, in the shapes the module consumes. */
export type ResolvedServiceAppOptions = Omit<Defaulted, 'backInput' | keyof ServiceAppComputedOptions> &
  ServiceAppComputedOptions;

/** What `resolve` computes rather than passes on as checked. */
interface ServiceAppComputedOptions {
  callbackRetry: Resolved<ServiceAppCallbackRetryOptions>;
  fulfillmentRetry: Resolved<ServiceAppFulfillmentRetryOptions>;
  backInputs: string[];
  statusCheck?: Resolved<Omit<ServiceAppStatusCheckOptions, 'clientId' | 'clientSecret'>> & {
    credentials: HubtelCredentials;
  };
  verification: Resolved<Omit<ServiceAppVerificationOptions, 'recheckDelay'>> & {
    recheckDelay: Resolved<ServiceAppRecheckDelayOptions>;
  };
  messages: ServiceAppMessages;
  ussd: ResolvedUssdOptions;
  accounts?: ResolvedAccountResolver<ServiceAppAccountOverrides>;
}

/** Default options and named accounts read from the environment. */
export interface ServiceAppEnvAccounts extends HubtelEnvAccounts<
  ServiceAppModuleOptions,
  ServiceAppAccountOverrides
> {}

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
    refuseRemovedOptions(raw, P);
    // Checked apart: unknown fields are refused here only (the options carry flows, store, access...).
    const messages: ServiceAppMessages = {
      ...SERVICE_APP_DEFAULT_MESSAGES,
      ...(checkOptions(ServiceAppMessagesOptions, options.messages, `${P}.messages`, {
        forbidUnknown: true,
      }) as Partial<ServiceAppMessages>),
    };
    const { clientId, clientSecret, ...check } = options.statusCheck ?? ({} as ServiceAppStatusCheckOptions);
    const statusCheck = options.statusCheck && { credentials: { clientId, clientSecret }, ...check };
    if (!Array.isArray(options.flows))
      throw new HubtelConfigError(`${P}.flows`, 'must be an array of flows built with ServiceFlowBuilder');
    if (options.verification.enabled && !statusCheck)
      throw new HubtelConfigError(
        `${P}.verification.enabled`,
        `needs ${P}.statusCheck (the payment is confirmed with it)`,
      );
    const backInputs = resolveBackInputs(options.backInput, P);
    return {
      backInputs,
      statusCheck,
      store: assertStoreOption(options.store, `${P}.store`),
      messages,
      ussd: resolveUssd(options.ussd as Required<ServiceAppUssdOptions>, backInputs, messages, P),
    };
  },
});

/** Options from the environment (see docs/service-app.md), `overrides` winning; a bad value fails here. */
export const serviceAppOptionsFromEnv = SERVICE_APP_OPTIONS_RECIPE.optionsFromEnv;

/**
 * The default account and those named in HUBTEL_ACCOUNTS (docs/accounts.md); a named account's
 * status check is whole (its own three variables) when the default has one or it sets any.
 */
export const serviceAppAccountsFromEnv = SERVICE_APP_OPTIONS_RECIPE.accountsFromEnv;
