import { Logger } from '@nestjs/common';
import { maskPhoneNumbers } from 'nestjs-hubtel';

/**
 * The module's logger: Nest's Logger (context `HubtelServiceApp`) with every phone number in a
 * message masked (`233******567`). Log lines carry values from outside (SessionIds, ServiceCodes,
 * item names a flow built from the user's entry, errors thrown by flows); masking the whole line,
 * not each value, means a new log line cannot forget to.
 */
export class ServiceAppLogger extends Logger {
  constructor() {
    super('HubtelServiceApp');
  }

  override log(message: unknown, ...rest: unknown[]): void {
    super.log(mask(message), ...rest);
  }

  override warn(message: unknown, ...rest: unknown[]): void {
    super.warn(mask(message), ...rest);
  }

  override error(message: unknown, ...rest: unknown[]): void {
    super.error(mask(message), ...rest);
  }

  override debug(message: unknown, ...rest: unknown[]): void {
    super.debug(mask(message), ...rest);
  }

  override verbose(message: unknown, ...rest: unknown[]): void {
    super.verbose(mask(message), ...rest);
  }

  override fatal(message: unknown, ...rest: unknown[]): void {
    super.fatal(mask(message), ...rest);
  }
}

function mask(message: unknown): unknown {
  return typeof message === 'string' ? maskPhoneNumbers(message) : message;
}
