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
import { InboundPipeline } from './inbound-pipeline.js';

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

    const outcomes = await Promise.allSettled([
      requeueDeadLetter(store, 'dl', id, 60_000),
      requeueDeadLetter(store, 'dl', id, 60_000),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await listDeadLetters(store, 'dl')).toEqual([]);
    // Pending, owned by nobody, marked open: what a sweep of any instance takes.
    const record = (await pipeline.get(PAID, 'ref-3'))!;
    expect(record.status).toBe('pending');
    expect(record.leaseUntil).toBeUndefined();
    expect(await store.get(`hubtel:dl:open:${id}`)).toBeDefined();
    store.close();
    await app.close();
  });
});
