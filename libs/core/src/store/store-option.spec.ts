import { Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { HUBTEL_STORE } from '../hubtel.constants.js';
import { MemoryStore } from './memory.store.js';
import {
  MEMORY_STORE_PRODUCTION_WARNING,
  assertStoreOption,
  resolveStoreOption,
  warnDefaultMemoryStore,
  type StoreLookup,
} from './store-option.js';

describe('a module store option', () => {
  const mine = new MemoryStore({ sweepIntervalMs: 0 });
  const app = new MemoryStore({ sweepIntervalMs: 0 });
  const provided = new MemoryStore({ sweepIntervalMs: 0 });
  const lookup: StoreLookup = {
    get: (token) => {
      if (token === 'MY_STORE') return provided;
      if (token === 'NOT_A_STORE') return { get() {} };
      throw new Error('not found');
    },
  };

  it('takes a store, a token, or nothing; anything else is a config error naming the option', () => {
    expect(assertStoreOption(mine, 'x.store')).toBe(mine);
    expect(assertStoreOption(HUBTEL_STORE, 'x.store')).toBe(HUBTEL_STORE);
    expect(assertStoreOption('MY_STORE', 'x.store')).toBe('MY_STORE');
    expect(assertStoreOption(undefined, 'x.store')).toBeUndefined();
    for (const bad of [{}, { get() {} }, 42, null]) {
      expect(() => assertStoreOption(bad, 'x.store')).toThrow(
        expect.objectContaining({ code: 'HUBTEL_CONFIG_INVALID', option: 'x.store' }),
      );
    }
  });

  it('resolves to the store given, else the app-wide one, else a new MemoryStore', () => {
    expect(resolveStoreOption(mine, lookup, app, 'x.store')).toBe(mine);
    expect(resolveStoreOption(undefined, lookup, app, 'x.store')).toBe(app);
    const fallback = resolveStoreOption(undefined, lookup, undefined, 'x.store');
    expect(fallback).toBeInstanceOf(MemoryStore);
    (fallback as MemoryStore).close();
  });

  it('resolves a token: HUBTEL_STORE to the app-wide store, others through the app', () => {
    expect(resolveStoreOption(HUBTEL_STORE, lookup, app, 'x.store')).toBe(app);
    expect(() => resolveStoreOption(HUBTEL_STORE, lookup, undefined, 'x.store')).toThrow(/HubtelRedisModule/);
    expect(resolveStoreOption('MY_STORE', lookup, app, 'x.store')).toBe(provided);
    expect(() => resolveStoreOption('MISSING', lookup, app, 'x.store')).toThrow(/no provider found/);
    expect(() => resolveStoreOption('NOT_A_STORE', lookup, app, 'x.store')).toThrow(/not a HubtelStore/);
  });
});

describe('the production warning of a default MemoryStore', () => {
  const lines: string[] = [];
  beforeAll(() => {
    Logger.overrideLogger({
      log: () => undefined,
      error: () => undefined,
      warn: (message: unknown) => lines.push(String(message)),
    });
  });
  afterAll(() => Logger.overrideLogger(true));
  beforeEach(() => (lines.length = 0));

  /** A lookup as a module's ModuleRef gives it: one HttpAdapterHost per app. */
  function appLookup(): StoreLookup {
    const host = new HttpAdapterHost();
    return {
      get: (token) => {
        if (token === HttpAdapterHost) return host;
        throw new Error('not found');
      },
    };
  }

  it('is one line per app in production, however many modules fall back to memory', () => {
    const app = appLookup();
    warnDefaultMemoryStore(app, { NODE_ENV: 'production' });
    warnDefaultMemoryStore(app, { NODE_ENV: 'production' });
    expect(lines).toEqual([MEMORY_STORE_PRODUCTION_WARNING]);
    warnDefaultMemoryStore(appLookup(), { NODE_ENV: 'production' });
    expect(lines).toHaveLength(2);
  });

  it('names the fix: Redis, and how', () => {
    expect(MEMORY_STORE_PRODUCTION_WARNING).toMatch(/restart or a second replica loses/);
    expect(MEMORY_STORE_PRODUCTION_WARNING).toContain(
      'HubtelRedisModule.forRoot({ url: process.env.REDIS_URL })',
    );
  });

  it('is silent outside production', () => {
    for (const env of [{}, { NODE_ENV: 'development' }, { NODE_ENV: 'test' }])
      warnDefaultMemoryStore(appLookup(), env);
    expect(lines).toEqual([]);
  });
});
