import { Injectable, Logger, Module, type INestApplicationContext } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { createHandlerDecorator } from '../events/handler-decorator.js';
import { HandlerRegistry } from '../events/handler-registry.js';
import { MemoryStore } from '../store/memory.store.js';
import {
  HubtelDeadLetterNotFoundError,
  HubtelNotDeadLetterError,
  listDeadLetters,
  requeueDeadLetter,
} from './inbound-dead-letters.js';
import { InboundPipeline, type JobRecord } from './inbound-pipeline.js';
import type { JobRunner, JobRunRequest } from './job-runner.js';

const PAID = 'dl.paid';
const OnPaid = createHandlerDecorator(PAID);

/** `receipt` always succeeds; `ship` fails while `broken` (the test "fixes" it by toggling). */
@Injectable()
class Handlers {
  calls = { receipt: 0, ship: 0 };
  broken = true;

  @OnPaid()
  receipt(): void {
    this.calls.receipt++;
  }

  @OnPaid()
  ship(): void {
    this.calls.ship++;
    if (this.broken) throw new Error('warehouse down');
  }
}

@Module({ imports: [EventEmitterModule.forRoot()], providers: [Handlers] })
class TestModule {}

const quiet = new Logger('test');
quiet.warn = () => undefined;
quiet.error = () => undefined;
quiet.log = () => undefined;

async function setup() {
  const moduleRef = await Test.createTestingModule({ imports: [TestModule] }).compile();
  const app: INestApplicationContext = await moduleRef.createNestApplication({ logger: false }).init();
  const store = new MemoryStore({ sweepIntervalMs: 0 });
  const pipeline = new InboundPipeline({
    name: 'dl',
    store,
    emitter: app.get(EventEmitter2),
    handlers: new HandlerRegistry({
      emitter: app.get(EventEmitter2),
      discovery: app.get(DiscoveryService),
      scanner: app.get(MetadataScanner),
      logger: quiet,
    }),
    deadLetterEvent: 'dl.dead',
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    logger: quiet,
  }).define(PAID);
  return { app, store, pipeline, handlers: app.get(Handlers) };
}

describe('dead letters', () => {
  it('lists a job whose handler kept failing, and its replay runs only that handler, once fixed', async () => {
    const { app, store, pipeline, handlers } = await setup();
    await pipeline.submit(PAID, 'ref-1', { id: 'ref-1' });
    await pipeline.drain();
    expect(handlers.calls).toEqual({ receipt: 1, ship: 2 });

    const [letter, ...more] = await pipeline.listDeadLetters();
    expect(more).toEqual([]);
    expect(letter).toMatchObject({
      id: `${PAID}:ref-1`,
      pipeline: 'dl',
      type: PAID,
      key: 'ref-1',
      attempts: 2,
      lastError: 'warehouse down',
      succeededHandlers: [`Handlers.receipt@${PAID}`],
      payload: { id: 'ref-1' },
    });

    handlers.broken = false;
    await pipeline.replayDeadLetter(letter!.id);
    await pipeline.drain();

    expect(handlers.calls).toEqual({ receipt: 1, ship: 3 });
    expect((await pipeline.get(PAID, 'ref-1'))?.status).toBe('done');
    expect(await pipeline.listDeadLetters()).toEqual([]);
    store.close();
    await app.close();
  });

  it('a replay that fails again is dead-lettered again after that one run', async () => {
    const { app, store, pipeline, handlers } = await setup();
    await pipeline.submit(PAID, 'ref-2', { id: 'ref-2' });
    await pipeline.drain();
    await pipeline.replayDeadLetter(`${PAID}:ref-2`);
    await pipeline.drain();
    expect(handlers.calls).toEqual({ receipt: 1, ship: 3 });
    expect(await pipeline.listDeadLetters()).toMatchObject([{ attempts: 3 }]);
    store.close();
    await app.close();
  });

  it('replaying an unknown id or a job that is not dead throws typed errors, and changes nothing', async () => {
    const { app, store, pipeline, handlers } = await setup();
    handlers.broken = false;
    await pipeline.submit(PAID, 'ok', { id: 'ok' });
    await pipeline.drain();

    const unknown = pipeline.replayDeadLetter(`${PAID}:nope`);
    await expect(unknown).rejects.toBeInstanceOf(HubtelDeadLetterNotFoundError);
    await expect(unknown).rejects.toMatchObject({ code: 'HUBTEL_NOT_FOUND' });
    const done = pipeline.replayDeadLetter(`${PAID}:ok`);
    await expect(done).rejects.toBeInstanceOf(HubtelNotDeadLetterError);
    await expect(done).rejects.toMatchObject({ code: 'HUBTEL_STORE_CONFLICT', status: 'done' });
    await pipeline.drain();
    expect(handlers.calls).toEqual({ receipt: 1, ship: 1 });
    store.close();
    await app.close();
  });

  it('requeued on the store alone (from outside the app), two replays at once make one', async () => {
    const { app, store, pipeline } = await setup();
    await pipeline.submit(PAID, 'ref-3', { id: 'ref-3' });
    await pipeline.drain();
    const id = `${PAID}:ref-3`;

    // A runner that only notes what it is asked (the command line's is BullMQ's).
    const asked: JobRunRequest[] = [];
    const runner = { enqueue: async (_: string, request: JobRunRequest) => void asked.push(request) };
    const requeue = () =>
      requeueDeadLetter(store, 'dl', id, { ttlMs: 60_000, runner: runner as unknown as JobRunner });
    const outcomes = await Promise.allSettled([requeue(), requeue()]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await listDeadLetters(store, 'dl')).toEqual([]);
    // Pending as a new run (its attempts + 1), asked of the runner once.
    const record = (await pipeline.get(PAID, 'ref-3'))!;
    expect(record).toMatchObject({ status: 'pending', run: record.attempts + 1 });
    expect(asked).toEqual([{ storeKey: `hubtel:dl:job:${id}`, type: PAID, run: record.attempts + 1 }]);
    store.close();
    await app.close();
  });

  it('every replay asks for a new run number, even of a job settled dead without a run (a gate, a give-up)', async () => {
    const store = new MemoryStore();
    const asked: number[] = [];
    const runner = { enqueue: async (_: string, request: JobRunRequest) => void asked.push(request.run) };
    const key = `hubtel:dl:job:${PAID}:refused`;
    const at = Date.now();
    await store.set(key, {
      type: PAID,
      key: 'refused',
      payload: {},
      status: 'dead',
      attempts: 0,
      doneHandlers: [],
      receivedAt: at,
      updatedAt: at,
      lastError: 'refused by its gate',
    });
    const replay = () =>
      requeueDeadLetter(store, 'dl', `${PAID}:refused`, {
        ttlMs: 60_000,
        runner: runner as unknown as JobRunner,
      });
    const dieAgain = async () => {
      const current = (await store.get<JobRecord>(key))!;
      await store.set(key, { ...current.value, status: 'dead' });
    };
    await replay();
    await dieAgain(); // refused again by its gate: no attempt counted
    await replay();
    expect(asked).toEqual([2, 3]);
    store.close();
  });

  it('a replay the runner cannot take leaves the dead letter dead (listed, replayable), and says so', async () => {
    const { app, store, pipeline } = await setup();
    await pipeline.submit(PAID, 'ref-4', { id: 'ref-4' });
    await pipeline.drain();
    const id = `${PAID}:ref-4`;
    const down = new Error('queue unreachable');
    const runner = { enqueue: async () => Promise.reject(down) };
    await expect(
      requeueDeadLetter(store, 'dl', id, { ttlMs: 60_000, runner: runner as unknown as JobRunner }),
    ).rejects.toBe(down);
    expect((await pipeline.get(PAID, 'ref-4'))?.status).toBe('dead');
    expect((await listDeadLetters(store, 'dl')).map((letter) => letter.id)).toEqual([id]);
    store.close();
    await app.close();
  });
});
