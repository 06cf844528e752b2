import { jest } from '@jest/globals';
import { ConsoleLogger, Logger, type LogLevel, type LoggerService } from '@nestjs/common';
import { HubtelLogger, sanitizingLogger } from './hubtel-logger.js';

const ALL: LogLevel[] = ['verbose', 'debug', 'log', 'warn', 'error', 'fatal'];

/** Keeps what reaches the app's logger, with its arguments. */
class Keeper implements LoggerService {
  readonly calls: { level: string; args: unknown[] }[] = [];
  log = (...args: unknown[]) => this.calls.push({ level: 'log', args });
  warn = (...args: unknown[]) => this.calls.push({ level: 'warn', args });
  error = (...args: unknown[]) => this.calls.push({ level: 'error', args });
  debug = (...args: unknown[]) => this.calls.push({ level: 'debug', args });
}

describe('HubtelLogger', () => {
  afterEach(() => {
    // A console logger with every level: what Nest prints while no levels are set (the state the
    // first test reads; Nest has no public way back to it).
    Logger.overrideLogger(new ConsoleLogger());
    Logger.overrideLogger(ALL);
  });

  it('escapes, masks and caps the message and extra strings; a stack stays multi-line', () => {
    const keeper = new Keeper();
    Logger.overrideLogger(keeper);
    const logger = new HubtelLogger('Shop');
    logger.log('Order r\n[Shop] Order 7 paid for 233241234567');
    logger.warn('ref\x1b[31m', { phone: '233241234567', clientSecret: 's' });
    const stack = new Error('boom').stack!;
    logger.error('failed\u2028x', stack);
    expect(keeper.calls[0]).toEqual({
      level: 'log',
      args: ['Order r\\n[Shop] Order 7 paid for 233******567', 'Shop'],
    });
    expect(keeper.calls[1]!.args).toEqual([
      'ref\\x1b[31m',
      { phone: '233******567', clientSecret: '[REDACTED]' },
      'Shop',
    ]);
    expect(keeper.calls[2]!.args).toEqual(['failed\\u2028x', stack, 'Shop']);
    // The message itself is one line even when shaped like a stack (it may quote a request).
    logger.warn(`r\n    at forged (x.js:1:2)`);
    expect(keeper.calls[3]!.args).toEqual(['r\\n    at forged (x.js:1:2)', 'Shop']);
  });

  it('does no work for a level that is off', () => {
    Logger.overrideLogger(new ConsoleLogger({ logLevels: ['error'] }));
    const line = jest.fn((text: string) => text);
    const logger = new HubtelLogger('Shop', line);
    logger.debug('x');
    logger.log('x');
    expect(line).not.toHaveBeenCalled();
    expect(logger.isLevelEnabled('error')).toBe(true);
  });
});

describe('sanitizingLogger', () => {
  it('wraps any logger; keeps its other members', () => {
    const keeper = new Keeper();
    const wrapped = sanitizingLogger(keeper);
    wrapped.warn('a\nb 233241234567');
    wrapped.debug!('\x00');
    expect(keeper.calls).toEqual([
      { level: 'warn', args: ['a\\nb 233******567'] },
      { level: 'debug', args: ['\\x00'] },
    ]);
    expect(wrapped.calls).toBe(keeper.calls);
  });
});
