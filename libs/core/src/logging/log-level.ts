import { ConsoleLogger, Logger, type LogLevel, type LoggerService } from '@nestjs/common';

/** Nest's Logger internals read here (protected or private in its typings, present in Nest 11 and 12). */
interface LoggerInternals {
  /** Class side: bootstrap lines are being buffered (`bufferLogs`). */
  isBufferAttached?: boolean;
  /** Class side: the app's logger (undefined for `logger: false`). */
  staticInstanceRef?: LoggerService;
}
interface LoggerInstanceInternals {
  /** Instance side: the logger this Logger writes to. */
  localInstance?: LoggerService;
}

/**
 * Whether Nest's Logger would print a line of `level`, so a caller can skip building (and masking)
 * a line nobody will see. Decided the way the line would be: by the logger it would be written to
 * (`logger`'s target, or the app's logger).
 *   - a ConsoleLogger (Nest's default, or an app logger extending it): its own levels;
 *   - `logger: false`: off;
 *   - any other logger (pino, winston...): on; Nest hands such loggers every line and they filter
 *     levels themselves;
 *   - while Nest buffers bootstrap lines (`bufferLogs`): on, the logger that will print them is not
 *     known yet.
 *
 * Not `Logger.isLevelEnabled()`: on Nest 11 it answers false for every level until levels are set,
 * although the default logger prints them all.
 */
export function isLogLevelEnabled(level: LogLevel, logger?: Logger): boolean {
  const statics = Logger as unknown as LoggerInternals;
  if (statics.isBufferAttached) return true;
  const target =
    logger !== undefined
      ? (logger as unknown as LoggerInstanceInternals).localInstance
      : statics.staticInstanceRef;
  if (!target) return false;
  if (target instanceof ConsoleLogger) return target.isLevelEnabled(level);
  return true;
}
