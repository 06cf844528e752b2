import type { AccountRegistry } from '../accounts/hubtel-accounts.js';
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

/** Where routing finds accounts. */
export type InboundAccounts<A extends InboundAccount> = Pick<
  AccountRegistry<A>,
  'default' | 'forRequest' | 'knows'
>;

/** The route paths of one endpoint, for every account: named registrations add no route of their own. */
export function inboundPaths(path: string): string[] {
  const base = path === '' ? '' : `${path}/`;
  return [path, `${base}:${ACCOUNT_PARAM}`, `${base}:${ACCOUNT_PARAM}/:${PATH_SECRET_PARAM}`];
}

/** The path's account segment and secret; one segment alone is the default account's secret or a name. */
function pathOf(request: InboundRequestLike, main: InboundAccount): { name?: string; token?: string } {
  const segment = request.params?.[ACCOUNT_PARAM];
  const token = request.params?.[PATH_SECRET_PARAM];
  if (segment !== undefined && token === undefined && main.access.isSecret(segment))
    return { token: segment };
  return { name: segment, token };
}

/** The account the path names, when known without a resolver (never a made-up name: a safe label). */
export function inboundPathAccount(
  request: InboundRequestLike,
  accounts: InboundAccounts<InboundAccount>,
): string | undefined {
  const { name } = pathOf(request, accounts.default);
  return name === undefined ? accounts.default.name : accounts.knows(name) ? name : undefined;
}

/** A request's account, its access checked: an unknown name is a 404 as a wrong secret is (tells neither). */
export async function routeInbound<A extends InboundAccount>(
  request: InboundRequestLike,
  accounts: InboundAccounts<A>,
): Promise<A> {
  const { name, token } = pathOf(request, accounts.default);
  let account = accounts.default;
  if (name !== undefined) {
    try {
      account = await accounts.forRequest(name);
    } catch (error) {
      // A resolver that failed is not an unknown account: it propagates (a 503, sent again later).
      if (error instanceof HubtelUnknownAccountError)
        throw inboundHttpError(404, 'HUBTEL_NOT_FOUND', 'Not found');
      if (error instanceof HubtelAccountLookupLimitError)
        throw inboundHttpError(503, error.code, 'Too many account look-ups; try again later');
      throw error;
    }
  }
  account.access.check(request, token);
  return account;
}
