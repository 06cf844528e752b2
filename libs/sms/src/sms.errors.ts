import { HubtelError, HubtelUnknownAccountError, type HubtelErrorCode } from 'nestjs-hubtel';
import type { SendBatchResult } from './sms.types.js';

/**
 * `sendBatch` stopped before the end of its recipient list: the platform refused the credentials,
 * the account ran out of credit or the server's IP is not allow-listed (every further batch would
 * fail the same way), the recipient source threw, or the `onBatch` callback threw.
 *
 * `code` is the code of the cause when the platform caused it (`HUBTEL_AUTHENTICATION_FAILED`,
 * `HUBTEL_INSUFFICIENT_CREDIT`, `HUBTEL_IP_NOT_ALLOWED`), else `HUBTEL_SEND_ABORTED`. `result`
 * accounts for every entry processed before the stop (`counts.total`); later entries were not
 * processed (nor, for a stream, read).
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
