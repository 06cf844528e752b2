import { jest } from '@jest/globals';
import { HttpException } from '@nestjs/common';
import { AccountRegistry } from '../accounts/hubtel-accounts.js';
import {
  HubtelUnknownAccountError,
  type HubtelAccountResolver,
} from '../accounts/hubtel-accounts.resolver.js';
import { resolveAccountResolver } from '../options/hubtel-options.recipe.js';
import { ACCOUNT_PARAM, InboundAccessPolicy, PATH_SECRET_PARAM } from './inbound-access.js';
import { inboundPathAccount, inboundPaths, routeInbound, type InboundAccount } from './inbound-route.js';

const MAIN_SECRET = 'main-secret-0123456789';
const NORTH_SECRET = 'north-secret-0123456789';

function registry(
  resolve?: (name: string) => unknown,
  limits: Omit<HubtelAccountResolver<unknown>, 'resolve'> = {},
): AccountRegistry<InboundAccount> {
  const accounts = new AccountRegistry<InboundAccount>('checkout', 'CheckoutModule.forRoot');
  accounts.attachDefault({
    account: { name: 'default', access: new InboundAccessPolicy({ pathSecret: MAIN_SECRET }) },
    build: (name, overrides) => ({
      name,
      access: new InboundAccessPolicy((overrides as { access?: object }).access),
    }),
    ...(resolve
      ? { resolver: resolveAccountResolver({ resolve, cacheTtlMs: 60_000, ...limits }, 'checkout') }
      : {}),
  });
  accounts.register('north', { access: { pathSecret: NORTH_SECRET } });
  accounts.register('south', {});
  accounts.onModuleInit();
  return accounts;
}

async function route(accounts: AccountRegistry<InboundAccount>, account?: string, token?: string) {
  const params: Record<string, string> = {};
  if (account !== undefined) params[ACCOUNT_PARAM] = account;
  if (token !== undefined) params[PATH_SECRET_PARAM] = token;
  try {
    return (await routeInbound({ headers: {}, params }, accounts)).name;
  } catch (error) {
    if (error instanceof HttpException) return error.getStatus();
    throw error;
  }
}

describe('routeInbound', () => {
  it('routes the paths of every account', () => {
    expect(inboundPaths('')).toEqual(['', ':hubtelAccount', ':hubtelAccount/:hubtelToken']);
    expect(inboundPaths('api/fulfillment')).toEqual([
      'api/fulfillment',
      'api/fulfillment/:hubtelAccount',
      'api/fulfillment/:hubtelAccount/:hubtelToken',
    ]);
  });

  it("takes one segment as the default account's secret, else as an account name", async () => {
    const accounts = registry();
    await expect(route(accounts, MAIN_SECRET)).resolves.toBe('default');
    await expect(route(accounts, 'default', MAIN_SECRET)).resolves.toBe('default');
    await expect(route(accounts)).resolves.toBe(404); // the default's secret is missing
    await expect(route(accounts, 'south')).resolves.toBe('south');
    await expect(route(accounts, 'north', NORTH_SECRET)).resolves.toBe('north');
  });

  it("refuses a missing or wrong secret, another account's secret and unknown names alike (404)", async () => {
    const accounts = registry();
    await expect(route(accounts, 'north')).resolves.toBe(404);
    await expect(route(accounts, 'north', MAIN_SECRET)).resolves.toBe(404);
    await expect(route(accounts, 'default', NORTH_SECRET)).resolves.toBe(404);
    await expect(route(accounts, NORTH_SECRET)).resolves.toBe(404);
    await expect(route(accounts, 'south', 'anything-at-all-123456')).resolves.toBe(404);
    await expect(route(accounts, 'west')).resolves.toBe(404);
    await expect(route(accounts, 'Not A Name')).resolves.toBe(404);
  });

  it("checks the routed account's own allow-list, not another's", async () => {
    const accounts = registry();
    accounts.register('east', { access: { allowedIps: ['52.50.116.54'] } });
    accounts.onModuleInit();
    const from = (address: string, account: string) =>
      routeInbound(
        { headers: {}, socket: { remoteAddress: address }, params: { [ACCOUNT_PARAM]: account } },
        accounts,
      ).then(
        (routed) => routed.name,
        (error: HttpException) => error.getStatus(),
      );
    await expect(from('52.50.116.54', 'east')).resolves.toBe('east');
    await expect(from('10.1.2.3', 'east')).resolves.toBe(403);
    await expect(from('10.1.2.3', 'south')).resolves.toBe('south'); // south has no allow-list
  });

  it('asks the resolver for other names; a failing resolver is not an unknown account', async () => {
    const asked: string[] = [];
    const accounts = registry(async (name) => {
      asked.push(name);
      if (name === 'broken') throw new Error('database down');
      return name === 'm-1' ? {} : undefined;
    });
    await expect(route(accounts, 'm-1')).resolves.toBe('m-1');
    await expect(route(accounts, 'm-2')).resolves.toBe(404);
    await expect(route(accounts, 'broken')).rejects.toThrow('database down');
    await expect(route(accounts, 'north', NORTH_SECRET)).resolves.toBe('north');
    expect(asked).toEqual(['m-1', 'm-2', 'broken']);
    await expect(accounts.get('m-3')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
  });

  it("remembers a path's unknown name for unknownTtlMs; the app's own calls still ask", async () => {
    const asked: string[] = [];
    let known = new Set<string>();
    const accounts = registry((name) => {
      asked.push(name);
      return known.has(name) ? {} : undefined;
    });
    await expect(route(accounts, 'm-9')).resolves.toBe(404);
    await expect(route(accounts, 'm-9')).resolves.toBe(404);
    expect(asked).toEqual(['m-9']); // the second forged request cost no query
    known = new Set(['m-9']); // the merchant signs up: the app's call asks, and the path follows
    await expect(accounts.get('m-9')).resolves.toMatchObject({ name: 'm-9' });
    await expect(route(accounts, 'm-9')).resolves.toBe('m-9');
    expect(asked).toEqual(['m-9', 'm-9']);

    const forgetful = registry((name) => (asked.push(name), undefined), { unknownTtlMs: 0 });
    await route(forgetful, 'm-8');
    await route(forgetful, 'm-8');
    expect(asked.filter((name) => name === 'm-8')).toHaveLength(2);
  });

  it('bounds the look-ups requests start in a minute (503 past it); cached accounts still route', async () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.now());
    const asked: string[] = [];
    const accounts = registry((name) => (asked.push(name), name.startsWith('shop') ? {} : undefined), {
      requestLookupsPerMinute: 3,
    });
    await expect(route(accounts, 'shop-1')).resolves.toBe('shop-1');
    await expect(route(accounts, 'forged-1')).resolves.toBe(404);
    await expect(route(accounts, 'forged-2')).resolves.toBe(404);
    const limited = await routeInbound(
      { headers: {}, params: { [ACCOUNT_PARAM]: 'forged-3' } },
      accounts,
    ).catch((error: HttpException) => error);
    expect((limited as HttpException).getStatus()).toBe(503);
    expect((limited as HttpException).getResponse()).toMatchObject({
      code: 'HUBTEL_ACCOUNT_LOOKUPS_LIMITED',
    });
    expect(asked).toEqual(['shop-1', 'forged-1', 'forged-2']);
    await expect(route(accounts, 'shop-1')).resolves.toBe('shop-1'); // from the cache: no look-up
    await expect(route(accounts, 'north', NORTH_SECRET)).resolves.toBe('north'); // registered
    await expect(accounts.get('shop-2')).resolves.toMatchObject({ name: 'shop-2' }); // the app's calls are not bounded
    now.mockReturnValue(Date.now() + 60_000); // a minute after the first look-up: a fresh budget
    await expect(route(accounts, 'forged-3')).resolves.toBe(404);
    now.mockRestore();
  });

  it('names the known account a path names, for counting its refusals; never a made-up name', async () => {
    const accounts = registry((name) => (name === 'm-1' ? {} : undefined));
    const named = (account?: string, token?: string) => {
      const params: Record<string, string> = {};
      if (account !== undefined) params[ACCOUNT_PARAM] = account;
      if (token !== undefined) params[PATH_SECRET_PARAM] = token;
      return inboundPathAccount({ headers: {}, params }, accounts);
    };
    expect(named()).toBe('default');
    expect(named(MAIN_SECRET)).toBe('default');
    expect(named('default', 'wrong')).toBe('default');
    expect(named('north', 'wrong')).toBe('north');
    expect(named('m-1')).toBeUndefined(); // not found yet
    await route(accounts, 'm-1');
    expect(named('m-1', 'wrong')).toBe('m-1');
    await route(accounts, 'made-up');
    expect(named('made-up')).toBeUndefined();
  });

  it.each([
    [{ unknownTtlMs: -1 }, 'checkout.accounts.unknownTtlMs'],
    [{ requestLookupsPerMinute: 0 }, 'checkout.accounts.requestLookupsPerMinute'],
    [{ requestLookupsPerMinute: 1.5 }, 'checkout.accounts.requestLookupsPerMinute'],
  ])('refuses the resolver option %j, naming %s', (limits, option) => {
    expect(() => resolveAccountResolver({ resolve: () => undefined, ...limits }, 'checkout')).toThrow(
      expect.objectContaining({ option }),
    );
  });
});
