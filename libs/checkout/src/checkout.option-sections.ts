import {
  DEFAULT_JOB_RETRY,
  HUBTEL_DEFAULT_BASE_URLS,
  HUBTEL_ENV,
  HubtelOption,
  HubtelShutdownOptionsDto,
  declareBackoff,
} from '#internal';
import { CHECKOUT_DEFAULTS } from './checkout.constants.js';

const MAX_DELAY_MS = 30 * 24 * 3600_000;
/** The defaults that need the status check, on when the account has a POS Sales ID. */
const WITH_POS_SALES_ID = (_section: unknown, root: Record<string, unknown>) => root.posSalesId !== undefined;

/** How paid amounts are compared with the amount invoiced. */
export class CheckoutAmountToleranceOptions {
  /** Largest difference accepted, in currency units (e.g. 0.5 for fees up to GH₵ 0.50). Default 0. */
  @HubtelOption({ number: 0, default: 0 })
  absolute?: number;

  /** Largest difference accepted, in percent of the invoiced amount (e.g. 2 for 2 %). Default 0. */
  @HubtelOption({ number: [0, 100], default: 0 })
  percent?: number;
}

/** Re-checks of a callback's payment whose status check does not show it yet. */
export class CheckoutRecheckOptions {
  /** Checks after the first one (0: reject at once). Default 3. */
  @HubtelOption({ int: [0, 10], default: CHECKOUT_DEFAULTS.recheckAttempts })
  attempts?: number;

  /** Wait before the first re-check; each next one waits twice as long. Default 2000 ms. */
  @HubtelOption({ int: [0, 60_000], default: CHECKOUT_DEFAULTS.recheckDelayMs })
  delayMs?: number;

  /** Longest wait between two re-checks. Default 10000 ms (or `delayMs` when longer). */
  @HubtelOption({
    int: [0, 60_000],
    atLeast: 'delayMs',
    defaultFrom: (recheck) => Math.max(CHECKOUT_DEFAULTS.recheckMaxDelayMs, recheck.delayMs as number),
  })
  maxDelayMs?: number;

  /**
   * Shortest time between two status checks of one invoice's paid callbacks, however many come
   * (forged copies cost at most one check this often). Default 10000 ms.
   */
  @HubtelOption({ int: [0, 60_000], default: CHECKOUT_DEFAULTS.recheckMinIntervalMs })
  minIntervalMs?: number;
}

/** How a callback is verified; a named account merges it with the default's field by field. */
export class CheckoutVerificationOptions {
  /** Fees: the larger of `absolute` and `percent` is allowed either way (default: equal to the pesewa). */
  @HubtelOption({ nested: () => CheckoutAmountToleranceOptions, account: 'merged', default: {} })
  amountTolerance?: CheckoutAmountToleranceOptions;

  /** Accept any amount above the invoiced one (tips, payer-borne fees). Default false. */
  @HubtelOption({ bool: true, default: false })
  allowOverpayment?: boolean;

  /** Confirm each callback with the status check before it counts. Default: true with `posSalesId`. */
  @HubtelOption({ bool: true, defaultFrom: WITH_POS_SALES_ID })
  confirmWithStatusCheck?: boolean;

  /** Re-checks before a callback the status check does not show yet is rejected (`NOT_CONFIRMED`). */
  @HubtelOption({ nested: () => CheckoutRecheckOptions, account: 'merged', default: {} })
  recheck?: CheckoutRecheckOptions;
}

/** The reconciler's checks of invoices with no final callback. */
export class CheckoutReconciliationOptions {
  /** Check invoices with no final callback through the status check. Default: true with `posSalesId`. */
  @HubtelOption({ bool: true, defaultFrom: WITH_POS_SALES_ID })
  enabled?: boolean;

  /** Age of an invoice before its first check. Default 5 minutes (Hubtel's advice). */
  @HubtelOption({ int: [0, MAX_DELAY_MS], default: CHECKOUT_DEFAULTS.reconcileDelayMs })
  delayMs?: number;

  /** How often the reconciler looks for invoices due, and the first re-check spacing. Default 1 minute. */
  @HubtelOption({ int: [5, MAX_DELAY_MS], default: CHECKOUT_DEFAULTS.reconcileIntervalMs })
  intervalMs?: number;

  /** Re-checks of one invoice back off (doubling) up to this. Default 1 hour (or `intervalMs` if longer). */
  @HubtelOption({
    int: [5, MAX_DELAY_MS],
    atLeast: 'intervalMs',
    defaultFrom: (rec) => Math.max(CHECKOUT_DEFAULTS.reconcileMaxIntervalMs, rec.intervalMs as number),
  })
  maxIntervalMs?: number;

  /** Stop checking (and emit `expired`) this long after creation. Default 24 hours. */
  @HubtelOption({ int: [1, 365 * 24 * 3600_000], default: CHECKOUT_DEFAULTS.reconcileGiveUpAfterMs })
  giveUpAfterMs?: number;

  /** Status checks of one unpaid invoice at most (a flood's cost), the last at `giveUpAfterMs`. Default 8. */
  @HubtelOption({ int: [1, 10_000], default: CHECKOUT_DEFAULTS.reconcileMaxChecks })
  maxChecks?: number;

  /** Status checks at once. Default 4. */
  @HubtelOption({ int: [1, 64], default: CHECKOUT_DEFAULTS.reconcileConcurrency })
  concurrency?: number;
}

/**
 * `handlers.retry`: backoff from `baseDelayMs` (default 500 ms, doubling) to `maxDelayMs` (30 s, or the
 * base when longer); `maxAttempts: Infinity` (with `deadlineMs`) is checked in code.
 */
export class CheckoutHandlerRetryOptions extends declareBackoff(DEFAULT_JOB_RETRY, 0) {
  /** Runs in all, the first included (1 to 1000), or `Infinity` with `deadlineMs`. Default 5. */
  @HubtelOption({ int: [1, 1000], default: DEFAULT_JOB_RETRY.maxAttempts })
  maxAttempts?: number;

  /** Give up once this long has passed since the job was recorded. */
  @HubtelOption({ int: 1 })
  deadlineMs?: number;
}

/** The callback pipeline's handlers: retry, record TTL, `shutdownGraceMs` (docs/operations.md). */
export class CheckoutHandlerOptions extends HubtelShutdownOptionsDto {
  /** Retry of a throwing handler (and a failed confirmation). Default 5 attempts, 500 ms to 30 s apart. */
  @HubtelOption({ nested: () => CheckoutHandlerRetryOptions, default: {} })
  retry?: CheckoutHandlerRetryOptions;

  /** How long a handled callback is remembered for de-duplication. Default 7 days. */
  @HubtelOption({ int: 1 })
  recordTtlMs?: number;
}

/** The base URLs of the checkout and status-check APIs. */
export class CheckoutBaseUrlOptions {
  /** Default `https://payproxyapi.hubtel.com`. */
  @HubtelOption({ url: true, env: HUBTEL_ENV.checkoutUrl, default: HUBTEL_DEFAULT_BASE_URLS.checkout })
  checkout?: string;

  /** Default `https://api-txnstatus.hubtel.com`. */
  @HubtelOption({ url: true, env: HUBTEL_ENV.statusUrl, default: HUBTEL_DEFAULT_BASE_URLS.status })
  status?: string;
}

/** The waits before each re-check: `delayMs`, doubling, at most `maxDelayMs` each. */
export function recheckDelays(recheck: Required<CheckoutRecheckOptions>): number[] {
  return Array.from({ length: recheck.attempts }, (_, index) =>
    Math.min(recheck.maxDelayMs, recheck.delayMs * 2 ** index),
  );
}
