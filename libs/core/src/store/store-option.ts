import type { InjectionToken } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HUBTEL_STORE } from '../hubtel.constants.js';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import type { HubtelStore } from './hubtel-store.interface.js';
import { MemoryStore } from './memory.store.js';

/** What a module's `store` option takes: a store, or the injection token of one. */
export type HubtelStoreOption = HubtelStore | InjectionToken;

/** The part of Nest's ModuleRef used to look a store token up. */
export interface StoreLookup {
  get(token: InjectionToken, options: { strict: false }): unknown;
}

const STORE_METHODS = ['get', 'setIfAbsent', 'compareAndSet', 'set', 'delete', 'scan'] as const;

/** True for an object with every HubtelStore method. */
export function isHubtelStore(value: unknown): value is HubtelStore {
  if (!value || typeof value !== 'object') return false;
  const s = value as Record<string, unknown>;
  return STORE_METHODS.every((m) => typeof s[m] === 'function');
}

/** Validates a `store` option at bootstrap (options resolution): a store or a token, else a config error. */
export function assertStoreOption(value: unknown, option: string): HubtelStoreOption | undefined {
  if (value === undefined || isHubtelStore(value)) return value;
  if (['string', 'symbol', 'function'].includes(typeof value)) return value as InjectionToken;
  throw new HubtelConfigError(
    option,
    `must be a HubtelStore (${STORE_METHODS.join(', ')}) or an injection token`,
  );
}

/** The store a module uses: its own `store` option, else the app-wide HUBTEL_STORE, else a MemoryStore. */
export function resolveStoreOption(
  store: HubtelStoreOption | undefined,
  moduleRef: StoreLookup,
  appStore: HubtelStore | undefined,
  option: string,
): HubtelStore {
  if (store === undefined) {
    if (appStore) return appStore;
    warnDefaultMemoryStore(moduleRef);
    return new MemoryStore();
  }
  if (isHubtelStore(store)) return store;
  // Injected, not looked up: an async provider (HubtelRedisModule connects first) may not be ready yet.
  if (store === HUBTEL_STORE) {
    if (appStore) return appStore;
    throw new HubtelConfigError(
      option,
      'nothing provides HUBTEL_STORE: import HubtelRedisModule.forRoot() (or provide it globally)',
    );
  }
  let found: unknown;
  try {
    found = moduleRef.get(store as InjectionToken, { strict: false });
  } catch {
    throw new HubtelConfigError(
      option,
      `no provider found for the injection token ${String((store as { name?: string }).name ?? String(store))}`,
    );
  }
  if (!isHubtelStore(found))
    throw new HubtelConfigError(
      option,
      `the provider of ${String(store)} is not a HubtelStore (or is created after this module: provide it from an imported module)`,
    );
  return found;
}

/** The one line logged, at start-up in production, when records are kept in memory by default. */
export const MEMORY_STORE_PRODUCTION_WARNING =
  "Records (invoices, callbacks, sessions) are kept in this process's memory (NODE_ENV=production): a restart or a second replica loses them. Keep them in Redis: import HubtelRedisModule.forRoot({ url: process.env.REDIS_URL }) from nestjs-hubtel/redis, or give the modules a persistent `store`.";

/** Apps already warned, by their HttpAdapterHost (Nest's core module gives every app and testing module one). */
const warned = new WeakSet<object>();

/** With NODE_ENV=production, warns once per app, however many modules fell back to a MemoryStore. */
export function warnDefaultMemoryStore(lookup: StoreLookup, env: NodeJS.ProcessEnv = process.env): void {
  if (env.NODE_ENV !== 'production') return;
  const app = lookup.get(HttpAdapterHost, { strict: false }) as object;
  if (warned.has(app)) return;
  warned.add(app);
  new HubtelLogger('HubtelStore').warn(MEMORY_STORE_PRODUCTION_WARNING);
}
