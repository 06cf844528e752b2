import { Injectable, Logger, Module, type INestApplicationContext } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { HubtelStoreUnavailableError } from '../errors/hubtel.errors.js';
import type { StoreEntry, StoreWriteOptions } from '../store/hubtel-store.interface.js';
import { MemoryStore } from '../store/memory.store.js';
import { createHandlerDecorator } from '../events/handler-decorator.js';
import { HandlerRegistry } from '../events/handler-registry.js';
import { requeueDeadLetter } from './inbound-dead-letters.js';
import { InProcessJobRunner, type JobRunRequest } from './job-runner.js';
import {
  DeadLetterEvent,
  InboundPipeline,
  JobRefusedError,
  type JobRecord,
  type JobRefusal,
} from './inbound-pipeline.js';

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

const FIRST = `Handlers.first@${PAID}`;
const SECOND = `Handlers.second@${PAID}`;

/** The registry a Nest app gives the pipeline (what CheckoutModule builds). */
function registryOf(app: INestApplicationContext): HandlerRegistry {
  return new HandlerRegistry({
    emitter: app.get(EventEmitter2),
    discovery: app.get(DiscoveryService),
    scanner: app.get(MetadataScanner),
    logger: quiet,
  });
}

const quiet = new Logger('test');
quiet.warn = () => undefined;
quiet.error = () => undefined;
quiet.log = () => undefined;

/** Resolves once `check` holds (bounded: 10 s). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (const giveUp = Date.now() + 10_000; !(await check());) {
    if (Date.now() > giveUp) throw new Error('still not so after 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A Nest app with the Handlers, and a pipeline on `store` (a MemoryStore a test may script). */
async function setup<S extends MemoryStore = MemoryStore>(store: S = new MemoryStore() as S) {
  const retry = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };
  const moduleRef = await Test.createTestingModule({ imports: [TestModule] }).compile();
  moduleRef.useLogger(false);
  const app = await moduleRef.createNestApplication({ logger: false }).init();
  const pipeline = new InboundPipeline({
    name: 'test',
    store,
    emitter: app.get(EventEmitter2),
    handlers: registryOf(app),
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
    expect(record).toMatchObject({ status: 'done', attempts: 1, doneHandlers: [FIRST, SECOND] });
    await app.close();
  });

  it('an alert is emitted, not recorded: drainAlerts waits for its listeners, a throwing one logged', async () => {
    const { app, pipeline } = await setup();
    const emitter = app.get(EventEmitter2);
    const heard: unknown[] = [];
    emitter.on('test.rejected', async (payload: unknown) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      heard.push(payload);
    });
    emitter.on('test.failing', async () => {
      throw new Error('listener broke');
    });
    emitter.on('test.sync', () => {
      throw new Error('broke at once');
    });
    const errors: string[] = [];
    quiet.error = (message: unknown) => void errors.push(`${message}`);
    pipeline.alert('test.rejected', { id: 'a1' });
    expect(heard).toEqual([]);
    await pipeline.drainAlerts();
    expect(heard).toEqual([{ id: 'a1' }]);
    expect(await pipeline.get('test.rejected', 'a1')).toBeUndefined();
    pipeline.alert('test.failing', {});
    await pipeline.drainAlerts();
    expect(errors).toEqual(['A test.failing listener failed: listener broke']);
    expect(() => pipeline.alert('test.sync', {})).not.toThrow(); // nor into the caller
    await pipeline.drainAlerts();
    expect(errors[1]).toBe('A test.sync listener failed: broke at once');
    quiet.error = () => undefined;
    await app.close();
  });

  it('a failing beforeSettled keeps the job pending past its attempts, its retries running neither gate nor handlers again; done once it passes', async () => {
    const { app, pipeline, handlers } = await setup();
    let failuresLeft = 5; // more than the 3 attempts
    const asked: number[] = [];
    const before: string[][] = [];
    const settled: string[] = [];
    pipeline.define<{ id: string }>(PAID, {
      gate: async (_payload, record) => void asked.push(record.attempts),
      beforeSettled: async (record, outcome) => {
        before.push([outcome, ...record.doneHandlers]);
        if (failuresLeft-- > 0) throw new Error('the follow-up could not be queued');
      },
      onSettled: (_record, outcome) => void settled.push(outcome),
    });
    handlers.failuresLeft.second = 1;
    await pipeline.submit(PAID, 'b1', { id: 'b1' });
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 2 });
    expect(asked).toEqual([0, 1]);
    expect(before).toEqual(Array.from({ length: 6 }, () => ['done', FIRST, SECOND]));
    expect(settled).toEqual(['done']);
    const record = await pipeline.get(PAID, 'b1');
    expect(record).toMatchObject({ status: 'done', attempts: 2 });
    expect(record).not.toHaveProperty('settling');
    expect(handlers.dead).toEqual([]);
    await app.close();
  });

  it('a failing beforeSettled of a job that gave up keeps it pending, handlers not run again, until it passes: then dead, one dead letter', async () => {
    const { app, pipeline, handlers } = await setup();
    let failuresLeft = 2;
    const before: string[] = [];
    const settled: string[] = [];
    pipeline.define<{ id: string }>(PAID, {
      beforeSettled: async (_record, outcome) => {
        before.push(outcome);
        if (failuresLeft-- > 0) throw new Error('the follow-up could not be queued');
      },
      onSettled: (_record, outcome) => void settled.push(outcome),
    });
    handlers.failuresLeft.first = 10;
    await pipeline.submit(PAID, 'b2', { id: 'b2' });
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 3 });
    expect(before).toEqual(['dead', 'dead', 'dead']);
    expect(settled).toEqual(['dead']);
    const record = await pipeline.get(PAID, 'b2');
    expect(record).toMatchObject({ status: 'dead', attempts: 3, lastError: 'first failed for b2' });
    expect(record).not.toHaveProperty('settling');
    expect(handlers.dead).toHaveLength(1);
    await app.close();
  });

  it('asks the gate before every run (first, retry, replay from the store or the method): a refusal runs nothing', async () => {
    const { app, store, pipeline, handlers } = await setup();
    let refusal: JobRefusal | undefined;
    const asked: number[] = [];
    const settled: unknown[] = [];
    pipeline.define<{ id: string }>(PAID, {
      gate: async (_payload, record) => {
        asked.push(record.attempts);
        return refusal;
      },
      onSettled: (_record, outcome, error) => void settled.push([outcome, error?.constructor.name]),
    });
    handlers.failuresLeft.first = 3; // dead after its 3 attempts
    await pipeline.submit(PAID, 'g1', { id: 'g1' });
    await pipeline.drain();
    expect(asked).toEqual([0, 1, 2]);
    expect((await pipeline.get(PAID, 'g1'))?.status).toBe('dead');
    const calls = { ...handlers.calls };

    refusal = { outcome: 'dead', reason: 'reported failed' };
    await expect(pipeline.replayDeadLetter(`${PAID}:g1`)).rejects.toBeInstanceOf(JobRefusedError);
    // A replay made on the store alone (the command line) is refused when a pipeline runs it.
    await requeueDeadLetter(store, 'test', `${PAID}:g1`, { ttlMs: 60_000, runner: pipeline.runner });
    await pipeline.drain();
    expect(handlers.calls).toEqual(calls);
    expect(await pipeline.get(PAID, 'g1')).toMatchObject({ status: 'dead', lastError: 'reported failed' });
    expect(settled.at(-1)).toEqual(['dead', 'JobRefusedError']);

    refusal = { outcome: 'done', reason: 'delivered under another key' };
    await pipeline.submit(PAID, 'g2', { id: 'g2' });
    await pipeline.drain();
    expect(handlers.calls).toEqual(calls);
    expect((await pipeline.get(PAID, 'g2'))?.status).toBe('done');
    expect(settled.at(-1)).toEqual(['done', 'JobRefusedError']);
    await app.close();
  });

  it('runs handlers once for 10 concurrent and later duplicates of the same key', async () => {
    const { app, pipeline, handlers } = await setup();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => pipeline.submit(PAID, 'dup', { id: 'dup' })),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    await pipeline.drain();
    expect((await pipeline.submit(PAID, 'dup', { id: 'dup' })).duplicate).toBe(true);
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 1 });
    await app.close();
  });

  it("a job recorded but never started (the sender got an error) is started by the sender's retry, once", async () => {
    const { app, store, pipeline, handlers } = await setup();
    // What a store that wrote the record and died before replying leaves: the record, no run, no mark.
    const at = Date.now();
    const orphan: JobRecord = {
      type: PAID,
      key: 'lost:paid',
      payload: { id: 'lost' },
      status: 'pending',
      attempts: 0,
      doneHandlers: [],
      receivedAt: at,
      updatedAt: at,
    };
    await store.setIfAbsent(`hubtel:test:job:${PAID}:lost:paid`, orphan);
    const retries = await Promise.all(
      Array.from({ length: 5 }, () => pipeline.submit(PAID, 'lost:paid', { id: 'lost' })),
    );
    expect(retries.every((r) => r.duplicate)).toBe(true);
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 1 });
    expect(await pipeline.get(PAID, 'lost:paid')).toMatchObject({ status: 'done', attempts: 1 });
    await app.close();
  });

  it('resend (a known key answered without a submit) starts a never-run job as a duplicate submit does, once; a done one or an unknown key runs nothing', async () => {
    const { app, store, pipeline, handlers } = await setup();
    const at = Date.now();
    const orphan: JobRecord = {
      type: PAID,
      key: 'known',
      payload: { id: 'known' },
      status: 'pending',
      attempts: 0,
      doneHandlers: [],
      receivedAt: at,
      updatedAt: at,
    };
    await store.setIfAbsent(`hubtel:test:job:${PAID}:known`, orphan);
    const resent = await Promise.all(Array.from({ length: 5 }, () => pipeline.resend(PAID, 'known')));
    expect(resent).toEqual(Array.from({ length: 5 }, () => expect.objectContaining({ key: 'known' })));
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 1 });
    expect(await pipeline.resend(PAID, 'known')).toMatchObject({ status: 'done', attempts: 1 });
    expect(await pipeline.resend(PAID, 'never-sent')).toBeUndefined();
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 1 });
    await expect(pipeline.resend('test.unknown', 'known')).rejects.toMatchObject({
      code: 'HUBTEL_CONFIG_INVALID',
    });
    await app.close();
  });

  it('waits out a store outage to record the outcome of handlers that ran: they never run again', async () => {
    /** Down for the three writes after the first handler's progress: the outcome cannot be written at first. */
    class FlakyStore extends MemoryStore {
      writes = 0;
      override async compareAndSet<T>(
        key: string,
        version: number,
        value: T,
        options?: StoreWriteOptions,
      ): Promise<StoreEntry<T> | undefined> {
        this.writes++;
        if (this.writes >= 2 && this.writes <= 4) throw new HubtelStoreUnavailableError('store down');
        return super.compareAndSet(key, version, value, options);
      }
    }
    const { app, store, pipeline: flaky, handlers } = await setup(new FlakyStore());
    await flaky.submit(PAID, 'outage', { id: 'outage' });
    await flaky.drain();
    expect(store.writes).toBe(5);
    expect(await flaky.get(PAID, 'outage')).toMatchObject({ status: 'done', attempts: 1 });
    expect(handlers.calls).toMatchObject({ first: 1, second: 1 });
    // The sender's retry finds it done: nothing runs again.
    expect((await flaky.submit(PAID, 'outage', { id: 'outage' })).duplicate).toBe(true);
    await flaky.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 1 });
    await app.close();
  });

  it('a store outage inside a run is no attempt of the job: tried again until the store answers, never dead-lettered for it', async () => {
    const { app, store, handlers } = await setup();
    const jobs = new InboundPipeline({
      name: 'outage',
      store,
      emitter: app.get(EventEmitter2),
      deadLetterEvent: DEAD,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      logger: quiet,
    });
    let runs = 0;
    // A Cluster master away: the run's own store reads fail more times than the job has attempts.
    jobs.define<string>('confirm', {
      run: async () => {
        if (++runs <= 3) throw new HubtelStoreUnavailableError('Redis store get failed: CLUSTERDOWN');
      },
    });
    await jobs.submit('confirm', 'c1', 'payload');
    await eventually(async () => (await jobs.get('confirm', 'c1'))?.status === 'done');
    expect(await jobs.get('confirm', 'c1')).toMatchObject({ status: 'done', attempts: 1 });
    expect(runs).toBe(4);
    expect(handlers.dead).toHaveLength(0);
    await app.close();
  }, 15_000);

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
    const { app, handlers } = await setup();
    let clock = 0;
    const timed = new InboundPipeline({
      name: 'timed',
      store: new MemoryStore(),
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

  it('compactWhenDone: a done record keeps only what recognises its key; duplicates stay duplicates; dead ones keep all', async () => {
    const { app, pipeline, handlers } = await setup();
    const settled: JobRecord[] = [];
    const seenByCompact: JobRecord[] = [];
    pipeline.define<{ id: string; big: string }>(PAID, {
      compactWhenDone: (payload, record) => {
        seenByCompact.push(record);
        return { id: payload.id };
      },
      onSettled: (record) => void settled.push(record),
    });
    await pipeline.submit(PAID, 'small', { id: 'small', big: 'x'.repeat(1000) });
    await pipeline.drain();
    const stored = await pipeline.get(PAID, 'small');
    expect(stored).toEqual({
      type: PAID,
      key: 'small',
      payload: { id: 'small' },
      status: 'done',
      attempts: 1,
      doneHandlers: [],
      receivedAt: expect.any(Number),
      updatedAt: expect.any(Number),
      compacted: true,
    });
    // The hook still got the whole record, and so did compactWhenDone (to summarise results).
    expect(settled[0]).toMatchObject({ payload: { big: 'x'.repeat(1000) }, doneHandlers: [FIRST, SECOND] });
    expect(seenByCompact[0]).toMatchObject({ status: 'done', attempts: 1, doneHandlers: [FIRST, SECOND] });
    // Sequential and concurrent duplicates are still recognised, and run nothing.
    const again = await Promise.all(
      [1, 2, 3].map(() => pipeline.submit(PAID, 'small', { id: 'small', big: '' })),
    );
    expect(again.every((r) => r.duplicate)).toBe(true);
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 1 });

    handlers.failuresLeft.first = 99;
    await pipeline.submit(PAID, 'gave-up', { id: 'gave-up', big: 'kept' });
    await pipeline.drain();
    expect(await pipeline.get(PAID, 'gave-up')).toMatchObject({
      status: 'dead',
      payload: { id: 'gave-up', big: 'kept' },
      doneHandlers: [SECOND],
    });
    expect((await pipeline.get(PAID, 'gave-up'))?.compacted).toBeUndefined();
    await app.close();
  });

  it('starts jobs submitted in one tick in order, after the caller could acknowledge; drain waits for queued ones', async () => {
    const { app, pipeline } = await setup();
    const order: string[] = [];
    pipeline.define<string>('ordered', { run: async (payload) => void order.push(payload) });
    const keys = Array.from({ length: 25 }, (_, i) => `k${i}`);
    await Promise.all(keys.map((key) => pipeline.submit('ordered', key, key)));
    expect(order).toEqual([]);
    await pipeline.drain();
    expect(order).toEqual(keys);
    await app.close();
  });

  it('a run that another run of the same job settled first (a runner delivered it twice) fires no hook, event or signal of its own', async () => {
    const store = new MemoryStore();
    const emitter = new EventEmitter2();
    const deadLetters: DeadLetterEvent[] = [];
    emitter.on(DEAD, (event: DeadLetterEvent) => void deadLetters.push(event));
    const settled: string[] = [];
    const signals: string[] = [];
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const instance = (name: 'a' | 'b') =>
      new InboundPipeline({
        name: 'race',
        store,
        emitter,
        deadLetterEvent: DEAD,
        logger: quiet,
        retry: { maxAttempts: 1 },
        telemetry: { record: (signal) => void signals.push(`${name}:${signal.kind}`) },
      }).define('race', {
        run: async () => {
          if (name === 'b') return;
          await slow;
          throw new Error('a failed late');
        },
        onSettled: (_record, outcome) => void settled.push(`${name}:${outcome}`),
      });
    const a = instance('a');
    const b = instance('b');
    await a.submit('race', 'k', {});
    // The same run delivered to b too, while a's is still under way: b settles it first.
    await b.runner.enqueue('race', { storeKey: 'hubtel:race:job:race:k', type: 'race', run: 1 });
    await b.drain();
    expect(await b.get('race', 'k')).toMatchObject({ status: 'done' });
    release();
    await a.drain();
    expect(await a.get('race', 'k')).toMatchObject({ status: 'done', attempts: 1 });
    expect(settled).toEqual(['b:done']);
    expect(deadLetters).toEqual([]);
    expect(signals).toEqual(['b:job']);
    store.close();
  });

  it("gateRead starts with the record's read (one round trip for both) and is given to the gate; a type with ':' is refused", async () => {
    const reads: string[] = [];
    class NotingStore extends MemoryStore {
      override async get<T>(key: string): Promise<StoreEntry<T> | undefined> {
        reads.push(key);
        return super.get<T>(key);
      }
    }
    const { app, store, pipeline } = await setup(new NotingStore());
    await store.set('other:g1', 'reported');
    const given: unknown[] = [];
    pipeline.define<{ id: string }>(PAID, {
      gateRead: (key) => store.get(`other:${key}`),
      gate: async (_payload, _record, read) => void given.push((await read) as unknown),
    });
    await pipeline.submit(PAID, 'g1', { id: 'g1' });
    await pipeline.drain();
    expect(reads.slice(0, 2)).toEqual(['other:g1', expect.stringContaining(`${PAID}:g1`)]);
    expect(given).toEqual([{ value: 'reported', version: 1 }]);
    expect(() => pipeline.define('a:b')).toThrow(expect.objectContaining({ code: 'HUBTEL_CONFIG_INVALID' }));
    await app.close();
  });

  it('rejects unknown job types with a typed error', async () => {
    const { app, pipeline } = await setup();
    await expect(pipeline.submit('nope', 'k', {})).rejects.toMatchObject({ code: 'HUBTEL_CONFIG_INVALID' });
    await app.close();
  });
});

describe('InboundPipeline: follow-ups (a job submitted by a settling run, run right after it)', () => {
  const FOLLOW = 'test.follow';

  /** The in-process runner, noting what it is asked to run (the tests' own runner interface). */
  class NotingRunner extends InProcessJobRunner {
    asked: JobRunRequest[] = [];
    override async enqueue(pipeline: string, request: JobRunRequest): Promise<void> {
      this.asked.push(request);
      return super.enqueue(pipeline, request);
    }
  }

  async function withRunner() {
    const runner = new NotingRunner();
    const moduleRef = await Test.createTestingModule({ imports: [TestModule] }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    const store = new MemoryStore();
    const pipeline = new InboundPipeline({
      name: 'test',
      store,
      emitter: app.get(EventEmitter2),
      handlers: registryOf(app),
      deadLetterEvent: DEAD,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      logger: quiet,
      runner,
      // Full jitter at its ceiling: a retry's delay is never 0 (rounded), which the tests tell apart.
      random: () => 1,
    });
    return { app, store, pipeline, runner };
  }

  it("beforeSettled's follow-up runs here once the job is settled, without being queued; a first attempt that fails is queued with its retry delay", async () => {
    const { app, pipeline, runner } = await withRunner();
    const runs: Array<{ attempt: number; parent: string | undefined }> = [];
    let failures = 1;
    pipeline.define<Record<string, never>>(FOLLOW, {
      run: async (_payload, { attempt }) => {
        runs.push({ attempt, parent: (await pipeline.get(PAID, 'f1'))?.status });
        if (failures-- > 0) throw new Error('the platform is down');
      },
      retry: { maxAttempts: 5, baseDelayMs: 40, maxDelayMs: 40 },
    });
    pipeline.define<{ id: string }>(PAID, {
      beforeSettled: async (record, _outcome, followUps) => {
        await followUps.submit(FOLLOW, record.key, {});
      },
    });
    await pipeline.submit(PAID, 'f1', { id: 'f1' });
    await pipeline.drain();
    // After the job it follows was settled; the retry from the runner, after its delay.
    expect(runs).toEqual([
      { attempt: 1, parent: 'done' },
      { attempt: 2, parent: 'done' },
    ]);
    expect(runner.asked.map((r) => r.type)).toEqual([PAID, FOLLOW]);
    expect(runner.asked[1]!.delayMs).toBeGreaterThan(0);
    expect(await pipeline.get(PAID, 'f1')).toMatchObject({
      status: 'done',
      then: [expect.stringContaining(`${FOLLOW}:f1`)],
    });
    expect(await pipeline.get(FOLLOW, 'f1')).toMatchObject({ status: 'done', attempts: 2 });
    await app.close();
  });

  it('a settled job whose follow-up never ran (its process died between) asks for it when it is run again', async () => {
    const { app, store, pipeline, runner } = await withRunner();
    const followed: string[] = [];
    pipeline.define<string>(FOLLOW, { run: async (payload) => void followed.push(payload) });
    pipeline.define(PAID);
    // What the process left: the job settled naming its follow-up, the follow-up recorded, never run.
    const prefix = 'hubtel:test:job:';
    const at = Date.now();
    const base = {
      status: 'pending' as const,
      attempts: 0,
      doneHandlers: [] as string[],
      receivedAt: at,
      updatedAt: at,
    };
    await store.setIfAbsent<JobRecord>(`${prefix}${FOLLOW}:k1`, {
      ...base,
      type: FOLLOW,
      key: 'k1',
      payload: 'k1',
    });
    await store.setIfAbsent<JobRecord>(`${prefix}${PAID}:k1`, {
      ...base,
      type: PAID,
      key: 'k1',
      payload: { id: 'k1' },
      status: 'done',
      attempts: 1,
      then: [`${prefix}${FOLLOW}:k1`],
    });
    // Its runner runs it again (BullMQ: the job found stalled).
    await runner.enqueue('test', { storeKey: `${prefix}${PAID}:k1`, type: PAID, run: 1 });
    await pipeline.drain();
    expect(followed).toEqual(['k1']);
    expect(await pipeline.get(FOLLOW, 'k1')).toMatchObject({ status: 'done', attempts: 1 });
    await app.close();
  });
});

describe('InboundPipeline: events, requireListener, keepResults', () => {
  const SPECIFIC = 'test.order:711';
  const CATCH_ALL = 'test.order';
  const OnSpecific = createHandlerDecorator(SPECIFIC);
  const OnCatchAll = createHandlerDecorator(CATCH_ALL);

  @Injectable()
  class OrderHandlers {
    calls: string[] = [];
    failSpecific = 0;

    @OnSpecific()
    async specific(payload: { id: string }): Promise<unknown> {
      this.calls.push(`specific:${payload.id}`);
      if (this.failSpecific > 0) {
        this.failSpecific--;
        throw new Error('specific failed');
      }
      return { delivered: payload.id };
    }

    @OnCatchAll()
    async catchAll(payload: { id: string }): Promise<void> {
      this.calls.push(`all:${payload.id}`);
    }
  }

  @Module({ imports: [EventEmitterModule.forRoot()], providers: [OrderHandlers] })
  class OrderModule {}

  async function orderSetup() {
    const moduleRef = await Test.createTestingModule({ imports: [OrderModule] }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    const pipeline = new InboundPipeline({
      name: 'orders',
      store: new MemoryStore(),
      emitter: app.get(EventEmitter2),
      handlers: registryOf(app),
      deadLetterEvent: DEAD,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      logger: quiet,
    });
    return { app, pipeline, handlers: app.get(OrderHandlers) };
  }

  it('dispatches to the events named by the definition, in order, and keeps listener results across retries', async () => {
    const { app, pipeline, handlers } = await orderSetup();
    const settled: JobRecord[] = [];
    pipeline.define<{ id: string; code?: string }>('order', {
      events: (p) => (p.code ? [`${CATCH_ALL}:${p.code}`, CATCH_ALL] : [CATCH_ALL]),
      keepResults: true,
      onSettled: (record) => void settled.push(record),
    });
    handlers.failSpecific = 1;
    await pipeline.submit('order', 'o1', { id: 'o1', code: '711' });
    await pipeline.submit('order', 'o2', { id: 'o2' });
    await pipeline.drain();
    // o1: specific failed once then succeeded; the catch-all ran exactly once.
    expect(handlers.calls.filter((c) => c.endsWith(':o1'))).toEqual(['specific:o1', 'all:o1', 'specific:o1']);
    expect(handlers.calls.filter((c) => c.endsWith(':o2'))).toEqual(['all:o2']);
    const o1 = settled.find((r) => r.key === 'o1');
    expect(o1).toMatchObject({
      status: 'done',
      attempts: 2,
      doneHandlers: [`OrderHandlers.specific@${SPECIFIC}`, `OrderHandlers.catchAll@${CATCH_ALL}`],
      results: { [`OrderHandlers.specific@${SPECIFIC}`]: { delivered: 'o1' } },
    });
    expect(settled.find((r) => r.key === 'o2')?.results).toEqual({});
    await app.close();
  });

  it('does not keep results unless asked', async () => {
    const { app, pipeline } = await orderSetup();
    pipeline.define<{ id: string }>('order', { events: () => [SPECIFIC] });
    await pipeline.submit('order', 'o3', { id: 'o3' });
    await pipeline.drain();
    const record = await pipeline.get('order', 'o3');
    expect(record?.status).toBe('done');
    expect(record?.results).toBeUndefined();
    await app.close();
  });

  it('with requireListener, a job nobody listens to is retried then dead-lettered, not counted done', async () => {
    const { app, pipeline } = await orderSetup();
    const outcomes: string[] = [];
    pipeline.define('lonely', {
      requireListener: true,
      onSettled: (_r, outcome) => void outcomes.push(outcome),
    });
    pipeline.define('lonely-ok', { onSettled: (_r, outcome) => void outcomes.push(outcome) });
    await pipeline.submit('lonely', 'x', {});
    await pipeline.submit('lonely-ok', 'y', {});
    await pipeline.drain();
    expect(await pipeline.get('lonely', 'x')).toMatchObject({
      status: 'dead',
      attempts: 3,
      lastError: 'No handler is listening to "lonely"',
    });
    expect(await pipeline.get('lonely-ok', 'y')).toMatchObject({ status: 'done', attempts: 1 });
    expect(outcomes.sort()).toEqual(['dead', 'done']);
    await app.close();
  });
});

describe('InboundPipeline: a job of a type this deploy does not know', () => {
  it('is left pending for an instance that knows it: not run, not dead-lettered, no error', async () => {
    const store = new MemoryStore();
    const emitter = new EventEmitter2();
    const deadLetters: DeadLetterEvent[] = [];
    emitter.on(DEAD, (event: DeadLetterEvent) => void deadLetters.push(event));
    const errors: string[] = [];
    const logger = new Logger('test');
    logger.log = () => undefined;
    logger.warn = () => undefined;
    logger.error = (message: string) => void errors.push(message);
    const refunded: string[] = [];
    /** An instance of a deploy: the newer one knows `refund`, the older one does not. */
    const instance = (knowsRefund: boolean) => {
      const pipeline = new InboundPipeline({ name: 'deploy', store, emitter, deadLetterEvent: DEAD, logger });
      pipeline.define('ship', { run: async () => undefined });
      if (knowsRefund)
        pipeline.define('refund', { run: async (payload: { id: string }) => void refunded.push(payload.id) });
      return pipeline;
    };
    const storeKey = 'hubtel:deploy:job:refund:r1';
    // The newer deploy records the job and stops before running it (a rolling deploy rolled back).
    const newer = instance(true);
    await newer.submit('refund', 'r1', { id: 'r1' });
    await newer.runner.stop('deploy');
    expect(refunded).toEqual([]);

    const older = instance(false);
    const ran = new Promise<void>((resolve) => {
      const read = store.get.bind(store);
      store.get = async <T>(key: string) => {
        const entry = await read<T>(key);
        if (key === storeKey) setImmediate(resolve);
        return entry;
      };
    });
    await older.runner.enqueue('deploy', { storeKey, type: 'refund', run: 1 });
    await ran;
    expect(await older.get('refund', 'r1')).toMatchObject({ status: 'pending', attempts: 0 });
    expect(deadLetters).toEqual([]);
    expect(errors).toEqual([]);
    // Still held by the runner, to be asked again later (a BullMQ retry: maybe on another instance).
    const idle = older.runner.drain!('deploy').then(() => 'idle');
    const now = new Promise((resolve) => setImmediate(() => resolve('held')));
    expect(await Promise.race([idle, now])).toBe('held');
    await older.runner.stop('deploy');

    const again = instance(true);
    await again.runner.enqueue('deploy', { storeKey, type: 'refund', run: 1 });
    await again.drain();
    expect(refunded).toEqual(['r1']);
    expect(await again.get('refund', 'r1')).toMatchObject({ status: 'done', attempts: 1 });
    store.close();
  });
});

describe('InboundPipeline: code of the app that throws while a job settles', () => {
  it('a throwing dead-letter listener and onSettled hook are logged (numbers masked); the job is dead once, the pipeline goes on', async () => {
    const emitter = new EventEmitter2();
    const deadLetters: DeadLetterEvent[] = [];
    emitter.on(DEAD, (event: DeadLetterEvent) => {
      deadLetters.push(event);
      throw new Error('pager down');
    });
    const errors: string[] = [];
    const logger = new Logger('test');
    logger.log = () => undefined;
    logger.warn = () => undefined;
    logger.error = (message: string) => void errors.push(message);
    const settled: string[] = [];
    const pipeline = new InboundPipeline({
      name: 'hooks',
      store: new MemoryStore(),
      emitter,
      deadLetterEvent: DEAD,
      logger,
      retry: { maxAttempts: 1 },
    }).define<{ fail: boolean }>('notify', {
      run: async ({ fail }) => {
        if (fail) throw new Error('sms refused');
      },
      onSettled: (record, outcome) => {
        settled.push(`${record.key}:${outcome}`);
        throw new Error('audit log down');
      },
    });
    await pipeline.submit('notify', '0241234567', { fail: true });
    await pipeline.drain();
    expect(await pipeline.get('notify', '0241234567')).toMatchObject({ status: 'dead', attempts: 1 });
    expect(deadLetters).toHaveLength(1);
    expect(settled).toEqual(['0241234567:dead']);
    expect(errors).toEqual([
      'Job notify 024****567 gave up after 1 attempt(s): sms refused (dead-lettered)',
      'A test.dead-letter listener failed: pager down',
      'After-job hook of notify 024****567 failed: audit log down',
    ]);

    await pipeline.submit('notify', 'k2', { fail: false });
    await pipeline.drain();
    expect(await pipeline.get('notify', 'k2')).toMatchObject({ status: 'done', attempts: 1 });
    expect(settled).toEqual(['0241234567:dead', 'k2:done']);
    expect(deadLetters).toHaveLength(1);
  });
});

describe('InboundPipeline: a deploy that removed a handler', () => {
  /** A deploy whose only handler of PAID is `Handlers.second` (first removed), failing still. */
  @Injectable()
  class Handlers {
    calls = 0;
    @OnPaid()
    async second(): Promise<void> {
      this.calls++;
      throw new Error('second failed');
    }
  }
  @Module({ imports: [EventEmitterModule.forRoot()], providers: [Handlers] })
  class WithoutFirstModule {}

  it('keeps the removed handler remembered as done: rolled back, it does not run again', async () => {
    const { app, store, pipeline, handlers } = await setup();
    handlers.failuresLeft.second = 99;
    await pipeline.submit(PAID, 'k', { id: 'k' });
    await pipeline.drain();
    expect(await pipeline.get(PAID, 'k')).toMatchObject({ status: 'dead', doneHandlers: [FIRST] });

    const moduleRef = await Test.createTestingModule({ imports: [WithoutFirstModule] }).compile();
    const without = await moduleRef.createNestApplication({ logger: false }).init();
    const next = new InboundPipeline({
      name: 'test',
      store,
      emitter: without.get(EventEmitter2),
      handlers: registryOf(without),
      deadLetterEvent: DEAD,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      logger: quiet,
    }).define(PAID);
    await next.replayDeadLetter(`${PAID}:k`);
    await next.drain();
    expect(without.get(Handlers).calls).toBe(1);
    expect(await next.get(PAID, 'k')).toMatchObject({ status: 'dead', doneHandlers: [FIRST] });
    await without.close();

    // Rolled back: first is back, and already ran for this job.
    handlers.failuresLeft.second = 0;
    await pipeline.replayDeadLetter(`${PAID}:k`);
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 1, second: 4 });
    expect(await pipeline.get(PAID, 'k')).toMatchObject({ status: 'done', doneHandlers: [FIRST, SECOND] });
    await app.close();
  });
});

describe('InboundPipeline: what a record says succeeded', () => {
  it('never forgets a handler that succeeded, at any write (a crash between two writes reruns none)', async () => {
    /** Every record written for the job, as written: the process may die after any of them. */
    class NotingStore extends MemoryStore {
      written: string[][] = [];
      override async compareAndSet<T>(
        key: string,
        version: number,
        value: T,
        options?: StoreWriteOptions,
      ): Promise<StoreEntry<T> | undefined> {
        if (key.endsWith(`${PAID}:k`)) this.written.push([...(value as JobRecord).doneHandlers]);
        return super.compareAndSet(key, version, value, options);
      }
    }
    const { app, store, pipeline, handlers } = await setup(new NotingStore());
    handlers.failuresLeft.first = 1; // the first attempt: first fails, second succeeds
    await pipeline.submit(PAID, 'k', { id: 'k' });
    await pipeline.drain();
    expect(handlers.calls).toMatchObject({ first: 2, second: 1 });
    expect(await pipeline.get(PAID, 'k')).toMatchObject({ status: 'done', attempts: 2 });
    expect(store.written.length).toBeGreaterThanOrEqual(2);
    // Each write keeps what the one before it said succeeded.
    for (let i = 1; i < store.written.length; i++)
      expect(store.written[i]).toEqual(expect.arrayContaining(store.written[i - 1]!));
    await app.close();
  });
});
