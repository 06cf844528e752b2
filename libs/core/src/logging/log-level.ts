import { ConsoleLogger, Logger, type LogLevel, type LoggerService } from '@nestjs/common';

/** Nest's Logger internals (protected or private in its typings, present in Nest 11 and 12). */
interface LoggerInternals {
  isBufferAttached?: boolean;
  /** The app's logger (undefined for `logger: false`). */
  staticInstanceRef?: LoggerService;
}
interface LoggerInstanceInternals {
  localInstance?: LoggerService;
}

/**
 * Whether Nest's Logger would print a line of `level`, so nobody builds (and masks) a line unseen:
 * a ConsoleLogger by its levels; `logger: false` off; other loggers (pino...) filter themselves,
 * and while bootstrap lines are buffered the printer is unknown: on. Not `Logger.isLevelEnabled()`:
 * on Nest 11 it answers false until levels are set, although the default logger prints them all.
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
