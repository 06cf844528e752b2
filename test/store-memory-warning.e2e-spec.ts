/**
 * At start-up with NODE_ENV=production, an app whose modules keep their records in memory (no
 * HubtelRedisModule, no `store`) logs ONE warning line saying what that costs and how to fix it —
 * not one per module; none outside production, and none when the records are in Redis.
 */
import { MEMORY_STORE_PRODUCTION_WARNING } from '../libs/core/src/store/store-option.js';
import { CaptureLogger } from './support/capture-logger.js';
import { startExampleInProcess } from './support/example-app.harness.js';
import { redisBinary, redisDatabase, type RedisDatabase } from './support/redis-server.js';

const WARNING =
  /restart or a second replica loses them.*HubtelRedisModule\.forRoot\(\{ url: process\.env\.REDIS_URL \}\)/;

async function startupLines(options: { nodeEnv?: string; redisUrl?: string }): Promise<CaptureLogger> {
  const logger = new CaptureLogger();
  const before = process.env.NODE_ENV;
  if (options.nodeEnv === undefined) delete process.env.NODE_ENV;
  else process.env.NODE_ENV = options.nodeEnv;
  try {
    const shop = await startExampleInProcess({
      logger,
      ...(options.redisUrl === undefined ? {} : { redisUrl: options.redisUrl }),
    });
    await shop.close();
  } finally {
    if (before === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = before;
  }
  return logger;
}

describe('the in-memory store in production', () => {
  it('is one warning line per app (checkout and the service app both keep records in memory)', async () => {
    for (let app = 0; app < 2; app++) {
      const logger = await startupLines({ nodeEnv: 'production' });
      const warnings = logger.lines.filter((l) => WARNING.test(l.message));
      expect(warnings).toEqual([
        { level: 'warn', context: 'HubtelStore', message: MEMORY_STORE_PRODUCTION_WARNING },
      ]);
    }
  });

  it('is not mentioned outside production', async () => {
    for (const nodeEnv of [undefined, 'development']) {
      const logger = await startupLines({ nodeEnv });
      expect(logger.text()).not.toMatch(/HubtelStore|REDIS_URL/);
    }
  });
});

redisBinary.describe('the Redis store in production', () => {
  let redis: RedisDatabase;
  beforeAll(async () => {
    redis = await redisDatabase();
  });
  afterAll(() => redis?.dispose());

  it('logs no warning', async () => {
    const logger = await startupLines({ nodeEnv: 'production', redisUrl: redis.url });
    expect(logger.text()).not.toMatch(WARNING);
    expect(logger.lines.filter((l) => l.context === 'HubtelStore')).toEqual([]);
  });
});
