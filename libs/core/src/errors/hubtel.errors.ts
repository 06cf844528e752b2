/** Every error the suite throws is a HubtelError with a stable `code`; messages never carry credentials. */
export type HubtelErrorCode =
  | 'HUBTEL_CONFIG_INVALID'
  | 'HUBTEL_VALIDATION_FAILED'
  | 'HUBTEL_API_ERROR'
  | 'HUBTEL_AUTHENTICATION_FAILED'
  | 'HUBTEL_INSUFFICIENT_CREDIT'
  | 'HUBTEL_IP_NOT_ALLOWED'
  | 'HUBTEL_RATE_LIMITED'
  | 'HUBTEL_NETWORK_ERROR'
  | 'HUBTEL_TIMEOUT'
  | 'HUBTEL_UNKNOWN_OUTCOME'
  | 'HUBTEL_STORE_CONFLICT'
  | 'HUBTEL_STORE_UNAVAILABLE'
  | 'HUBTEL_NOT_FOUND'
  | 'HUBTEL_UNKNOWN_ACCOUNT'
  | 'HUBTEL_ACCOUNT_LOOKUPS_LIMITED'
  /** A record of one account reached through another (a session or order on the wrong account's path). */
  | 'HUBTEL_WRONG_ACCOUNT'
  /** A bulk operation stopped before the end of its input (see the error's partial result). */
  | 'HUBTEL_SEND_ABORTED'
  | 'HUBTEL_SHUTTING_DOWN'
  | 'HUBTEL_STATUS_CHECK_BUDGET'
  | 'HUBTEL_REDIS_UNUSABLE';

export interface HubtelErrorDetails {
  /** HTTP status of the platform's answer, when there was one. */
  httpStatus?: number;
  /** The platform's own outcome code (`responseCode`, `ResponseCode`, SMS sub-code), when given. */
  responseCode?: string;
  /** The platform's response body (parsed JSON, or text truncated to 2 KB). */
  body?: unknown;
  /** How many HTTP attempts were made before giving up (outbound calls). */
  attempts?: number;
  /** How long the platform asked us to wait (`Retry-After`), in ms, when it said. */
  retryAfterMs?: number;
  cause?: unknown;
}

export class HubtelError extends Error {
  readonly code: HubtelErrorCode;
  readonly httpStatus?: number;
  readonly responseCode?: string;
  readonly body?: unknown;
  readonly attempts?: number;
  readonly retryAfterMs?: number;

  constructor(code: HubtelErrorCode, message: string, details: HubtelErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.httpStatus = details.httpStatus;
    this.responseCode = details.responseCode;
    this.body = details.body;
    if (details.attempts !== undefined) this.attempts = details.attempts;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }

  toJSON(): Record<string, unknown> {
    const { name, code, message, httpStatus, responseCode } = this;
    return { name, code, message, httpStatus, responseCode };
  }
}

/** Module options are missing or invalid. Thrown at bootstrap, naming the option. */
export class HubtelConfigError extends HubtelError {
  constructor(
    readonly option: string,
    /** What is wrong with it (the message without its `Invalid nestjs-hubtel option "…"` opening). */
    readonly problem: string,
    code: HubtelErrorCode = 'HUBTEL_CONFIG_INVALID',
  ) {
    super(code, `Invalid nestjs-hubtel option "${option}": ${problem}`);
  }
}

/** Why a Redis connection was refused at startup (HubtelRedisConfigError). */
export type HubtelRedisUnusableReason =
  /** A single-node client (a `url`) on a node of a Redis Cluster: most keys would answer MOVED. */
  | 'CLUSTER_NODE_WITHOUT_CLUSTER_CLIENT'
  /** BullMQ on a cluster with a prefix that has no `{hash tag}`: every queue script is CROSSSLOT. */
  | 'PREFIX_WITHOUT_HASH_TAG'
  /** The store's keyPrefix has a `{hash tag}` on a cluster: every key on one node. */
  | 'PREFIX_WITH_HASH_TAG'
  /** A client object that could only be used by copying it (which loses its address or settings). */
  | 'CLIENT_UNUSABLE';

/** A Redis connection the suite cannot use as given: thrown at startup, never a fallback. */
export class HubtelRedisConfigError extends HubtelConfigError {
  constructor(
    option: string,
    readonly reason: HubtelRedisUnusableReason,
    problem: string,
  ) {
    super(option, problem, 'HUBTEL_REDIS_UNUSABLE');
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), option: this.option, reason: this.reason };
  }
}

export interface ValidationIssue {
  /** Dotted path of the offending field (`recipients[3]`, `Data.Amount`). */
  field: string;
  message: string;
  /** The rejected value, when it is safe to echo (never a credential). */
  value?: unknown;
}

/** Input given to a public method (or received on an endpoint) is invalid. Nothing was sent. */
export class HubtelValidationError extends HubtelError {
  readonly issues: ValidationIssue[];
  constructor(message: string, issues: ValidationIssue[] = []) {
    super('HUBTEL_VALIDATION_FAILED', message);
    this.issues = issues;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), issues: this.issues };
  }
}

/** The platform answered with an error (HTTP 4xx/5xx or a non-success outcome code). */
export class HubtelApiError extends HubtelError {
  constructor(message: string, details: HubtelErrorDetails = {}, code: HubtelErrorCode = 'HUBTEL_API_ERROR') {
    super(code, message, details);
  }
}

/** The error classes below: one `code` each, made with `(message, details)`. */
function errorOf(code: HubtelErrorCode) {
  return class extends HubtelError {
    constructor(message: string, details: HubtelErrorDetails = {}) {
      super(code, message, details);
    }
  };
}

function apiErrorOf(code: HubtelErrorCode) {
  return class extends HubtelApiError {
    constructor(message: string, details: HubtelErrorDetails = {}) {
      super(message, details, code);
    }
  };
}

/** 401 (or the platform's equivalent codes): wrong API credentials for this API. */
export class HubtelAuthenticationError extends apiErrorOf('HUBTEL_AUTHENTICATION_FAILED') {}

/** 402: the account has no credit left. */
export class HubtelInsufficientCreditError extends apiErrorOf('HUBTEL_INSUFFICIENT_CREDIT') {}

/** 403 answered as an HTML page: the caller's IP address is not on the platform's allow-list. */
export class HubtelIpNotAllowedError extends apiErrorOf('HUBTEL_IP_NOT_ALLOWED') {}

/** 429 after the retry budget was spent. */
export class HubtelRateLimitedError extends apiErrorOf('HUBTEL_RATE_LIMITED') {}

/** The instance's budget of status checks is spent: not sent; `retryAfterMs` says when to try again. */
export class HubtelStatusCheckBudgetError extends errorOf('HUBTEL_STATUS_CHECK_BUDGET') {}

/** The connection failed before the request was sent; the platform did not see it. */
export class HubtelNetworkError extends errorOf('HUBTEL_NETWORK_ERROR') {}

/** An idempotent request timed out on every attempt. */
export class HubtelTimeoutError extends errorOf('HUBTEL_TIMEOUT') {}

/** A send or payment may have reached the platform, no answer came: NOT retried, check its status. */
export class HubtelUnknownOutcomeError extends errorOf('HUBTEL_UNKNOWN_OUTCOME') {}

/** The store failed or timed out (a write may have applied); inbound endpoints answer 503. */
export class HubtelStoreUnavailableError extends errorOf('HUBTEL_STORE_UNAVAILABLE') {}
