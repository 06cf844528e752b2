import { HubtelLogger } from 'nestjs-hubtel';
import { capLogText, escapeLogText, LOG_LINE_MAX_LENGTH, redactToString, sanitizeLogLine } from '#internal';

/** The suite's HubtelLogger for `HubtelServiceApp`: every line escaped, masked and capped. */
export class ServiceAppLogger extends HubtelLogger {
  /** @param mask how a line is masked (a parameter for tests; the default is the suite's masking). */
  constructor(mask?: (text: string) => string) {
    super(
      'HubtelServiceApp',
      mask ? (text) => capLogText(escapeLogText(mask(text)), LOG_LINE_MAX_LENGTH) : sanitizeLogLine,
    );
  }
}

/** An error as a log line or event message says it (credentials redacted). */
export function describe(error: unknown): string {
  return redactToString(error instanceof Error ? error.message : String(error));
}
