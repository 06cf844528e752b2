import { Logger, type LogLevel } from '@nestjs/common';

const LEVEL_VALUES: Record<LogLevel, number> = { verbose: 0, debug: 1, log: 2, warn: 3, error: 4, fatal: 5 };

/**
 * Whether Nest's Logger would print `level`, so a caller can skip building (and masking) a line
 * nobody will see. True unless levels were set (`NestFactory.create(..., { logger: [...] })`,
 * `app.useLogger([...])`) and exclude it: without set levels the logger in use decides (Nest's
 * console logger prints every level by default), so the line must be built.
 *
 * Not `Logger.isLevelEnabled`: on Nest 11 it answers false for every level until levels are set.
 */
export function isLogLevelEnabled(level: LogLevel): boolean {
  const levels = (Logger as unknown as { logLevels?: LogLevel[] }).logLevels;
  if (!Array.isArray(levels)) return true;
  if (levels.length === 0) return false;
  if (levels.includes(level)) return true;
  // Nest's rule: a level at or above the highest listed one is on.
  let highest = -Infinity;
  for (const listed of levels) highest = Math.max(highest, LEVEL_VALUES[listed] ?? -Infinity);
  return LEVEL_VALUES[level] >= highest;
}
