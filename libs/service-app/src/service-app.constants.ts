import { HUBTEL_DEFAULT_ACCOUNT } from 'nestjs-hubtel';
import { DEFAULT_USSD_SCREEN, HUBTEL_DEFAULT_BASE_URLS } from '#internal';

/** Injection tokens: resolved options, store, pipeline, access policy, transport, accounts. */
export const SERVICE_APP_OPTIONS = Symbol('HUBTEL_SERVICE_APP_OPTIONS');
export const SERVICE_APP_STORE = Symbol('HUBTEL_SERVICE_APP_STORE');
export const SERVICE_APP_PIPELINE = Symbol('HUBTEL_SERVICE_APP_PIPELINE');
export const SERVICE_APP_ACCESS_POLICY = Symbol('HUBTEL_SERVICE_APP_ACCESS_POLICY');
export const SERVICE_APP_TRANSPORT = Symbol('HUBTEL_SERVICE_APP_TRANSPORT');
export const SERVICE_APP_ACCOUNTS = Symbol('HUBTEL_SERVICE_APP_ACCOUNTS');

/** What `@InjectFulfillment(name)` injects: the FulfillmentAccount of a registered account. */
export function getFulfillmentAccountToken(name: string): string {
  return `HUBTEL_SERVICE_APP_FULFILLMENT:${name}`;
}

export const SERVICE_FLOW_METADATA = 'hubtel:service-app:flow';
export const FLOW_STEPS_METADATA = 'hubtel:service-app:flow-steps';

/** Job types of the module's pipeline (also `DeadLetterEvent.type`). */
export const SERVICE_APP_JOBS = Object.freeze({
  /** Keyed by OrderId: the handlers, the payment's status check before them, the callback. */
  fulfillment: 'fulfillment',
  payment: 'payment',
  callback: 'callback',
} as const);

/** Store key prefixes (the store may be shared with other modules). */
export const SERVICE_APP_KEYS = Object.freeze({
  session: 'hubtel:service-app:session:',
  cart: 'hubtel:service-app:cart:',
  /** The one delivery of a session (fulfillment.delivery.ts). */
  delivery: 'hubtel:service-app:delivery:',
  /** A resumable flow's unfinished session, one key per ServiceCode and Mobile. */
  resume: 'hubtel:service-app:resume:',
});

export function cartKey(sessionId: string): string {
  return `${SERVICE_APP_KEYS.cart}${sessionId}`;
}

/** The account of a stored session, cart or order: absent means the default account. */
export function accountOf(stored: { account?: string | undefined }): string {
  return stored.account ?? HUBTEL_DEFAULT_ACCOUNT;
}

/** The USSD screen (core's) and its menu navigation (`ussd` option). */
export const SERVICE_APP_USSD_DEFAULTS = Object.freeze({
  ...DEFAULT_USSD_SCREEN,
  /** Replace characters outside GSM-7 (é stays, ’ → ', ñ stays, ŋ → ?) to keep the 182 screen. */
  transliterate: false,
  /** The platform SDK's keys and labels of a long menu's pages. */
  moreKey: '9',
  moreLabel: 'More',
  backKey: '8',
  backLabel: 'Back',
});

/** The contract's paths: `POST {service_app_url}/api/service-flow`, `/api/fulfillment`. */
export const SERVICE_APP_ROUTES = Object.freeze({
  prefix: 'api',
  serviceFlow: 'service-flow',
  fulfillment: 'fulfillment',
});

export const SERVICE_APP_DEFAULTS = Object.freeze({
  /** The platform's fulfillment callback receiver (platform facts: port 9055, not 443). */
  callbackUrl: HUBTEL_DEFAULT_BASE_URLS.fulfillment,
  callbackTimeoutMs: 15_000,
  /** An idle session is forgotten after this long (sliding: every answer renews it). */
  sessionTtlMs: 10 * 60_000,
  /** A session with no answer yet is forgotten sooner: abandoned (or forged) starts cost little. */
  sessionStartTtlMs: 2 * 60_000,
  /** Most sessions awaiting their first answer at once, per instance (~600 B each). */
  maxPendingSessions: 50_000,
  /**
   * A payment not recorded yet is re-checked for 10 min with growing gaps, at most `checks` status
   * checks in all (a forged request costs no more); 60 s caps the backoff of other failures.
   */
  verification: Object.freeze({
    recheckForMs: 10 * 60_000,
    baseDelayMs: 2_000,
    maxDelayMs: 60_000,
    checks: 6,
    /** Runs of the payment job that fail on something else than the status check (the store). */
    attempts: 3,
    /** A refused order's record: long enough to answer its re-sends `duplicate`, not for days. */
    refusedTtlMs: 6 * 3600_000,
  }),
  /** A cart waits this long for its fulfillment request (payment can take a while). */
  cartTtlMs: 24 * 3600_000,
  /** USSD allows 5 s per answer (platform facts); answer "try again" before the platform times out. */
  stepBudgetMs: 4_000,
  /** A step still waiting on a slow store this long after the budget is answered `messages.outage`. */
  storeGraceMs: 250,
  backInput: '0',
  requireCart: true,
  /** Handler attempts (first included) before the order is reported `failed`. */
  fulfillmentRetry: Object.freeze({ maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 60_000 }),
  /** Callback retries: until accepted or the deadline (platform facts: within one hour). */
  callbackRetry: Object.freeze({ baseDelayMs: 2_000, maxDelayMs: 5 * 60_000, deadlineMs: 3600_000 }),
  /** Most `goTo` hops within one answer (a loop in a flow is a bug: stop it). */
  maxRedirects: 16,
});

/** Texts the module answers with on its own. Override any of them with the `messages` option. */
export const SERVICE_APP_DEFAULT_MESSAGES = Object.freeze({
  /** A `Response` arrived for a session this app does not know (expired, or never started). */
  sessionExpired: 'Your session has expired. Please dial again to start over.',
  busy: 'Sorry, this is taking longer than expected. Please try again.',
  error: 'Sorry, something went wrong. Please try again later.',
  unavailable: 'Sorry, this service is not available.',
  /** The store (Redis) is unreachable or too slow: the session ends, the user may dial again. */
  outage: 'Sorry, this service is unavailable right now. Please try again in a few minutes.',
  released: '',
  resume: 'Do you want to continue from your previous session?',
  resumeYes: 'Yes, continue',
  resumeNo: 'No, start again',
  timedOut: '',
  queryUnavailable: 'Sorry, this service cannot answer queries.',
  /** Answer to a request `Type` this module does not know (a polite end, never an HTTP error). */
  unsupported: 'Sorry, this request is not supported. Please dial again.',
  /** Re-ask explanations, per check. */
  required: 'Please enter a value.',
  phone: 'Please enter a valid phone number.',
  number: 'Please enter a whole number.',
  decimal: 'Please enter a number, e.g. 10.50.',
  email: 'Please enter a valid e-mail address.',
  select: 'Please choose one of the options.',
  tooShort: 'Please enter at least {min} characters.',
  tooLong: 'Please enter at most {max} characters.',
  tooSmall: 'Please enter {min} or more.',
  tooLarge: 'Please enter {max} or less.',
  pattern: 'That is not a valid entry.',
});

export type ServiceAppMessages = { -readonly [K in keyof typeof SERVICE_APP_DEFAULT_MESSAGES]: string };

/** The prefix of the module's option names in errors (a named account's: `serviceApp[north]`). */
export const SERVICE_APP_SCOPE = 'serviceApp';
