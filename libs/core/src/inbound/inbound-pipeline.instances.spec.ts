import { Inject, Injectable, Logger, Module, type INestApplication, type Type } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner } from '@nestjs/core';
import {
  EventEmitter2,
  EventEmitterModule,
  EventEmitterReadinessWatcher,
  OnEvent,
} from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { createHandlerDecorator } from '../events/handler-decorator.js';
import { HandlerRegistry } from '../events/handler-registry.js';
import { MemoryStore } from '../store/memory.store.js';
import { InboundPipeline, type InboundPipelineOptions, type JobRecord } from './inbound-pipeline.js';

/**
 * Several instances of one app (real Nest apps) sharing one store instance, as replicas or a
 * restart share Redis: which instance runs a job, and which handlers of it run, after a deploy,
 * a crash or a takeover.
 */

const PAID = 'orders.paid';
const DEAD = 'orders.dead-letter';
const OnPaid = createHandlerDecorator(PAID);
const PIPELINE = Symbol('pipeline');
const LEASE_MS = 1_000;

/** What one instance's handlers did, and how they are told to behave. */
class Journal {
  calls: string[] = [];
  /** Handlers (by class name) that fail on their next call. */
  failing = new Set<string>();
  /** While set, handlers wait for it (a long-running job). */
  gate: Promise<void> | undefined;

  count(name: string): number {
    return this.calls.filter((call) => call === name).length;
  }
}

async function handle(journal: Journal, name: string): Promise<void> {
  journal.calls.push(name);
  if (journal.gate) await journal.gate;
  if (journal.failing.delete(name)) throw new Error(`${name} failed`);
}

@Injectable()
class Stock {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnPaid()
  reserve(): Promise<void> {
    return handle(this.journal, 'Stock');
  }
}

@Injectable()
class Mail {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnPaid()
  send(): Promise<void> {
    return handle(this.journal, 'Mail');
  }
}

@Injectable()
class Ledger {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnPaid()
  post(): Promise<void> {
    return handle(this.journal, 'Ledger');
  }
}

@Injectable()
class Audit {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnPaid()
  note(): Promise<void> {
    return handle(this.journal, 'Audit');
  }
}

/** A plain @OnEvent: @nestjs/event-emitter swallows its errors (suppressErrors defaults to true). */
@Injectable()
class Plain {
  constructor(@Inject(Journal) private readonly journal: Journal) {}
  @OnEvent(PAID)
  plain(): Promise<void> {
    return handle(this.journal, 'Plain');
  }
}

const quiet = new Logger('test');
quiet.warn = () => undefined;
quiet.error = () => undefined;
quiet.log = () => undefined;

interface Instance {
  app: INestApplication;
  pipeline: InboundPipeline;
  journal: Journal;
}

/** A shared clock: leases and retries are due when a test says so, not after real time. */
let clock = 0;

/** One instance of the app: its handler classes (in this order), on the shared store. */
async function instance(
  store: MemoryStore,
  handlers: Type[],
  options: Partial<InboundPipelineOptions> = {},
): Promise<Instance> {
  const journal = new Journal();
  @Module({
    imports: [EventEmitterModule.forRoot(), DiscoveryModule],
    providers: [
      { provide: Journal, useValue: journal },
      ...handlers,
      {
        provide: PIPELINE,
        useFactory: (
          emitter: EventEmitter2,
          discovery: DiscoveryService,
          scanner: MetadataScanner,
          readiness: EventEmitterReadinessWatcher,
        ) =>
          new InboundPipeline({
            name: 'orders',
            store,
            emitter,
            handlers: new HandlerRegistry({ emitter, discovery, scanner, logger: quiet }),
            deadLetterEvent: DEAD,
            logger: quiet,
            now: () => clock,
            leaseMs: LEASE_MS,
            recoverOnBootstrap: false,
            sweepIntervalMs: 0,
            shutdownGraceMs: 10,
            retry: { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 2 },
            whenReady: () => readiness.waitUntilReady(),
            ...options,
          }).define(PAID),
        inject: [EventEmitter2, DiscoveryService, MetadataScanner, EventEmitterReadinessWatcher],
      },
    ],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = await moduleRef.createNestApplication({ logger: false }).init();
  return { app, pipeline: app.get<InboundPipeline>(PIPELINE), journal };
}

/** Waits for a condition (polling), failing after a few seconds. */
async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let waited = 0; waited < 5_000; waited += 5) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`Timed out waiting for: ${what}`);
}

const KEY = `hubtel:orders:job:${PAID}:`;
/** A retry that waits long in real time (the shared clock decides when it is due). */
const SLOW_RETRY = { retry: { maxAttempts: 5, baseDelayMs: 60_000, maxDelayMs: 60_000 }, random: () => 0.5 };

describe('InboundPipeline across instances sharing one store', () => {
  let store: MemoryStore;
  const apps: INestApplication[] = [];
  async function start(handlers: Type[], options?: Partial<InboundPipelineOptions>): Promise<Instance> {
    const started = await instance(store, handlers, options);
    apps.push(started.app);
    return started;
  }
  const record = async (key: string) => (await store.get<JobRecord>(KEY + key))?.value;

  beforeEach(() => {
    clock = Date.now();
    store = new MemoryStore({ sweepIntervalMs: 0 });
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    store.close();
  });

  it('after a restart with handlers reordered and one added, a recovered job runs the failed and the new handler only', async () => {
    const before = await start([Stock, Mail, Ledger], SLOW_RETRY);
    before.journal.failing.add('Mail');
    await before.pipeline.submit(PAID, 'o1', { id: 'o1' });
    await until('the first attempt is recorded', async () => (await record('o1'))?.attempts === 1);
    expect(before.journal.calls).toEqual(['Stock', 'Mail', 'Ledger']);
    expect((await record('o1'))?.status).toBe('pending');
    await before.app.close(); // the deploy: this instance stops with the job waiting for its retry

    const after = await start([Mail, Ledger, Audit, Stock]);
    expect(await after.pipeline.sweep()).toBe(0); // a sweep waits for the retry to be due
    clock += 60_000; // the retry is due
    expect(await after.pipeline.recover()).toBe(1);
    await after.pipeline.drain();
    expect(after.journal.calls.sort()).toEqual(['Audit', 'Mail']);
    expect(await record('o1')).toMatchObject({ status: 'done', attempts: 2 });
    // Remembered by identity, in the order they succeeded: never by position.
    expect([...(await record('o1'))!.doneHandlers].sort()).toEqual(
      [`Audit.note@${PAID}`, `Ledger.post@${PAID}`, `Mail.send@${PAID}`, `Stock.reserve@${PAID}`].sort(),
    );
  });

  it('retries a plain @OnEvent handler that failed, though @nestjs/event-emitter would swallow its error', async () => {
    const one = await start([Plain]);
    one.journal.failing.add('Plain');
    await one.pipeline.submit(PAID, 'o2', { id: 'o2' });
    await one.pipeline.drain();
    expect(one.journal.count('Plain')).toBe(2);
    expect(await record('o2')).toMatchObject({ status: 'done', attempts: 2 });
  });

  it("another instance's sweep takes over the job of an instance that died (its lease expired, never renewed)", async () => {
    const dying = await start([Stock]);
    dying.journal.gate = new Promise<void>(() => undefined); // its handler never returns
    await dying.pipeline.submit(PAID, 'o3', { id: 'o3' });
    await until('the job runs on the dying instance', () => dying.journal.calls.length === 1);
    await dying.app.close(); // stops its heartbeat: the lease is never renewed again
    clock += LEASE_MS + 1;

    const survivor = await start([Stock], { sweepIntervalMs: 5 });
    await until('the survivor finished the job', async () => (await record('o3'))?.status === 'done');
    expect(survivor.journal.calls).toEqual(['Stock']);
    expect(await record('o3')).toMatchObject({ attempts: 1, doneHandlers: [`Stock.reserve@${PAID}`] });
  });

  it('a long job on a live instance keeps its lease (heartbeat): another instance does not take it', async () => {
    let release!: () => void;
    const live = await start([Stock], { heartbeatMs: 5 });
    live.journal.gate = new Promise<void>((resolve) => (release = resolve));
    const other = await start([Stock]);
    await live.pipeline.submit(PAID, 'o4', { id: 'o4' });
    await until('the job runs', () => live.journal.calls.length === 1);
    const firstLease = (await record('o4'))!.leaseUntil!;

    clock += LEASE_MS * 0.6;
    await until('the lease is renewed', async () => (await record('o4'))!.leaseUntil! > firstLease);
    clock += LEASE_MS * 0.6; // past the first lease, within the renewed one
    expect(clock).toBeGreaterThan(firstLease);
    expect(await other.pipeline.sweep()).toBe(0);
    await other.pipeline.drain();

    release();
    await live.pipeline.drain();
    expect(live.journal.calls).toEqual(['Stock']);
    expect(other.journal.calls).toEqual([]);
    expect(await record('o4')).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('an instance that stalled past its lease, then finishes, does not undo the outcome of the instance that took over', async () => {
    let release!: () => void;
    const stalled = await start([Stock, Mail], { heartbeatMs: 60_000 });
    stalled.journal.gate = new Promise<void>((resolve) => (release = resolve));
    stalled.journal.failing.add('Mail');
    await stalled.pipeline.submit(PAID, 'o7', { id: 'o7' });
    await until('the job runs', () => stalled.journal.calls.length === 1);
    clock += LEASE_MS + 1; // no heartbeat came: the lease expired

    const other = await start([Stock, Mail]);
    expect(await other.pipeline.recover()).toBe(1);
    await other.pipeline.drain();
    expect(await record('o7')).toMatchObject({ status: 'done', attempts: 1 });

    release(); // the stalled instance wakes up: Stock succeeds, Mail fails there
    await stalled.pipeline.drain();
    expect(stalled.journal.calls).toEqual(['Stock', 'Mail']);
    expect(await record('o7')).toMatchObject({ status: 'done', attempts: 1 });
    expect([...(await record('o7'))!.doneHandlers].sort()).toEqual([
      `Mail.send@${PAID}`,
      `Stock.reserve@${PAID}`,
    ]);
  });

  it('two sweeping instances take an orphaned job exactly once', async () => {
    const orphan: JobRecord = {
      type: PAID,
      key: 'o5',
      payload: { id: 'o5' },
      status: 'running',
      attempts: 0,
      doneHandlers: [],
      receivedAt: clock - 60_000,
      updatedAt: clock - 60_000,
      leaseUntil: clock - 1, // its instance died mid-run
    };
    await store.set(KEY + 'o5', orphan);
    // Marked open, as every job is when it is recorded: what the periodic sweeps read.
    await store.set(KEY.replace(':job:', ':open:') + 'o5', 1);
    const a = await start([Stock, Mail], { sweepIntervalMs: 5 });
    const b = await start([Stock, Mail], { sweepIntervalMs: 5 });
    await until('the orphan is done', async () => (await record('o5'))?.status === 'done');
    await Promise.all([a.pipeline.sweep(), b.pipeline.sweep()]);
    await Promise.all([a.pipeline.drain(), b.pipeline.drain()]);
    expect([...a.journal.calls, ...b.journal.calls].sort()).toEqual(['Mail', 'Stock']);
    expect(await record('o5')).toMatchObject({ attempts: 1 });
  });

  it('says "Recovered" once, on the instance that runs a taken-over job, not on the one that lost the claim', async () => {
    const orphan: JobRecord = {
      type: PAID,
      key: 'o8',
      payload: { id: 'o8' },
      status: 'running',
      attempts: 0,
      doneHandlers: [],
      receivedAt: clock - 60_000,
      updatedAt: clock - 60_000,
      leaseUntil: clock - 1,
    };
    await store.set(KEY + 'o8', orphan);
    const lines: string[] = [];
    class Lines extends Logger {
      override log(message: unknown): void {
        lines.push(String(message));
      }
      override warn(): void {}
      override error(): void {}
    }
    const a = await start([Stock], { logger: new Lines() });
    const b = await start([Stock], { logger: new Lines() });
    // Both find the orphan and launch it; one claim wins.
    expect(await Promise.all([a.pipeline.recover(), b.pipeline.recover()])).toEqual([1, 1]);
    await Promise.all([a.pipeline.drain(), b.pipeline.drain()]);
    expect([...a.journal.calls, ...b.journal.calls]).toEqual(['Stock']);
    expect(lines.filter((line) => line.includes('Recovered'))).toEqual([
      `Recovered unfinished job ${PAID} o8`,
    ]);
    // Nothing left to take: no line at all.
    expect(await a.pipeline.recover()).toBe(0);
    expect(lines.filter((line) => line.includes('Recovered'))).toHaveLength(1);
  });

  it('the periodic sweep reads the open-job marks, not the records of finished jobs', async () => {
    const a = await start([Stock]);
    for (const id of ['o10', 'o11', 'o12']) await a.pipeline.submit(PAID, id, { id });
    await a.pipeline.drain();
    const open: JobRecord = {
      type: PAID,
      key: 'o13',
      payload: { id: 'o13' },
      status: 'running',
      attempts: 0,
      doneHandlers: [],
      receivedAt: clock - 60_000,
      updatedAt: clock - 60_000,
      leaseUntil: clock - 1,
    };
    await store.set(KEY + 'o13', open);
    await store.set(KEY.replace(':job:', ':open:') + 'o13', 1);
    const scanned: string[] = [];
    const read: string[] = [];
    const scan = store.scan.bind(store);
    const get = store.get.bind(store);
    // Watched on this store instance only (a fresh one per test).
    store.scan = <T>(prefix: string) => (scanned.push(prefix), scan<T>(prefix));
    store.get = <T>(key: string) => (read.push(key), get<T>(key));

    expect(await a.pipeline.sweep()).toBe(1);
    await a.pipeline.drain();
    expect(scanned).toEqual([KEY.replace(/:job:.*$/, ':open:')]);
    expect(read.filter((key) => /o1[012]$/.test(key))).toEqual([]);
    expect(await record('o13')).toMatchObject({ status: 'done', attempts: 1 });
    // Settled: its mark is gone, so the next sweep reads nothing.
    read.length = 0;
    expect(await a.pipeline.sweep()).toBe(0);
    expect(read).toEqual([]);
  });

  it("a job waiting for its retry is not run early by this instance's sweep, nor by another's while its lease runs", async () => {
    const owner = await start([Stock], SLOW_RETRY);
    const other = await start([Stock]);
    owner.journal.failing.add('Stock');
    await owner.pipeline.submit(PAID, 'o6', { id: 'o6' });
    await until('the first attempt failed', async () => (await record('o6'))?.attempts === 1);
    const pending = (await record('o6'))!;
    expect(pending.status).toBe('pending');

    expect(await owner.pipeline.recover()).toBe(0);
    expect(await other.pipeline.recover()).toBe(0);
    expect(pending.nextAttemptAt).toBe(clock + 30_000);
    clock = pending.nextAttemptAt!; // due, but still leased to the instance that waits for it
    expect(await other.pipeline.recover()).toBe(0);
    clock = pending.leaseUntil! + 1; // its owner stalled past its lease: another instance may take it
    expect(await other.pipeline.recover()).toBe(1);
    await other.pipeline.drain();
    expect(owner.journal.calls).toEqual(['Stock']);
    expect(other.journal.calls).toEqual(['Stock']);
    expect(await record('o6')).toMatchObject({ status: 'done', attempts: 2 });
  });
});
