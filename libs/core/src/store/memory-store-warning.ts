import { HttpAdapterHost } from '@nestjs/core';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import type { StoreLookup } from './store-option.js';

/** The one line logged, at start-up in production, when records are kept in memory by default. */
export const MEMORY_STORE_PRODUCTION_WARNING =
  "Records (invoices, callbacks, sessions) are kept in this process's memory (NODE_ENV=production): a restart or a second replica loses them. Keep them in Redis: import HubtelRedisModule.forRoot({ url: process.env.REDIS_URL }) from nestjs-hubtel/redis, or give the modules a persistent `store`.";

/** Apps already warned, by an object that is one per Nest app (its HttpAdapterHost). */
const warned = new WeakSet<object>();

/** With NODE_ENV=production, warns once per app, however many modules fell back to a MemoryStore. */
export function warnDefaultMemoryStore(lookup: StoreLookup, env: NodeJS.ProcessEnv = process.env): void {
  if (env.NODE_ENV !== 'production') return;
  const app = appKey(lookup);
  if (warned.has(app)) return;
  warned.add(app);
  new HubtelLogger('HubtelStore').warn(MEMORY_STORE_PRODUCTION_WARNING);
}

function appKey(lookup: StoreLookup): object {
  try {
    const host = lookup.get(HttpAdapterHost, { strict: false });
    if (host && typeof host === 'object') return host;
  } catch {
    // Not in a Nest app (a unit test's lookup): one key per lookup.
  }
  return lookup;
}
