import { Logger, type LogLevel } from '@nestjs/common';
import { isLogLevelEnabled } from './log-level.js';

describe('isLogLevelEnabled', () => {
  const holder = Logger as unknown as { logLevels?: LogLevel[] };
  const saved = holder.logLevels;
  afterEach(() => {
    holder.logLevels = saved;
  });

  it('is true for every level while no levels are set: the logger in use decides', () => {
    holder.logLevels = undefined;
    for (const level of ['verbose', 'debug', 'log', 'warn', 'error', 'fatal'] as const)
      expect(isLogLevelEnabled(level)).toBe(true);
  });

  it('follows the levels given to NestFactory / useLogger, by Nest rule', () => {
    Logger.overrideLogger(['error', 'warn']);
    expect(isLogLevelEnabled('debug')).toBe(false);
    expect(isLogLevelEnabled('log')).toBe(false);
    expect(isLogLevelEnabled('warn')).toBe(true);
    // Nest prints a level at or above the highest listed one.
    expect(isLogLevelEnabled('fatal')).toBe(true);
    Logger.overrideLogger(['debug', 'log']);
    expect(isLogLevelEnabled('debug')).toBe(true);
    expect(isLogLevelEnabled('verbose')).toBe(false);
    Logger.overrideLogger([]);
    expect(isLogLevelEnabled('error')).toBe(false);
  });
});
