/**
 * The errors of the module's accounts: a name no account has, and a session or order reached
 * through another account than the one it belongs to.
 */
import { HubtelError, HubtelUnknownAccountError } from 'nestjs-hubtel';

/** `forAccount(name)` (or a job) named an account the service app does not know. */
export class ServiceAppUnknownAccountError extends HubtelUnknownAccountError {
  constructor(account: string, knownAccounts: readonly string[], resolver: boolean) {
    super('service-app', account, knownAccounts, resolver);
  }
}

/**
 * A session or an order of account `owner` reached through account `account` (its path, or its
 * `forAccount()`): refused, nothing run, changed or emitted. The endpoints answer it 409 with the
 * code `HUBTEL_WRONG_ACCOUNT`.
 */
export class ServiceAppWrongAccountError extends HubtelError {
  constructor(
    /** What was reached: `session` or `order`. */
    readonly subject: 'session' | 'order',
    readonly id: string,
    /** The account it was reached through. */
    readonly account: string,
    /** The account it belongs to. */
    readonly owner: string,
  ) {
    super(
      'HUBTEL_WRONG_ACCOUNT',
      `${subject === 'session' ? 'Session' : 'Order'} ${id} belongs to another account than "${account}"`,
      { httpStatus: 409 },
    );
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), subject: this.subject, id: this.id, account: this.account };
  }
}
