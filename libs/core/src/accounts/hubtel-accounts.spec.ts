import { jest } from '@jest/globals';
import { AccountRegistry } from './hubtel-accounts.js';
import {
  ACCOUNT_TRANSPORTS,
  HubtelAccountLookupLimitError,
  HubtelUnknownAccountError,
  type HubtelAccountResolver,
} from './hubtel-accounts.resolver.js';
import { resolveAccountResolver } from '../options/hubtel-options.recipe.js';

interface Account {
  name: string;
  key: string;
}

/** A resolver over a table the test edits (a merchants' database), counting its calls. */
function setUp(limits: Omit<HubtelAccountResolver<unknown>, 'resolve'> = {}) {
  const table = new Map<string, string>([['north', 'key-1']]);
  const asked: string[] = [];
  let gate: Promise<void> | undefined;
  let failing = false;
  const warnings: string[] = [];
  const registry = new AccountRegistry<Account>('checkout', 'CheckoutModule.forRoot', undefined, {
    warn: (message: string) => warnings.push(message),
  });
  registry.attachDefault({
    account: { name: 'default', key: 'main' },
    build: (name, overrides) => ({ name, key: (overrides as { key: string }).key }),
    resolver: resolveAccountResolver(
      {
        resolve: async (name: string) => {
          asked.push(name);
          await gate;
          if (failing) throw new Error('database down');
          const key = table.get(name);
          return key === undefined ? undefined : { key };
        },
        cacheTtlMs: 1_000,
        requestLookupsPerMinute: 2,
        ...limits,
      },
      'checkout',
    ),
  });
  registry.register('south', { key: 'south' });
  registry.onModuleInit();
  return {
    registry,
    table,
    asked,
    warnings,
    /** Holds every resolver call until the returned function is called. */
    hold(): () => void {
      let open!: () => void;
      gate = new Promise((resolve) => (open = resolve));
      return () => {
        gate = undefined;
        open();
      };
    },
    fail(on: boolean) {
      failing = on;
    },
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('AccountRegistry: accounts from a resolver, on requests', () => {
  let clock: ReturnType<typeof jest.spyOn>;
  let now: number;
  const advance = (ms: number) => clock.mockReturnValue((now += ms));
  beforeEach(() => {
    now = Date.now();
    clock = jest.spyOn(Date, 'now').mockReturnValue(now);
  });
  afterEach(() => clock.mockRestore());

  it("serves a found account's expired entry at once while it is asked again in the background", async () => {
    const { registry, table, asked, hold } = setUp();
    await expect(registry.forRequest('north')).resolves.toEqual({ name: 'north', key: 'key-1' });
    advance(1_500); // past cacheTtlMs
    table.set('north', 'key-2'); // the merchant rotated the key
    const release = hold(); // the database is slow
    await expect(registry.forRequest('north')).resolves.toEqual({ name: 'north', key: 'key-1' });
    await expect(registry.forRequest('north')).resolves.toEqual({ name: 'north', key: 'key-1' });
    expect(asked).toEqual(['north', 'north']); // one refresh, not one per request
    release();
    await flush();
    await expect(registry.forRequest('north')).resolves.toEqual({ name: 'north', key: 'key-2' });
    expect(asked).toEqual(['north', 'north']);
  });

  it('spends the budget only on names never found: made-up names cannot lock a found account out', async () => {
    const { registry, asked, warnings } = setUp({ requestLookupsPerMinute: 3 });
    await registry.forRequest('north'); // never found before: counted
    advance(1_500);
    await expect(registry.forRequest('forged-1')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
    await expect(registry.forRequest('forged-2')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
    await expect(registry.forRequest('forged-3')).rejects.toBeInstanceOf(HubtelAccountLookupLimitError);
    // The budget is spent: north's refresh is not counted, and north is served meanwhile.
    await expect(registry.forRequest('north')).resolves.toMatchObject({ name: 'north' });
    await flush();
    expect(asked).toEqual(['north', 'forged-1', 'forged-2', 'north']);
    expect(registry.knows('north')).toBe(true);
    expect(registry.knows('forged-1')).toBe(false);
    expect(registry.knows('south')).toBe(true);
    expect(registry.knows('default')).toBe(true);
    expect(warnings).toHaveLength(1);
  });

  it('a found name with nothing cached (cacheTtlMs 0) waits for the resolver outside the budget', async () => {
    const { registry, asked } = setUp({ cacheTtlMs: 0 });
    await registry.forRequest('north');
    await expect(registry.forRequest('forged-1')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
    await expect(registry.forRequest('forged-2')).rejects.toBeInstanceOf(HubtelAccountLookupLimitError);
    await expect(registry.forRequest('north')).resolves.toMatchObject({ name: 'north' });
    expect(asked).toEqual(['north', 'forged-1', 'north']); // nothing kept: asked each time
  });

  it('a name never found is refused during a flood, whether or not it is a real account', async () => {
    const { registry, table } = setUp();
    await expect(registry.forRequest('forged-1')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
    await expect(registry.forRequest('forged-2')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
    table.set('east', 'key-e');
    await expect(registry.forRequest('east')).rejects.toBeInstanceOf(HubtelAccountLookupLimitError);
    // The app's own call is not bounded; once found, the path is served.
    await expect(registry.get('east')).resolves.toMatchObject({ name: 'east' });
    await expect(registry.forRequest('east')).resolves.toMatchObject({ name: 'east' });
  });

  it('tells the budget refusals once per episode: a minute that refuses none ends it', async () => {
    const { registry, warnings } = setUp({ requestLookupsPerMinute: 1, unknownTtlMs: 0 });
    const forge = (name: string) => registry.forRequest(name).catch((error: unknown) => error);
    await forge('forged-1');
    for (let i = 0; i < 5; i++)
      expect(await forge(`forged-x${i}`)).toBeInstanceOf(HubtelAccountLookupLimitError);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('checkout: requests named 1 accounts the resolver never found');
    expect(warnings[0]).toContain('accounts.requestLookupsPerMinute');
    advance(60_000); // the flood goes on into the next minute: the same episode
    await forge('forged-2');
    expect(await forge('forged-y')).toBeInstanceOf(HubtelAccountLookupLimitError);
    expect(warnings).toHaveLength(1);
    advance(60_000); // a quiet minute: one look-up, no refusal
    await forge('forged-3');
    advance(60_000); // a new flood: a new episode
    await forge('forged-4');
    expect(await forge('forged-z')).toBeInstanceOf(HubtelAccountLookupLimitError);
    expect(warnings).toHaveLength(2);
  });

  it('drops an account the resolver no longer finds; keeps serving one while the resolver fails', async () => {
    const { registry, table, asked, fail, warnings } = setUp();
    await registry.forRequest('north');
    advance(1_500);
    fail(true); // the database is down: the expired entry is served, asked again 10 s later at most
    await expect(registry.forRequest('north')).resolves.toMatchObject({ key: 'key-1' });
    await flush();
    expect(warnings).toEqual([
      'checkout[north]: asking accounts.resolve again failed (database down); its last options are still served, asked again in 1000 ms',
    ]);
    await expect(registry.forRequest('north')).resolves.toMatchObject({ key: 'key-1' });
    expect(asked).toEqual(['north', 'north']);
    fail(false);
    advance(1_000);
    table.delete('north'); // the merchant left
    await expect(registry.forRequest('north')).resolves.toMatchObject({ key: 'key-1' });
    await flush();
    expect(asked).toEqual(['north', 'north', 'north']);
    expect(registry.knows('north')).toBe(false);
    await expect(registry.forRequest('north')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
  });

  it('forgets a found name a day after it was last found', async () => {
    const { registry } = setUp({ cacheTtlMs: 0 });
    await registry.forRequest('north');
    advance(86_400_000 - 1);
    expect(registry.knows('north')).toBe(true);
    advance(1);
    expect(registry.knows('north')).toBe(false);
  });
});

/** What the registry keeps of names is bounded: a flood of names cannot grow an instance's memory without end. */
describe('AccountRegistry: memory limits', () => {
  it('remembers at most 10,000 unknown names from requests: the oldest gives way', async () => {
    const { registry, asked } = setUp({ requestLookupsPerMinute: 20_000 });
    for (let i = 0; i <= 10_000; i++) await registry.forRequest(`forged-${i}`).catch(() => undefined);
    asked.length = 0;
    // The newest 10,000 are answered without asking; the oldest was forgotten, so it is asked again.
    await expect(registry.forRequest('forged-1')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
    await expect(registry.forRequest('forged-10000')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
    expect(asked).toEqual([]);
    await expect(registry.forRequest('forged-0')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
    expect(asked).toEqual(['forged-0']);
  });

  it('knows at most 100,000 found names: the oldest is forgotten first', async () => {
    const { registry, table } = setUp({ cacheTtlMs: 0 });
    for (let i = 0; i <= 100_000; i++) {
      table.set(`m${i}`, `key-${i}`);
      await registry.get(`m${i}`);
    }
    expect(registry.knows('m0')).toBe(false);
    expect(registry.knows('m1')).toBe(true);
    expect(registry.knows('m100000')).toBe(true);
  });

  it('drops the expired entries once 1,000 are cached: a name so dropped is looked up afresh', async () => {
    let now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const { registry, table, asked } = setUp();
      for (let i = 0; i < 1_000; i++) {
        table.set(`m${i}`, `key-${i}`);
        await registry.get(`m${i}`);
      }
      now += 1_500; // every entry expired (cacheTtlMs 1 s)
      table.set('m0', 'rotated');
      // Below the bound an expired found entry is served while refreshed; the 1,001st entry sweeps it.
      await registry.get('north');
      asked.length = 0;
      await expect(registry.get('m0')).resolves.toEqual({ name: 'm0', key: 'rotated' });
      expect(asked).toEqual(['m0']);
    } finally {
      clock.mockRestore();
    }
  });
});

describe('AccountRegistry: the transports health checks probe', () => {
  it("lists the default's, the registered accounts' and the resolved ones still known; not a name never found", async () => {
    let now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const registry = new AccountRegistry<{ transport: string }>('sms', 'SmsModule.forRoot');
      registry.attachDefault({
        account: { transport: 'main' },
        build: (name) => ({ transport: `transport of ${name}` }),
        resolver: resolveAccountResolver(
          { resolve: async (name: string) => (name === 'north' ? {} : undefined), cacheTtlMs: 1_000 },
          'sms',
        ),
      });
      registry.register('south', {});
      registry.onModuleInit();
      await registry.get('north');
      await expect(registry.get('nobody')).rejects.toBeInstanceOf(HubtelUnknownAccountError);
      const probed = async () =>
        (await registry[ACCOUNT_TRANSPORTS]()).map(({ account, transport }) => `${account}: ${transport}`);
      const all = ['default: main', 'south: transport of south', 'north: transport of north'];
      expect(await probed()).toEqual(all);
      now += 1_500; // north's entry expired, its name still known: still probed
      expect(await probed()).toEqual(all);
    } finally {
      clock.mockRestore();
    }
  });
});
