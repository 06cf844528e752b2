import { Injectable, Logger, Module } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { MemoryStore } from '../store/memory.store.js';
import { createHandlerDecorator } from '../events/handler-decorator.js';
import { DeadLetterEvent, InboundPipeline, type JobRecord } from './inbound-pipeline.js';

const PAID = 'test.paid';
const DEAD = 'test.dead-letter';
const OnPaid = createHandlerDecorator(PAID);

/** Handlers the tests script: each counts its calls and fails while `failuresLeft` > 0. */
@Injectable()
class Handlers {
  calls: Record<string, number> = { first: 0, second: 0, plain: 0 };
  failuresLeft: Record<string, number> = { first: 0, second: 0 };
  dead: DeadLetterEvent[] = [];

  @OnPaid()
  async first(payload: { id: string }): Promise<void> {
    this.calls.first!++;
    if (this.failuresLeft.first! > 0) {
      this.failuresLeft.first!--;
      throw new Error(`first failed for ${payload.id}`);
    }
  }

  @OnPaid()
  async second(): Promise<void> {
    this.calls.second!++;
    if (this.failuresLeft.second! > 0) {
      this.failuresLeft.second!--;
      throw new Error('second failed');
    }
  }

  @OnEvent(DEAD)
  onDead(event: DeadLetterEvent): void {
    this.dead.push(event);
  }
}

@Module({ imports: [EventEmitterModule.forRoot()], providers: [Handlers] })
class TestModule {}

const quiet = new Logger('test');
quiet.warn = () => undefined;
quiet.error = () => undefined;
quiet.log = () => undefined;

async function setup(retry = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 }) {
  const moduleRef = await Test.createTestingModule({ imports: [TestModule] }).compile();
  moduleRef.useLogger(false);
  const app = await moduleRef.createNestApplication({ logger: false }).init();
  const store = new MemoryStore({ sweepIntervalMs: 0 });
  const pipeline = new InboundPipeline({
    name: 'test',
    store,
    emitter: app.get(EventEmitter2),
    deadLetterEvent: DEAD,
    retry,
    logger: quiet,
  }).define(PAID);
  return { app, store, pipeline, handlers: app.get(Handlers) };
}

describe('InboundPipeline', () => {
  it('records a job before resolving and runs every listener once', async () => {
    const { app, pipeline, handlers } = await setup();
    const result = await pipeline.submit(PAID, 'c1:paid', { id: 'c1' });
    expect(result.duplicate).toBe(false);
    expect((await pipeline.get(PAID, 'c1:paid'))?.status).toBe('pending');
    expect(handlers.calls.first).toBe(0); // not run before the caller could acknowledge
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 1 });
    const record = await pipeline.get<{ id: string }>(PAID, 'c1:paid');
    expect(record).toMatchObject({ status: 'done', attempts: 1, doneListeners: [0, 1] });
    await app.close();
  });

  it('runs handlers once for 10 concurrent and later duplicates of the same key', async () => {
    const { app, pipeline, handlers } = await setup();
    const results = await Promise.all(Array.from({ length: 10 }, () => pipeline.submit(PAID, 'dup', { id: 'dup' })));
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    await pipeline.drain();
    expect((await pipeline.submit(PAID, 'dup', { id: 'dup' })).duplicate).toBe(true);
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 1 });
    await app.close();
  });

  it('retries only the listener that failed, then marks the job done', async () => {
    const { app, pipeline, handlers } = await setup();
    handlers.failuresLeft.second = 2;
    await pipeline.submit(PAID, 'retry', { id: 'retry' });
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 3 });
    expect(await pipeline.get(PAID, 'retry')).toMatchObject({ status: 'done', attempts: 3 });
    expect(handlers.dead).toHaveLength(0);
    await app.close();
  });

  it('dead-letters a job whose handler keeps failing, without crashing', async () => {
    const { app, pipeline, handlers } = await setup();
    handlers.failuresLeft.first = 99;
    const settled: string[] = [];
    pipeline.define(PAID, { onSettled: (_record, outcome) => void settled.push(outcome) });
    await pipeline.submit(PAID, 'dead', { id: 'dead' });
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 3, second: 1 });
    expect(handlers.dead).toHaveLength(1);
    expect(handlers.dead[0]).toMatchObject({ type: PAID, key: 'dead', attempts: 3, payload: { id: 'dead' } });
    expect(handlers.dead[0]!.error).toContain('first failed for dead');
    expect(settled).toEqual(['dead']);
    const record = await pipeline.get<{ id: string }>(PAID, 'dead');
    expect(record).toMatchObject({ status: 'dead', lastError: 'first failed for dead' });
    await app.close();
  });

  it('runs custom jobs until a deadline, then gives up', async () => {
    const { app, pipeline, handlers } = await setup();
    let clock = 0;
    const timed = new InboundPipeline({
      name: 'timed',
      store: new MemoryStore({ sweepIntervalMs: 0 }),
      emitter: app.get(EventEmitter2),
      deadLetterEvent: DEAD,
      logger: quiet,
      now: () => clock,
    });
    let runs = 0;
    timed.define<string>('send', {
      retry: { maxAttempts: Infinity, baseDelayMs: 1, maxDelayMs: 1, deadlineMs: 1_000 },
      run: async () => {
        runs++;
        clock += 300;
        throw new Error('platform 503');
      },
    });
    await timed.submit('send', 'order-1', 'payload');
    await timed.drain();
    expect(runs).toBe(4); // 300, 600, 900, 1200 ms: the fourth run passes the deadline
    expect(handlers.dead.map((d) => d.type)).toEqual(['send']);
    await app.close();
  });

  it('recovers pending jobs left in a persistent store by a crashed process', async () => {
    const { app, store, pipeline, handlers } = await setup();
    const stale: JobRecord<{ id: string }> = {
      type: PAID,
      key: 'left',
      payload: { id: 'left' },
      status: 'running',
      attempts: 1,
      doneListeners: [0],
      receivedAt: Date.now() - 60_000,
      updatedAt: Date.now() - 60_000,
      leaseUntil: Date.now() - 1,
    };
    await store.set(`hubtel:test:job:${PAID}:left`, stale);
    expect(await pipeline.recover()).toBe(1);
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 0, second: 1 }); // first had already succeeded
    expect(await pipeline.get(PAID, 'left')).toMatchObject({ status: 'done', attempts: 2 });
    await app.close();
  });

  it('rejects unknown job types with a typed error', async () => {
    const { app, pipeline } = await setup();
    await expect(pipeline.submit('nope', 'k', {})).rejects.toMatchObject({ code: 'HUBTEL_CONFIG_INVALID' });
    await app.close();
  });
});
