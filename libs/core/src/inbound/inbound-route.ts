import {
  HubtelAccountLookupLimitError,
  HubtelUnknownAccountError,
} from '../accounts/hubtel-accounts.resolver.js';
import {
  ACCOUNT_PARAM,
  PATH_SECRET_PARAM,
  type InboundAccessPolicy,
  type InboundRequestLike,
} from './inbound-access.js';
import { inboundHttpError } from './inbound-http-errors.js';

/** What routing needs of an account: its name and its access policy (path secret, allow-list). */
export interface InboundAccount {
  readonly name: string;
  readonly access: InboundAccessPolicy;
}

/** Where routing finds accounts (an AccountRegistry). */
export interface InboundAccounts<A extends InboundAccount> {
  readonly default: A;
  /** The account a request's path names (see AccountRegistry.forRequest). */
  forRequest(name: string): Promise<A>;
  /** Whether `name` is an account known without asking a resolver (see AccountRegistry.knows). */
  knows(name: string): boolean;
}

/**
 * The route paths of one endpoint at `path` ('' for the controller's own path): the default
 * account's (`path`, `path/<secret>`), and each named account's (`path/<account>`,
 * `path/<account>/<secret>`). One controller serves every account: named registrations add no
 * route, so none can overwrite another's.
 */
export function inboundPaths(path: string): string[] {
  const base = path === '' ? '' : `${path}/`;
  return [path, `${base}:${ACCOUNT_PARAM}`, `${base}:${ACCOUNT_PARAM}/:${PATH_SECRET_PARAM}`];
}

/**
 * The account a request is for, its access checked (404 / 403 as InboundAccessPolicy answers).
 * One segment after the path is the default account's path secret when it is that secret, else an
 * account's name (`default` names the default account); a second segment is that account's path
 * secret. A name no account has is answered 404 `HUBTEL_NOT_FOUND`, as a wrong secret is, so the
 * answer does not tell which one the segment was taken for.
 */
/**
 * The name of the account a request's path names, when it is one known without asking a resolver
 * (never a made-up name: safe as a metric label): a refusal before routing is counted under it.
 */
export function inboundPathAccount(
  request: InboundRequestLike,
  accounts: InboundAccounts<InboundAccount>,
): string | undefined {
  const segment = request.params?.[ACCOUNT_PARAM];
  const token = request.params?.[PATH_SECRET_PARAM];
  const main = accounts.default;
  if (segment === undefined || (token === undefined && main.access.isSecret(segment))) return main.name;
  return accounts.knows(segment) ? segment : undefined;
}

export async function routeInbound<A extends InboundAccount>(
  request: InboundRequestLike,
  accounts: InboundAccounts<A>,
): Promise<A> {
  const segment = request.params?.[ACCOUNT_PARAM];
  const token = request.params?.[PATH_SECRET_PARAM];
  let account = accounts.default;
  if (segment !== undefined && !(token === undefined && account.access.isSecret(segment))) {
    try {
      account = await accounts.forRequest(segment);
    } catch (error) {
      // A resolver that failed is not an unknown account: it propagates (a 503, sent again later).
      if (error instanceof HubtelUnknownAccountError)
        throw inboundHttpError(404, 'HUBTEL_NOT_FOUND', 'Not found');
      if (error instanceof HubtelAccountLookupLimitError)
        throw inboundHttpError(503, error.code, 'Too many account look-ups; try again later');
      throw error;
    }
    account.access.check(request, token);
    return account;
  }
  account.access.check(request, token ?? segment);
  return account;
}
