import { Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { MEMORY_STORE_PRODUCTION_WARNING, warnDefaultMemoryStore } from './memory-store-warning.js';
import type { StoreLookup } from './store-option.js';

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
