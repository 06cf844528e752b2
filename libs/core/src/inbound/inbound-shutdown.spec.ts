import { HttpException, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { HubtelStore } from '../store/hubtel-store.interface.js';
import { MemoryStore } from '../store/memory.store.js';
import { InboundPipeline } from './inbound-pipeline.js';
import { HubtelShuttingDownError, shuttingDownHttpError, shutdownLine } from './inbound-shutdown.js';

/** Keeps what the pipeline logs, by level. */
class CapturingLogger extends Logger {
  readonly lines: Array<[string, string]> = [];
  override log(message: unknown): void {
    this.lines.push(['log', String(message)]);
  }
  override warn(message: unknown): void {
    this.lines.push(['warn', String(message)]);
  }
  override error(message: unknown): void {
    this.lines.push(['error', String(message)]);
  }
  shutdownLines(): Array<[string, string]> {
    return this.lines.filter(([, text]) => text.startsWith('Shutdown of the'));
  }
}

/** A store that is not a MemoryStore (as Redis is not): the pipeline treats it as durable. */
function durable(inner: MemoryStore): HubtelStore {
  return {
    get: (key) => inner.get(key),
    setIfAbsent: (key, value, options) => inner.setIfAbsent(key, value, options),
    compareAndSet: (key, version, value, options) => inner.compareAndSet(key, version, value, options),
    set: (key, value, options) => inner.set(key, value, options),
    delete: (key) => inner.delete(key),
    scan: (prefix) => inner.scan(prefix),
  };
}

/** A pipeline whose `slow` job waits for `release()`, and whose `broken` job always fails. */
function setup(store: HubtelStore, graceMs: number) {
  const logger = new CapturingLogger();
  const effects: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const pipeline = new InboundPipeline({
    name: 'shop',
    store,
    emitter: new EventEmitter2(),
    deadLetterEvent: 'shop.dead',
    shutdownGraceMs: graceMs,
    // The retry of `broken` is far away: at shutdown it waits here, not yet due.
    retry: { maxAttempts: 5, baseDelayMs: 600_000, maxDelayMs: 600_000 },
    logger,
    random: () => 0.5,
  })
    .define('slow', {
      run: async (payload: { id: string }) => {
        started();
        await released;
        effects.push(`handled ${payload.id}`);
      },
    })
    .define('broken', {
      run: async () => {
        throw new Error('always');
      },
    });
  return { pipeline, logger, effects, release, running };
}

describe('pipeline shutdown', () => {
  it('refuses new inbound work from the first shutdown hook, lets the running job finish, and logs what is left', async () => {
    const store = new MemoryStore();
    const { pipeline, logger, effects, release, running } = setup(store, 60_000);
    await pipeline.submit('slow', 'a', { id: 'a' });
    await pipeline.submit('broken', 'b', {});
    await running;

    expect(() => pipeline.assertAcceptingInbound('checkout callback')).not.toThrow();
    pipeline.onModuleDestroy();
    expect(() => pipeline.assertAcceptingInbound('checkout callback')).toThrow(HubtelShuttingDownError);

    const shutdown = pipeline.beforeApplicationShutdown();
    setTimeout(release, 50);
    await shutdown;

    expect(effects).toEqual(['handled a']);
    expect((await pipeline.get('slow', 'a'))?.status).toBe('done');
    expect(logger.shutdownLines()).toEqual([
      [
        'warn',
        "Shutdown of the shop jobs: 1 job left pending (0 still running after the 60000 ms grace, 1 waiting to run or to retry) is kept in this process's memory store and LOST when it exits (keep it in Redis: HubtelRedisModule)",
      ],
    ]);
    store.close();
  });

  it('with a durable store: a job still running after the grace is said to be handed to another instance by BullMQ', async () => {
    const memory = new MemoryStore();
    const { pipeline, logger, release, running } = setup(durable(memory), 20);
    await pipeline.submit('slow', 'a', { id: 'a' });
    await pipeline.submit('broken', 'b', {});
    await running;
    // The broken job's first attempt has failed and waits for its retry.
    while ((await pipeline.get('broken', 'b'))?.attempts !== 1) await new Promise((r) => setTimeout(r, 5));

    pipeline.onModuleDestroy();
    await pipeline.beforeApplicationShutdown();
    release();

    // The retry waits on the runner (BullMQ's delayed set), not here: only the running job is said.
    expect(logger.shutdownLines()).toEqual([
      [
        'warn',
        'Shutdown of the shop jobs: 1 job still running after the 20 ms grace; BullMQ hands it to another instance or the next start, where only the handlers that did not finish run',
      ],
    ]);
    memory.close();
  });

  it('says so in one line when nothing is left', async () => {
    const store = new MemoryStore();
    const { pipeline, logger } = setup(store, 1_000);
    await pipeline.beforeApplicationShutdown();
    expect(logger.shutdownLines()).toEqual([
      ['log', 'Shutdown of the shop jobs: every job finished; nothing left pending'],
    ]);
    store.close();
  });

  it('counts dead letters a memory store loses', () => {
    expect(
      shutdownLine({ pipeline: 'x', graceMs: 5, running: 0, waiting: 0, dead: 2, durable: false }).text,
    ).toBe(
      "Shutdown of the x jobs: 0 jobs left pending (0 still running after the 5 ms grace, 0 waiting to run or to retry) and 2 dead letters are kept in this process's memory store and LOST when it exits (keep them in Redis: HubtelRedisModule)",
    );
  });

  it.each([
    ['Express', () => new ExpressLike()],
    ['Fastify', () => new FastifyLike()],
  ])('the 503 carries Retry-After and Connection: close (%s response)', (_, make) => {
    const response = make();
    const error = shuttingDownHttpError(response, new HubtelShuttingDownError('checkout callback'));
    expect(error).toBeInstanceOf(HttpException);
    expect(error.getStatus()).toBe(503);
    expect(error.getResponse()).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'HUBTEL_SHUTTING_DOWN',
      message: 'This instance is shutting down: the checkout callback was not recorded; send it again later',
    });
    expect(response.headers).toEqual({ 'Retry-After': '5', Connection: 'close' });
  });
});

class ExpressLike {
  headers: Record<string, string> = {};
  header(name: string, value: string): this {
    this.headers[name] = value;
    return this;
  }
}

class FastifyLike extends ExpressLike {}
