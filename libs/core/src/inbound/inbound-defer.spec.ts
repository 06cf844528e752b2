import { Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { HubtelStore, StoreEntry, StoreWriteOptions } from '../store/hubtel-store.interface.js';
import { MemoryStore } from '../store/memory.store.js';
import {
  InboundPipeline,
  type InboundPipelineOptions,
  type JobRecord,
  type JobRunContext,
} from './inbound-pipeline.js';

/**
 * Deferred jobs (inbound-defer.ts): a run that defers itself is recorded as such and run again at
 * its time, by this pipeline or, should its process die, by another on the same store; a duplicate
 * wakes it from any instance, and the run asked before becomes a no-op.
 */

const CHECK = 'test.check';
const quiet = new Logger('test');
quiet.warn = () => undefined;
quiet.error = () => undefined;
quiet.log = () => undefined;

interface Order {
  id: string;
  from: string;
}

/**
 * A job that checks something: it defers itself until `paid` (or its `payOnRun`th run); once paid,
 * it reports the latest duplicate that came during the run, if any (`woken`).
 */
class Checker {
  runs: Array<{ by: string; from: string; state: unknown; attempt: number }> = [];
  paid = false;
  payOnRun = Infinity;
  /** While set, a run waits for it (a check under way). */
  gate: Promise<void> | undefined;
  woken: unknown[] = [];

  constructor(private readonly delayMs: number) {}

  define(pipeline: InboundPipeline, by: string): InboundPipeline {
    return pipeline.define<Order>(CHECK, {
      wakeOnDuplicate: true,
      retry: { maxAttempts: 1 },
      run: async (order, context: JobRunContext<Order>) => {
        this.runs.push({ by, from: order.from, state: context.record.state, attempt: context.attempt });
        if (this.gate) await this.gate;
        if (this.paid || this.runs.length >= this.payOnRun) {
          const late = await context.takeWake();
          if (late !== undefined) this.woken.push(late);
          return;
        }
        const checks = ((context.record.state as { checks?: number } | undefined)?.checks ?? 0) + 1;
        return context.defer(Date.now() + this.delayMs, { checks });
      },
    });
  }
}

function pipelineOn(store: HubtelStore, extra: Partial<InboundPipelineOptions> = {}): InboundPipeline {
  return new InboundPipeline({
    name: 'defer',
    store,
    emitter: new EventEmitter2(),
    deadLetterEvent: 'test.dead',
    logger: quiet,
    sweepIntervalMs: 0,
    shutdownGraceMs: 10,
    ...extra,
  });
}

const STORE_KEY = `hubtel:defer:job:${CHECK}:`;

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`Still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A store that dies with its process: once `crash()`ed, nothing it is asked ever answers. */
class CrashableStore implements HubtelStore {
  private crashed = false;
  constructor(private readonly inner: MemoryStore) {}
  crash(): void {
    this.crashed = true;
  }
  private live<T>(work: () => Promise<T>): Promise<T> {
    return this.crashed ? new Promise<T>(() => undefined) : work();
  }
  get<T>(key: string): Promise<StoreEntry<T> | undefined> {
    return this.live(() => this.inner.get<T>(key));
  }
  setIfAbsent<T>(key: string, value: T, options?: StoreWriteOptions): Promise<boolean> {
    return this.live(() => this.inner.setIfAbsent(key, value, options));
  }
  compareAndSet<T>(key: string, version: number, value: T, options?: StoreWriteOptions) {
    return this.live(() => this.inner.compareAndSet(key, version, value, options));
  }
  set<T>(key: string, value: T, options?: StoreWriteOptions): Promise<StoreEntry<T>> {
    return this.live(() => this.inner.set(key, value, options));
  }
  delete(key: string): Promise<boolean> {
    return this.live(() => this.inner.delete(key));
  }
  scan<T>(prefix: string): AsyncIterable<[string, StoreEntry<T>]> {
    return this.inner.scan<T>(prefix);
  }
}

describe('InboundPipeline deferred jobs', () => {
  const stores: MemoryStore[] = [];
  const pipelines: InboundPipeline[] = [];
  function memory(): MemoryStore {
    const store = new MemoryStore({ sweepIntervalMs: 0 });
    stores.push(store);
    return store;
  }
  function track(pipeline: InboundPipeline): InboundPipeline {
    pipelines.push(pipeline);
    return pipeline;
  }
  afterEach(async () => {
    for (const pipeline of pipelines.splice(0)) await pipeline.beforeApplicationShutdown();
    for (const store of stores.splice(0)) store.close();
  });

  it('records a deferral durably (not an attempt: the retry policy does not count it) and runs the job again at its time', async () => {
    const checker = new Checker(30);
    checker.payOnRun = 3;
    const pipeline = track(checker.define(pipelineOn(memory()), 'a'));
    await pipeline.submit(CHECK, 'o1', { id: 'o1', from: 'first' });
    await until(async () => (await pipeline.get(CHECK, 'o1'))?.deferred === true, 'the deferral');
    const deferred = (await pipeline.get<Order>(CHECK, 'o1')) as JobRecord<Order>;
    expect(deferred).toMatchObject({
      status: 'pending',
      deferred: true,
      attempts: 0,
      deferrals: 1,
      state: { checks: 1 },
    });
    expect(deferred.nextAttemptAt).toBeGreaterThan(deferred.updatedAt);
    expect(deferred.lastError).toBeUndefined();
    await pipeline.drain();
    // Deferred twice under a retry policy of one attempt: done, not dead.
    expect(await pipeline.get(CHECK, 'o1')).toMatchObject({ status: 'done', attempts: 1, deferrals: 2 });
    expect(checker.runs.map((run) => run.state)).toEqual([undefined, { checks: 1 }, { checks: 2 }]);
    expect(checker.runs.every((run) => run.attempt === 1)).toBe(true);
  });

  it('a deferred job whose process died is taken over by another pipeline on the same store when due', async () => {
    const shared = memory();
    const dying = new CrashableStore(shared);
    const checker = new Checker(100);
    const lease = { leaseMs: 200, sweepIntervalMs: 50 };
    const a = track(checker.define(pipelineOn(dying, lease), 'a'));
    const b = track(checker.define(pipelineOn(shared, lease), 'b'));
    await b.onApplicationBootstrap(); // b sweeps
    await a.submit(CHECK, 'o2', { id: 'o2', from: 'first' });
    await until(async () => (await b.get(CHECK, 'o2'))?.deferred === true, 'the deferral');
    dying.crash(); // a's process is gone: its timer will never run the job again
    checker.paid = true;
    await until(async () => (await b.get(CHECK, 'o2'))?.status === 'done', 'the job done by b');
    expect(checker.runs.map((run) => run.by)).toEqual(['a', 'b']);
    // b's run read what a's run left for it.
    expect(checker.runs[1]).toMatchObject({ state: { checks: 1 } });
  });

  it('a duplicate on another pipeline wakes the deferred job: run there now with its payload; the first timer is a no-op', async () => {
    const shared = memory();
    const checker = new Checker(150);
    const a = track(checker.define(pipelineOn(shared), 'a'));
    const b = track(checker.define(pipelineOn(shared), 'b'));
    await a.submit(CHECK, 'o3', { id: 'o3', from: 'forged' });
    await until(async () => (await a.get(CHECK, 'o3'))?.deferred === true, 'the deferral');
    checker.paid = true;
    const duplicate = await b.submit(CHECK, 'o3', { id: 'o3', from: 'genuine' });
    expect(duplicate).toMatchObject({ duplicate: true, woken: true });
    await b.drain();
    expect(await b.get(CHECK, 'o3')).toMatchObject({ status: 'done' });
    // a's timer comes at its time, finds the record moved on, and runs nothing.
    await a.drain();
    expect(checker.runs).toEqual([
      expect.objectContaining({ by: 'a', from: 'forged' }),
      expect.objectContaining({ by: 'b', from: 'genuine' }),
    ]);
  });

  it('a duplicate on the same pipeline ends the wait at once', async () => {
    const checker = new Checker(60_000);
    const pipeline = track(checker.define(pipelineOn(memory()), 'a'));
    await pipeline.submit(CHECK, 'o4', { id: 'o4', from: 'first' });
    await until(async () => (await pipeline.get(CHECK, 'o4'))?.deferred === true, 'the deferral');
    checker.paid = true;
    expect((await pipeline.submit(CHECK, 'o4', { id: 'o4', from: 'second' })).woken).toBe(true);
    await pipeline.drain();
    expect(checker.runs.map((run) => run.from)).toEqual(['first', 'second']);
    expect(await pipeline.get(CHECK, 'o4')).toMatchObject({ status: 'done', deferrals: 2 });
  });

  it('a duplicate during a run is kept for it (takeWake), and a deferral that run ends with runs it again at once', async () => {
    const checker = new Checker(60_000);
    const pipeline = track(checker.define(pipelineOn(memory()), 'a'));
    let open!: () => void;
    checker.gate = new Promise<void>((resolve) => (open = resolve));
    await pipeline.submit(CHECK, 'o5', { id: 'o5', from: 'first' });
    await until(() => checker.runs.length === 1, 'the run');
    expect((await pipeline.submit(CHECK, 'o5', { id: 'o5', from: 'during' })).woken).toBe(true);
    checker.gate = undefined;
    open();
    // Not paid: the run deferred a minute, but the duplicate that came meanwhile runs it at once.
    await until(() => checker.runs.length === 2, 'the run again');
    await until(async () => (await pipeline.get(CHECK, 'o5'))?.deferred === true, 'the deferral');
    expect(checker.runs.map((run) => run.from)).toEqual(['first', 'during']);

    // Paid: a duplicate during the run is what it reports (the latest), read with takeWake().
    checker.gate = new Promise<void>((resolve) => (open = resolve));
    checker.paid = true;
    expect((await pipeline.submit(CHECK, 'o5', { id: 'o5', from: 'third' })).woken).toBe(true);
    await until(() => checker.runs.length === 3, 'the woken run');
    expect((await pipeline.submit(CHECK, 'o5', { id: 'o5', from: 'latest' })).woken).toBe(true);
    checker.gate = undefined;
    open();
    await pipeline.drain();
    expect(checker.woken).toEqual([{ id: 'o5', from: 'latest' }]);
    expect(await pipeline.get(CHECK, 'o5')).toMatchObject({ status: 'done' });
    expect(checker.runs).toHaveLength(3);
  });

  it('a deferral is run again at its time by the clock of the pipeline, never before (a timer may fire early by it)', async () => {
    // A clock running behind the timers (half speed): as a timer firing a millisecond before
    // Date.now() reaches its time, only more so. A run before its time is taken for a wake by the
    // job (the checkout confirmation then made one status check more than its schedule).
    const start = Date.now();
    const clock = () => start + Math.floor((Date.now() - start) / 2);
    const runs: Array<{ at: number; due: number | undefined }> = [];
    const pipeline = track(
      pipelineOn(memory(), { now: clock }).define<Order>(CHECK, {
        retry: { maxAttempts: 1 },
        run: async (_order, context) => {
          const due = context.record.state as number | undefined;
          runs.push({ at: clock(), due });
          if (due === undefined) return context.defer(clock() + 40, clock() + 40);
        },
      }),
    );
    await pipeline.submit(CHECK, 'o7', { id: 'o7', from: 'first' });
    await until(() => runs.length === 2, 'the second run');
    await pipeline.drain();
    expect(runs[1]!.at).toBeGreaterThanOrEqual(runs[1]!.due!);
    expect(await pipeline.get(CHECK, 'o7')).toMatchObject({ status: 'done', deferrals: 1 });
  });

  it('a deferred job found by the bootstrap recovery runs when due, not at once', async () => {
    const store = memory();
    const checker = new Checker(60_000);
    checker.paid = true;
    const now = Date.now();
    const left: JobRecord<Order> = {
      type: CHECK,
      key: 'o6',
      payload: { id: 'o6', from: 'left' },
      status: 'pending',
      attempts: 0,
      doneHandlers: [],
      receivedAt: now,
      updatedAt: now,
      nextAttemptAt: now + 150,
      deferred: true,
      deferrals: 1,
    };
    await store.set(`${STORE_KEY}o6`, left);
    const pipeline = track(checker.define(pipelineOn(store), 'a'));
    expect(await pipeline.recover()).toBe(1);
    expect(checker.runs).toHaveLength(0);
    await until(async () => (await pipeline.get(CHECK, 'o6'))?.status === 'done', 'the job done');
    expect(checker.runs).toHaveLength(1);
  });
});
