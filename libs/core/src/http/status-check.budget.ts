// The instance's budget of status checks a minute, shared by every module. The platform rate-limits
// the check per merchant: without it, forged callbacks could spend that limit and genuine payments
// would wait. A refused check is never sent; its caller defers or retries it.
import { Module, type LoggerService } from '@nestjs/common';
import { HubtelStatusCheckBudgetError } from '../errors/hubtel.errors.js';
import { HUBTEL_DEFAULT_STATUS_CHECKS_PER_MINUTE, HUBTEL_STATUS_CHECK_BUDGET } from '../hubtel.constants.js';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';

const MINUTE_MS = 60_000;

/** At most `perMinute` checks in any sliding minute: a ring of the last checks' times (O(1), no timer). */
export class StatusCheckBudget {
  private readonly logger: LoggerService;
  private configured: number | undefined;
  private times: number[] = [];
  private next = 0;
  private lastRefusalAt = -Infinity;

  constructor(
    private readonly hooks: { telemetry?: HubtelTelemetry; logger?: LoggerService; now?: () => number } = {},
  ) {
    this.logger = hooks.logger ?? new HubtelLogger('HubtelStatusCheck');
  }

  /** Checks allowed in any minute: the smallest any module configured, else the default. */
  get perMinute(): number {
    return this.configured ?? HUBTEL_DEFAULT_STATUS_CHECKS_PER_MINUTE;
  }

  /** A module's `statusCheckBudget.perMinute`: the smaller wins (the platform's limit is per merchant). */
  configure(perMinute: number | undefined): void {
    if (perMinute === undefined) return;
    const smaller = this.configured === undefined ? perMinute : Math.min(this.configured, perMinute);
    if (smaller === this.configured) return;
    this.configured = smaller;
    this.times = [];
    this.next = 0;
  }

  /** Takes one check, or throws HubtelStatusCheckBudgetError: the check must not be sent. */
  take(operation: string): void {
    const now = (this.hooks.now ?? Date.now)();
    const limit = this.perMinute;
    if (this.times.length < limit) {
      this.times.push(now);
      return;
    }
    const oldest = this.times[this.next]!;
    if (now - oldest >= MINUTE_MS) {
      this.times[this.next] = now;
      this.next = (this.next + 1) % limit;
      return;
    }
    const retryAfterMs = oldest + MINUTE_MS - now;
    this.hooks.telemetry?.record({ kind: 'status-check-budget', operation });
    // One line per episode (not one per refused check: a flood must not flood the logs too).
    if (now - this.lastRefusalAt >= MINUTE_MS)
      this.logger.warn(
        `Status-check budget reached: ${limit} transaction status checks in the last minute on this instance; ` +
          `further checks wait (${operation} refused, next allowed in ${Math.ceil(retryAfterMs / 1000)} s). ` +
          'Raise statusCheckBudget.perMinute if this is genuine load; otherwise someone may be sending forged callbacks.',
      );
    this.lastRefusalAt = now;
    throw new HubtelStatusCheckBudgetError(
      `${operation}: the instance's budget of ${limit} status checks a minute is spent; not sent`,
      { retryAfterMs },
    );
  }
}

/** A static module, so one StatusCheckBudget per application, shared by its modules (not across apps). */
@Module({
  providers: [
    {
      provide: HUBTEL_STATUS_CHECK_BUDGET,
      useFactory: (telemetry?: HubtelTelemetry) => new StatusCheckBudget({ telemetry }),
      inject: [{ token: HUBTEL_TELEMETRY, optional: true }],
    },
  ],
  exports: [HUBTEL_STATUS_CHECK_BUDGET],
})
export class StatusCheckBudgetModule {}
