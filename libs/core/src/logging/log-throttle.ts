import type { LoggerService } from '@nestjs/common';

/** One log line per distinct error per interval (a failing Redis once filled 100 MB of logs in 70 s). */
export class ErrorLogThrottle {
  private readonly last = new Map<string, { at: number; held: number }>();

  constructor(
    private readonly logger: Pick<LoggerService, 'error'>,
    private readonly intervalMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Logs `message` unless the same one was logged within the interval; true when logged. */
  error(message: string): boolean {
    const at = this.now();
    const seen = this.last.get(message);
    if (seen && at - seen.at < this.intervalMs) {
      seen.held += 1;
      return false;
    }
    const held = seen?.held ?? 0;
    this.last.set(message, { at, held: 0 });
    // Bounded: distinct messages are few (a handful of Redis errors), but never let them grow.
    if (this.last.size > 100) this.last.delete(this.last.keys().next().value!);
    const seconds = Math.round(this.intervalMs / 1000);
    this.logger.error(held > 0 ? `${message} (and ${held} more like it in the last ${seconds} s)` : message);
    return true;
  }
}
