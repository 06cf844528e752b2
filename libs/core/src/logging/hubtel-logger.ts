import { Logger, type LogLevel, type LoggerService } from '@nestjs/common';
import { isLogLevelEnabled } from './log-level.js';
import { sanitizeLogLine, sanitizeStack } from './log-sanitize.js';
import { redact } from './redact.js';

/** Nest's own test for "this string parameter is a stack trace" (ConsoleLogger). */
const STACK = /^(.)+\n\s+at .+:\d+:\d+/;

/** Makes a log parameter safe: strings one line (an extra stack trace keeps its lines), objects redacted. */
export function sanitizeLogParam(
  value: unknown,
  line: (text: string) => string = sanitizeLogLine,
  isExtra = false,
): unknown {
  if (typeof value === 'string') return isExtra && STACK.test(value) ? sanitizeStack(value) : line(value);
  if (value !== null && typeof value === 'object' && !(value instanceof Error)) return redact(value);
  return value;
}

/**
 * Nest's Logger with every message and extra made safe (escaped, masked, capped) on the whole line,
 * so no log line can forget a request's value; a disabled level costs nothing.
 */
export class HubtelLogger extends Logger {
  /** @param line how a string is made safe (for tests) */
  constructor(
    context: string,
    private readonly line: (text: string) => string = sanitizeLogLine,
  ) {
    super(context);
  }

  /** Whether a line of `level` would be written. */
  isLevelEnabled(level: LogLevel): boolean {
    return isLogLevelEnabled(level, this);
  }

  override log(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('log')) super.log(this.safe(message), ...this.safeAll(rest));
  }

  override warn(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('warn')) super.warn(this.safe(message), ...this.safeAll(rest));
  }

  override error(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('error')) super.error(this.safe(message), ...this.safeAll(rest));
  }

  override debug(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('debug')) super.debug(this.safe(message), ...this.safeAll(rest));
  }

  override verbose(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('verbose')) super.verbose(this.safe(message), ...this.safeAll(rest));
  }

  override fatal(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('fatal')) super.fatal(this.safe(message), ...this.safeAll(rest));
  }

  private safe(value: unknown): unknown {
    return sanitizeLogParam(value, this.line);
  }

  private safeAll(values: unknown[]): unknown[] {
    return values.length === 0 ? values : values.map((value) => sanitizeLogParam(value, this.line, true));
  }
}

type SimpleLogger = Pick<LoggerService, 'log' | 'warn' | 'error'> & Partial<LoggerService>;

/** Wraps a logger handed to the suite directly so every line reaching it is made safe as HubtelLogger's. */
export function sanitizingLogger<T extends SimpleLogger>(target: T): T {
  const wrap =
    (method: (message: unknown, ...rest: unknown[]) => unknown) =>
    (message: unknown, ...rest: unknown[]) =>
      method.call(
        target,
        sanitizeLogParam(message),
        ...rest.map((value) => sanitizeLogParam(value, sanitizeLogLine, true)),
      );
  const wrapped: Record<string, unknown> = Object.create(target) as Record<string, unknown>;
  for (const level of ['log', 'warn', 'error', 'debug', 'verbose', 'fatal'] as const) {
    const method = target[level] as ((message: unknown, ...rest: unknown[]) => unknown) | undefined;
    if (typeof method === 'function') wrapped[level] = wrap(method);
  }
  return wrapped as T;
}
