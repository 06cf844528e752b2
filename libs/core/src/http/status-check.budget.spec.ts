import type { LoggerService } from '@nestjs/common';
import { HubtelStatusCheckBudgetError } from '../errors/hubtel.errors.js';
import { HUBTEL_DEFAULT_STATUS_CHECKS_PER_MINUTE } from '../hubtel.constants.js';
import type { HubtelSignal, HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import { StatusCheckBudget } from './status-check.budget.js';

const MINUTE_MS = 60_000;

class CaptureLogger implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

/** A budget on a clock the test moves, with its warnings and telemetry signals kept. */
function budget(perMinute?: number) {
  const clock = { now: 1_000_000 };
  const logger = new CaptureLogger();
  const signals: HubtelSignal[] = [];
  const telemetry: HubtelTelemetry = { record: (signal) => signals.push(signal) };
  const subject = new StatusCheckBudget({ logger, telemetry, now: () => clock.now });
  subject.configure(perMinute);
  return { subject, clock, logger, signals };
}

/** The error take() threw, or undefined when the check was allowed. */
function refusal(
  subject: StatusCheckBudget,
  operation = 'test.check',
): HubtelStatusCheckBudgetError | undefined {
  try {
    subject.take(operation);
    return undefined;
  } catch (error) {
    if (error instanceof HubtelStatusCheckBudgetError) return error;
    throw error;
  }
}

describe('StatusCheckBudget', () => {
  it('allows perMinute checks in any sliding minute, and says when the next one is allowed', () => {
    const { subject, clock } = budget(3);
    for (const at of [0, 10_000, 20_000]) {
      clock.now = 1_000_000 + at;
      expect(refusal(subject)).toBeUndefined();
    }
    // A minute after the first check, less a millisecond: the fourth is refused, not sent.
    clock.now = 1_000_000 + MINUTE_MS - 1;
    const refused = refusal(subject)!;
    expect(refused).toBeInstanceOf(HubtelStatusCheckBudgetError);
    expect(refused.code).toBe('HUBTEL_STATUS_CHECK_BUDGET');
    expect(refused.retryAfterMs).toBe(1);
    expect(refused.message).toContain('budget of 3 status checks a minute is spent');

    // The first check is a minute old: its slot is free, and only its slot.
    clock.now = 1_000_000 + MINUTE_MS;
    expect(refusal(subject)).toBeUndefined();
    expect(refusal(subject)?.retryAfterMs).toBe(10_000);
    clock.now = 1_000_000 + 10_000 + MINUTE_MS;
    expect(refusal(subject)).toBeUndefined();
    clock.now = 1_000_000 + 20_000 + MINUTE_MS;
    expect(refusal(subject)).toBeUndefined();
    expect(refusal(subject)?.retryAfterMs).toBe(MINUTE_MS - 20_000);
  });

  it(`allows ${HUBTEL_DEFAULT_STATUS_CHECKS_PER_MINUTE} a minute unless configured`, () => {
    const { subject } = budget();
    expect(subject.perMinute).toBe(HUBTEL_DEFAULT_STATUS_CHECKS_PER_MINUTE);
    for (let i = 0; i < HUBTEL_DEFAULT_STATUS_CHECKS_PER_MINUTE; i++) subject.take('test.check');
    expect(refusal(subject)).toBeInstanceOf(HubtelStatusCheckBudgetError);
  });

  it('writes one warning per episode of refusals, not one per refused check', () => {
    const { subject, clock, logger } = budget(1);
    subject.take('test.first');
    // A check every 10 s for two minutes: one a minute gets through, the rest are refused, and
    // all of it is one episode however long it lasts.
    let refused = 0;
    for (let at = 1_000; at < 2 * MINUTE_MS; at += 10_000) {
      clock.now = 1_000_000 + at;
      if (refusal(subject, 'checkout.getStatus')) refused++;
    }
    expect(refused).toBe(11);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toContain(
      'Status-check budget reached: 1 transaction status checks in the last minute',
    );
    expect(logger.warnings[0]).toContain('checkout.getStatus refused');
    expect(logger.warnings[0]).toContain('statusCheckBudget.perMinute');

    // A minute without refusals ends the episode: the next refusal warns again.
    clock.now += MINUTE_MS;
    subject.take('test.again');
    expect(refusal(subject)).toBeInstanceOf(HubtelStatusCheckBudgetError);
    expect(logger.warnings).toHaveLength(2);
  });

  it('keeps the smaller perMinute when modules configure it differently, and ignores undefined', () => {
    const { subject } = budget();
    subject.configure(50);
    expect(subject.perMinute).toBe(50);
    // Checkout says 50, the service app 200: the instance's limit stays 50 (the platform's is per merchant).
    subject.configure(200);
    expect(subject.perMinute).toBe(50);
    subject.configure(undefined);
    expect(subject.perMinute).toBe(50);
    subject.configure(2);
    expect(subject.perMinute).toBe(2);
    subject.take('test.check');
    subject.take('test.check');
    expect(refusal(subject)).toBeInstanceOf(HubtelStatusCheckBudgetError);
  });

  it('counts every refused check in telemetry (the metric), and nothing for allowed ones', () => {
    const { subject, signals } = budget(2);
    subject.take('checkout.confirm');
    subject.take('checkout.confirm');
    expect(signals).toEqual([]);
    expect(refusal(subject, 'checkout.getStatus')).toBeDefined();
    expect(refusal(subject, 'serviceApp.paymentStatus')).toBeDefined();
    expect(refusal(subject, 'serviceApp.paymentStatus')).toBeDefined();
    expect(signals).toEqual([
      { kind: 'status-check-budget', operation: 'checkout.getStatus' },
      { kind: 'status-check-budget', operation: 'serviceApp.paymentStatus' },
      { kind: 'status-check-budget', operation: 'serviceApp.paymentStatus' },
    ]);
  });
});
