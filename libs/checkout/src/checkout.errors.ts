import { HubtelUnknownAccountError, HubtelUnknownOutcomeError, type HubtelError } from 'nestjs-hubtel';

/** Thrown by `createInvoice` when the platform may or may not have created the invoice. */
export class CheckoutUnknownOutcomeError extends HubtelUnknownOutcomeError {
  constructor(
    readonly clientReference: string,
    cause: HubtelError,
  ) {
    super(
      `${cause.message}. Invoice ${clientReference} is kept as pending: getStatus('${clientReference}') (or the reconciler) tells whether it exists; create a new invoice with another clientReference to retry`,
      { httpStatus: cause.httpStatus, responseCode: cause.responseCode, body: cause.body, cause },
    );
  }
}

/** `checkout.forAccount(name)` named no known account: nothing was sent (`HUBTEL_UNKNOWN_ACCOUNT`). */
export class CheckoutUnknownAccountError extends HubtelUnknownAccountError {
  constructor(account: string, knownAccounts: readonly string[], resolver: boolean) {
    super('checkout', account, knownAccounts, resolver);
  }
}
