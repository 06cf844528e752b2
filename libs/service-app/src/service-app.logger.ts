import { Logger, type LogLevel } from '@nestjs/common';
import { isLogLevelEnabled, maskPhoneNumbers } from 'nestjs-hubtel';

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

  /** Whether a line of `level` would be written (see isLogLevelEnabled in the core). */
  isLevelEnabled(level: LogLevel): boolean {
    return isLogLevelEnabled(level, this);
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
