import { Logger, type LogLevel, type LoggerService } from '@nestjs/common';
import { isLogLevelEnabled } from './log-level.js';
import { sanitizeLogLine, sanitizeStack } from './log-sanitize.js';
import { redact } from './redact.js';

/** Nest's own test for "this string parameter is a stack trace" (ConsoleLogger). */
const STACK = /^(.)+\n\s+at .+:\d+:\d+/;
const LEVELS = ['log', 'warn', 'error', 'debug', 'verbose', 'fatal'] as const;

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

function safeArgs(message: unknown, rest: unknown[], line: (text: string) => string): unknown[] {
  return [sanitizeLogParam(message, line), ...rest.map((value) => sanitizeLogParam(value, line, true))];
}

/**
 * Nest's Logger with every message and extra made safe (escaped, masked, capped) on the whole line,
 * so no log line can forget a request's value; a disabled level costs nothing.
 */
export class HubtelLogger extends Logger {
  static {
    for (const level of LEVELS)
      HubtelLogger.prototype[level] = function (this: HubtelLogger, message: unknown, ...rest: unknown[]) {
        if (this.isLevelEnabled(level))
          (Logger.prototype[level] as (...args: unknown[]) => void).apply(
            this,
            safeArgs(message, rest, this.line),
          );
      };
  }

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
}

type SimpleLogger = Pick<LoggerService, 'log' | 'warn' | 'error'> & Partial<LoggerService>;

/** Wraps a logger handed to the suite directly so every line reaching it is made safe as HubtelLogger's. */
export function sanitizingLogger<T extends SimpleLogger>(target: T): T {
  const wrapped: Record<string, unknown> = Object.create(target) as Record<string, unknown>;
  for (const level of LEVELS) {
    const method = target[level] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof method === 'function')
      wrapped[level] = (message: unknown, ...rest: unknown[]) =>
        method.apply(target, safeArgs(message, rest, sanitizeLogLine));
  }
  return wrapped as T;
}
