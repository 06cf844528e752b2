import { ConsoleLogger, Logger, type LogLevel, type LoggerService } from '@nestjs/common';

/**
 * Whether Nest's Logger would print a line of `level`, so none is built (and masked) unseen. Asks the
 * printing logger (`localInstance`, public): a ConsoleLogger by its levels; none with `logger: false`;
 * others (pino...) filter themselves: on. Not `Logger.isLevelEnabled()`: on Nest 11 it answers false
 * until levels are set, although the default logger prints them all.
 */
export function isLogLevelEnabled(level: LogLevel, logger: Logger = new Logger()): boolean {
  const target: LoggerService | undefined = logger.localInstance; // undefined with `logger: false`
  if (!target) return false;
  return target instanceof ConsoleLogger ? target.isLevelEnabled(level) : true;
}
