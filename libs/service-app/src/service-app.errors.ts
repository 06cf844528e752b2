import { HubtelError, HubtelUnknownAccountError } from 'nestjs-hubtel';

/** `forAccount(name)` (or a job) named an account the service app does not know. */
export class ServiceAppUnknownAccountError extends HubtelUnknownAccountError {
  constructor(account: string, knownAccounts: readonly string[], resolver: boolean) {
    super('service-app', account, knownAccounts, resolver);
  }
}

/** A session or order of account `owner` reached through `account`: refused (409), nothing run. */
export class ServiceAppWrongAccountError extends HubtelError {
  constructor(
    readonly subject: 'session' | 'order',
    readonly id: string,
    readonly account: string,
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
