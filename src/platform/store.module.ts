import { Module, type DynamicModule } from '@nestjs/common';
import { HUBTEL_STORE, MemoryStore, type HubtelStore } from 'nestjs-hubtel';
import type { HubtelRedisModuleOptions } from 'nestjs-hubtel/redis';
import { HubtelRedisModule } from 'nestjs-hubtel/redis';
import type { ExampleAppConfig } from '../app.config.js';

/** Injection token of the store the example's own records (orders, deliveries) are kept in. */
export const EXAMPLE_STORE = Symbol('EXAMPLE_STORE');

/** Where the records are, as the banner says it. */
export class StoreInfo {
  constructor(
    readonly kind: 'memory' | 'redis',
    /** The Redis URL with its password masked (never the password itself), or the cluster's nodes. */
    readonly redisUrl?: string,
  ) {}

  describe(): string {
    return this.kind === 'memory' ? 'memory (records lost on restart)' : `Redis ${this.redisUrl}`;
  }
}

/** The HubtelRedisModule options and how the banner names them: one Redis, or a cluster. */
function redisTarget(
  config: ExampleAppConfig,
): { options: HubtelRedisModuleOptions; shown: string } | undefined {
  if (config.redisClusterNodes !== undefined) {
    const nodes = config.redisClusterNodes;
    return {
      options: { cluster: { nodes } },
      shown: `Cluster ${nodes.map(({ host, port }) => `${host}:${port}`).join(',')}`,
    };
  }
  if (config.redisUrl === undefined) return undefined;
  return { options: { url: config.redisUrl }, shown: maskRedisUrl(config.redisUrl) };
}

/** `redis://user:secret@host:6379/0` as `redis://user:****@host:6379/0`. */
export function maskRedisUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '****';
  return parsed.toString().replace(/\/$/, '');
}

/**
 * The app's storage, in one place (REDIS_URL or REDIS_CLUSTER_NODES).
 *   - With `redisUrl`: HubtelRedisModule provides HUBTEL_STORE app-wide, so checkout and the
 *     service app keep their records in Redis, and the shop's orders and the bundle deliveries use
 *     the same store: several replicas serve one shop, a restart loses nothing.
 *   - Without: the modules keep their own in-memory stores (as `npm start` always did) and the
 *     example's records go to one MemoryStore of this process.
 */
@Module({})
export class AppStoreModule {
  static forRoot(config: ExampleAppConfig): DynamicModule {
    const redis = redisTarget(config);
    if (redis !== undefined) {
      return {
        module: AppStoreModule,
        global: true,
        imports: [HubtelRedisModule.forRoot(redis.options)],
        providers: [
          { provide: EXAMPLE_STORE, useExisting: HUBTEL_STORE },
          { provide: StoreInfo, useValue: new StoreInfo('redis', redis.shown) },
        ],
        exports: [EXAMPLE_STORE, StoreInfo],
      };
    }
    return {
      module: AppStoreModule,
      global: true,
      providers: [
        { provide: EXAMPLE_STORE, useFactory: (): HubtelStore => new MemoryStore() },
        { provide: StoreInfo, useValue: new StoreInfo('memory') },
      ],
      exports: [EXAMPLE_STORE, StoreInfo],
    };
  }
}
