import { HubtelLogger } from 'nestjs-hubtel';
import { capLogText, escapeLogText, LOG_LINE_MAX_LENGTH, redactToString, sanitizeLogLine } from '#internal';

/**
 * The module's logger: the suite's HubtelLogger (context `HubtelServiceApp`), so every line is
 * escaped (newlines, ANSI escapes… from SessionIds, item names a flow built from the user's
 * entry, errors thrown by flows), masked (`233******567`) and capped as a whole: a new log line
 * cannot forget to. A level the app turned off returns at once, before any of that work.
 */
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
