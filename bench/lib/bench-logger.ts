import { ConsoleLogger } from '@nestjs/common';

/**
 * Start-up warnings about a configuration the bench chooses on purpose, said once per app by the
 * modules. The bench measures that configuration knowingly, so printing them in every server's
 * output only buries the bench's own lines; every other warning and error is printed as in
 * production.
 * - Fulfillment requests unverified: the bench's service apps have no `statusCheck` (it would call
 *   Hubtel's status API for every order), so the fulfillment path measured is the unverified one.
 */
const CHOSEN = [/^Fulfillment requests are trusted unverified\b/];

/** Nest's console logger at `error` and `warn`, without the warnings of CHOSEN. */
export class BenchLogger extends ConsoleLogger {
  constructor() {
    super();
    this.setLogLevels(['error', 'warn']);
  }

  override warn(message: unknown, ...rest: unknown[]): void {
    if (typeof message === 'string' && CHOSEN.some((pattern) => pattern.test(message))) return;
    super.warn(message, ...(rest as [string?]));
  }
}
