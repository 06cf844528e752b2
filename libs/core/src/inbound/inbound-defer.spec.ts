import { Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { HubtelStore } from '../store/hubtel-store.interface.js';
import { MemoryStore } from '../store/memory.store.js';
import {
  InboundPipeline,
  type InboundPipelineOptions,
  type JobRecord,
  type JobRunContext,
} from './inbound-pipeline.js';

/**
 * Deferred jobs in one process: a run that defers itself is recorded as such and run again at its
 * time; a duplicate wakes it. Across replicas (BullMQ) see test/bullmq.pipeline.e2e-spec.ts.
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
    shutdownGraceMs: 10,
    ...extra,
  });
}

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`Still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('InboundPipeline deferred jobs', () => {
  const stores: MemoryStore[] = [];
  const pipelines: InboundPipeline[] = [];
  function memory(): MemoryStore {
    const store = new MemoryStore();
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
      state: { checks: 1 },
    });
    expect(deferred.lastError).toBeUndefined();
    await pipeline.drain();
    // Deferred twice under a retry policy of one attempt: done, not dead.
    expect(await pipeline.get(CHECK, 'o1')).toMatchObject({ status: 'done', attempts: 1 });
    expect(checker.runs.map((run) => run.state)).toEqual([undefined, { checks: 1 }, { checks: 2 }]);
    expect(checker.runs.every((run) => run.attempt === 1)).toBe(true);
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
    expect(await pipeline.get(CHECK, 'o4')).toMatchObject({ status: 'done' });
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
});
