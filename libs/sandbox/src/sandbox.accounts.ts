import { SandboxNotFoundError } from './sandbox.errors.js';
import { parseBasicAuth } from './sandbox.http.js';
import type { SandboxAccount } from './sandbox.option-types.js';

export type SandboxKeyKind = 'api' | 'sms' | 'callback';

/** The accounts a sandbox serves, and whose key pair a request's Basic auth carries (pairs never repeat). */
export class SandboxAccounts {
  readonly default: SandboxAccount;
  private readonly named = new Map<string, SandboxAccount>();
  private readonly senders = new Map<string, SandboxAccount>();

  constructor(readonly all: readonly SandboxAccount[]) {
    this.default = all[0]!;
    for (const account of all) {
      this.named.set(account.name, account);
      for (const id of account.senderIds) this.senders.set(id.toLowerCase(), account);
    }
  }

  get(name: string): SandboxAccount | undefined {
    return this.named.get(name);
  }

  /** The account by name; a name the sandbox does not serve is a SandboxNotFoundError. */
  require(name: string): SandboxAccount {
    const account = this.named.get(name);
    if (!account) throw new SandboxNotFoundError('account', String(name));
    return account;
  }

  /** Whether any account asks for callback credentials (else `/callback` checks none, as the contract shows). */
  get callbackAuth(): boolean {
    return this.all.some((a) => a.credentials.callback);
  }

  /** The account whose `kind` pair the `Authorization` header carries; undefined for none or a wrong one. */
  authenticate(header: string | undefined, kind: SandboxKeyKind): SandboxAccount | undefined {
    const given = parseBasicAuth(header);
    return given ? this.withPair(given.clientId, given.clientSecret, kind) : undefined;
  }

  /** The account whose `kind` pair is exactly this one (no pair's part is ever null). */
  withPair(
    clientId: string | null,
    clientSecret: string | null,
    kind: SandboxKeyKind,
  ): SandboxAccount | undefined {
    return this.all.find((a) => {
      const pair = a.credentials[kind];
      return !!pair && pair.clientId === clientId && pair.clientSecret === clientSecret;
    });
  }

  /** Whether `account` may send from `from`: its own sender ids, else any no other account declares. */
  maySendFrom(account: SandboxAccount, from: string): boolean {
    if (account.senderIds.length > 0)
      return account.senderIds.some((id) => id.toLowerCase() === from.toLowerCase());
    const owner = this.senders.get(from.toLowerCase());
    return owner === undefined || owner === account;
  }
}

/** The public view of an account (a copy: the sandbox's own stays unchanged). */
export const accountView = (account: SandboxAccount): SandboxAccount => structuredClone(account);

/** Another account's record is not found, exactly as one that never existed. */
export const owned = <T extends { account: string }>(record: T | undefined, account: SandboxAccount) =>
  record?.account === account.name ? record : undefined;

/** The records of one account, or all when no account is named; an unknown name is an error, not an empty list. */
export function byAccount<T extends { account: string | null }>(
  accounts: SandboxAccounts,
  records: T[],
  account: string | undefined,
): T[] {
  if (account === undefined) return records;
  accounts.require(account);
  return records.filter((r) => r.account === account);
}
