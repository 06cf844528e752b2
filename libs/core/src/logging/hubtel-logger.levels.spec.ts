import { jest } from '@jest/globals';
import { ConsoleLogger, Logger, type LogLevel, type LoggerService } from '@nestjs/common';
import { HubtelLogger } from './hubtel-logger.js';
import { maskPhoneNumbers } from './redact.js';

const PHONE = '233241234567';
const LINE = `Session S1 started by ${PHONE}`;
const ALL: LogLevel[] = ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'];

/** Nest's Logger statics, saved and put back so each test starts from Nest's defaults. */
const statics = Logger as unknown as { staticInstanceRef?: LoggerService; logLevels?: LogLevel[] };
const defaultLogger = statics.staticInstanceRef;

/** A ConsoleLogger that keeps what it would print (its own level check still applies). */
class CapturingLogger extends ConsoleLogger {
  readonly lines: { level: string; message: unknown }[] = [];
  protected override printMessages(messages: unknown[], _context?: string, level?: LogLevel): void {
    for (const message of messages) this.lines.push({ level: level ?? 'log', message });
  }
}

function counted() {
  const mask = jest.fn((text: string) => maskPhoneNumbers(text));
  return { mask, logger: new HubtelLogger('HubtelServiceApp', mask) };
}

function writeAll(logger: HubtelLogger): void {
  logger.verbose(LINE);
  logger.debug(LINE);
  logger.log(LINE);
  logger.warn(LINE);
  logger.error(LINE);
  logger.fatal(LINE);
}

describe('HubtelLogger and the levels of the app logger', () => {
  let stdout: ReturnType<typeof jest.spyOn>;
  let stderr: ReturnType<typeof jest.spyOn>;

  beforeEach(() => {
    stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });

  afterEach(() => {
    Logger.flush();
    // Back to Nest's default: its default logger with every level on, no app levels.
    Logger.overrideLogger(defaultLogger!);
    Logger.overrideLogger(ALL);
    statics.logLevels = undefined;
    stdout.mockRestore();
    stderr.mockRestore();
  });

  const printed = (): string =>
    [...stdout.mock.calls, ...stderr.mock.calls].map((call) => String(call[0])).join('');

  it('with app levels set (`logger: [...]`), skips the levels that are off without masking them', () => {
    Logger.overrideLogger(['error', 'warn']);
    const { mask, logger } = counted();

    logger.debug(LINE);
    logger.log(LINE);
    logger.verbose(LINE);
    expect(mask).not.toHaveBeenCalled();
    expect(printed()).toBe('');

    logger.warn(LINE);
    logger.error(LINE);
    expect(mask).toHaveBeenCalledTimes(2);
    expect(printed()).toContain('233******567');
    expect(printed()).not.toContain(PHONE);
    expect(printed()).toContain('HubtelServiceApp');
  });

  it('with no levels set, masks and writes every level (Nest prints them all by default)', () => {
    const { mask, logger } = counted();
    writeAll(logger);
    expect(mask).toHaveBeenCalledTimes(6);
    const out = printed();
    for (const level of ['VERBOSE', 'DEBUG', 'LOG', 'WARN', 'ERROR', 'FATAL']) expect(out).toContain(level);
    expect(out).not.toContain(PHONE);
  });

  it("follows an app logger's own levels (a ConsoleLogger given to useLogger / `logger`)", () => {
    const app = new CapturingLogger({ logLevels: ['log'] }); // 'log' and the levels above it
    Logger.overrideLogger(app);
    const { mask, logger } = counted();

    logger.debug(LINE);
    logger.verbose(LINE);
    expect(mask).not.toHaveBeenCalled();

    logger.log(LINE);
    logger.warn(LINE);
    expect(mask).toHaveBeenCalledTimes(2);
    expect(app.lines.map((l) => l.level)).toEqual(['log', 'warn']);
    expect(app.lines.every((l) => l.message === maskPhoneNumbers(LINE))).toBe(true);

    app.setLogLevels(['debug']);
    logger.debug(LINE);
    expect(mask).toHaveBeenCalledTimes(3);
    expect(app.lines.at(-1)).toEqual({ level: 'debug', message: maskPhoneNumbers(LINE) });
  });

  it('masks nothing when logging is off (`logger: false`)', () => {
    Logger.overrideLogger(false);
    const { mask, logger } = counted();
    writeAll(logger);
    expect(mask).not.toHaveBeenCalled();
    expect(printed()).toBe('');
  });

  it('passes every line, masked, to a logger that is not a ConsoleLogger (it filters levels itself)', () => {
    const seen: string[] = [];
    const keep = (message: unknown) => void seen.push(String(message));
    Logger.overrideLogger({ log: keep, warn: keep, error: keep, debug: keep, verbose: keep, fatal: keep });
    const { mask, logger } = counted();
    writeAll(logger);
    expect(mask).toHaveBeenCalledTimes(6);
    expect(seen).toEqual(Array(6).fill(maskPhoneNumbers(LINE)));
  });

  it('masks lines buffered during bootstrap (`bufferLogs`), for the logger set after it', () => {
    Logger.attachBuffer();
    const { mask, logger } = counted();
    logger.debug(LINE);
    expect(mask).toHaveBeenCalledTimes(1);
    const app = new CapturingLogger({ logLevels: ['debug'] });
    Logger.overrideLogger(app);
    Logger.flush();
    expect(app.lines).toEqual([{ level: 'debug', message: maskPhoneNumbers(LINE) }]);
  });

  it('leaves messages that are not strings as they are', () => {
    const app = new CapturingLogger();
    Logger.overrideLogger(app);
    const { mask, logger } = counted();
    const error = new Error('boom');
    logger.error(error);
    expect(mask).not.toHaveBeenCalled();
    expect(app.lines[0]?.message).toBe(error);
  });
});
