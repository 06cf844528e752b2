import { ConsoleLogger, Logger, type LogLevel, type LoggerService } from '@nestjs/common';

/** Nest's Logger internals (protected or private in its typings, present in Nest 11 and 12). */
type LoggerInternals = { isBufferAttached?: boolean; staticInstanceRef?: LoggerService };

/**
 * Whether Nest's Logger would print a line of `level`, so nobody builds (and masks) a line unseen:
 * a ConsoleLogger by its levels; `logger: false` off; other loggers (pino...) filter themselves,
 * and while bootstrap lines are buffered the printer is unknown: on. Not `Logger.isLevelEnabled()`:
 * on Nest 11 it answers false until levels are set, although the default logger prints them all.
 */
export function isLogLevelEnabled(level: LogLevel, logger?: Logger): boolean {
  const statics = Logger as unknown as LoggerInternals;
  if (statics.isBufferAttached) return true;
  const target = logger
    ? (logger as unknown as { localInstance?: LoggerService }).localInstance
    : statics.staticInstanceRef;
  if (!target) return false;
  return target instanceof ConsoleLogger ? target.isLevelEnabled(level) : true;
}
