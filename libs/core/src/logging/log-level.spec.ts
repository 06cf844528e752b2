import { ConsoleLogger, Logger, type LogLevel, type LoggerService } from '@nestjs/common';
import { isLogLevelEnabled } from './log-level.js';

const ALL: LogLevel[] = ['verbose', 'debug', 'log', 'warn', 'error', 'fatal'];

describe('isLogLevelEnabled', () => {
  afterEach(() => {
    // A console logger with every level: what Nest prints while no levels are set (the state the
    // first test reads; Nest has no public way back to it).
    Logger.overrideLogger(new ConsoleLogger());
    Logger.overrideLogger(ALL);
  });

  it("is true for every level of Nest's default logger while no levels are set", () => {
    for (const level of ALL) {
      expect(isLogLevelEnabled(level)).toBe(true);
      expect(isLogLevelEnabled(level, new Logger('Ctx'))).toBe(true);
    }
  });

  it('follows the levels given to NestFactory / useLogger, by Nest rule', () => {
    Logger.overrideLogger(['error', 'warn']);
    const logger = new Logger('Ctx');
    for (const probe of [undefined, logger]) {
      expect(isLogLevelEnabled('debug', probe)).toBe(false);
      expect(isLogLevelEnabled('log', probe)).toBe(false);
      expect(isLogLevelEnabled('warn', probe)).toBe(true);
      expect(isLogLevelEnabled('fatal', probe)).toBe(true);
    }
    Logger.overrideLogger(['debug', 'log']);
    expect(isLogLevelEnabled('debug', logger)).toBe(true);
    expect(isLogLevelEnabled('verbose', logger)).toBe(false);
  });

  it('asks a ConsoleLogger app logger for its own levels; lets any other logger filter itself', () => {
    Logger.overrideLogger(new ConsoleLogger({ logLevels: ['error'] }));
    expect(isLogLevelEnabled('log', new Logger('Ctx'))).toBe(false);
    expect(isLogLevelEnabled('error', new Logger('Ctx'))).toBe(true);
    const custom: LoggerService = { log: () => undefined, error: () => undefined, warn: () => undefined };
    Logger.overrideLogger(custom);
    expect(isLogLevelEnabled('debug', new Logger('Ctx'))).toBe(true);
    expect(isLogLevelEnabled('verbose')).toBe(true);
  });

  it('is false with `logger: false`', () => {
    Logger.overrideLogger(false);
    expect(isLogLevelEnabled('error')).toBe(false);
    expect(isLogLevelEnabled('error', new Logger('Ctx'))).toBe(false);
  });
});
