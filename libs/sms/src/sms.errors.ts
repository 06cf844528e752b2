import { HubtelError, HubtelUnknownAccountError, type HubtelErrorCode } from 'nestjs-hubtel';
import type { SendBatchResult } from './sms.types.js';

/**
 * `sendBatch` stopped early: every further batch would fail the same way (credentials, credit, IP
 * allow-list: `code` is the cause's), or the source or `onBatch` threw (`HUBTEL_SEND_ABORTED`).
 * `result` accounts for every entry processed before the stop.
 */
export class SmsBatchAbortedError extends HubtelError {
  constructor(
    message: string,
    code: HubtelErrorCode,
    readonly result: SendBatchResult,
    cause: unknown,
  ) {
    const platform = cause instanceof HubtelError ? cause : undefined;
    super(code, message, {
      cause,
      httpStatus: platform?.httpStatus,
      responseCode: platform?.responseCode,
      body: platform?.body,
    });
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), counts: this.result.counts };
  }
}

/** The HubtelUnknownAccountError of `sms.forAccount(name)` (or `@InjectSms(name)`): nothing was sent. */
export class SmsUnknownAccountError extends HubtelUnknownAccountError {
  constructor(account: string, knownAccounts: readonly string[], resolver: boolean) {
    super('SMS', account, knownAccounts, resolver);
  }
}
