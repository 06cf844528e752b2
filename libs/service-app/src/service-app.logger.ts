import { ConsoleLogger, Logger, type LogLevel, type LoggerService } from '@nestjs/common';
import { maskPhoneNumbers } from 'nestjs-hubtel';

/** Nest's Logger statics this logger reads (protected or private in its typings, stable since Nest 8). */
interface LoggerStatics {
  isBufferAttached?: boolean;
}

/**
 * The module's logger: Nest's Logger (context `HubtelServiceApp`) with every phone number in a
 * message masked (`233******567`). Log lines carry values from outside (SessionIds, ServiceCodes,
 * item names a flow built from the user's entry, errors thrown by flows); masking the whole line,
 * not each value, means a new log line cannot forget to.
 *
 * Masking scans the whole line, so it is done only for lines that will be written: a level the
 * app turned off (`logger: ['error', 'warn']`, `app.useLogger(...)`, `logger: false`) returns at
 * once. See `isLevelEnabled` for how that is decided.
 */
export class ServiceAppLogger extends Logger {
  /** @param mask how a line is masked (a parameter for tests; the default is the suite's masking). */
  constructor(private readonly mask: (text: string) => string = maskPhoneNumbers) {
    super('HubtelServiceApp');
  }

  /**
   * Whether a line of `level` would be written, decided as Nest's Logger itself will: by the
   * logger this instance writes to. A ConsoleLogger (Nest's default, or an app logger extending
   * it) says so through its own `isLevelEnabled`; `logger: false` leaves none (off). Any other
   * logger filters levels itself, so every line is passed to it (masked). While Nest buffers
   * bootstrap logs (`bufferLogs`), the logger that will write them is not known yet: on.
   *
   * Not `Logger.isLevelEnabled()`: on Nest 11 it answers false for every level when the app set no
   * levels (while the default logger prints them all), and it ignores a ConsoleLogger's own levels.
   */
  isLevelEnabled(level: LogLevel): boolean {
    if ((Logger as unknown as LoggerStatics).isBufferAttached) return true;
    const target: LoggerService | undefined = this.localInstance;
    if (!target) return false;
    if (target instanceof ConsoleLogger) return target.isLevelEnabled(level);
    return true;
  }

  override log(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('log')) super.log(this.masked(message), ...rest);
  }

  override warn(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('warn')) super.warn(this.masked(message), ...rest);
  }

  override error(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('error')) super.error(this.masked(message), ...rest);
  }

  override debug(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('debug')) super.debug(this.masked(message), ...rest);
  }

  override verbose(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('verbose')) super.verbose(this.masked(message), ...rest);
  }

  override fatal(message: unknown, ...rest: unknown[]): void {
    if (this.isLevelEnabled('fatal')) super.fatal(this.masked(message), ...rest);
  }

  private masked(message: unknown): unknown {
    return typeof message === 'string' ? this.mask(message) : message;
  }
}
