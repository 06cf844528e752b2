import { setMaxListeners } from 'node:events';
import { Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import { HubtelError } from '../errors/hubtel.errors.js';
import { maskPhoneNumbers } from '../logging/redact.js';
import { backoffDelay, sleep } from '../retry/backoff.js';
import type { HubtelStore, StoreEntry } from '../store/hubtel-store.interface.js';

/**
 * The one inbound road of the suite, shared by checkout callbacks and fulfillment requests:
 *
 *   record (set-if-absent on the job's key) → acknowledge → run → retry with backoff → dead letter
 *
 * A job is recorded in the store BEFORE the caller acknowledges the HTTP request, so a crash after
 * the 2xx loses nothing (with a persistent store, unfinished jobs are picked up again at bootstrap).
 * The key makes a job idempotent: a duplicate (sequential or concurrent) finds the key taken and
 * runs nothing.
 *
 * A job either dispatches a domain event to its @nestjs/event-emitter listeners, or runs its own
 * function (the service-app's fulfillment callback sender). Listeners are called one by one, and
 * each one that succeeded is remembered, so a retry re-runs only the listeners that failed: one
 * failing handler never makes another handler run twice.
 */

export interface JobRetryPolicy {
  /** Total runs allowed, the first included. `Infinity` with a `deadlineMs` retries until then. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Give up once this long has passed since the job was recorded. */
  deadlineMs?: number;
}

export type JobStatus = 'pending' | 'running' | 'done' | 'dead';

export interface JobRecord<P = unknown> {
  type: string;
  key: string;
  payload: P;
  status: JobStatus;
  /** Runs so far. */
  attempts: number;
  /** Indexes (in listener order) of the event listeners that already succeeded. */
  doneListeners: number[];
  /**
   * With `keepResults`: what each listener that succeeded resolved to (by listener index), when it
   * was not undefined. Kept across retries, so a listener that succeeded once keeps its answer.
   */
  results?: Record<string, unknown>;
  receivedAt: number;
  updatedAt: number;
  /** While running: until when this process owns the job (another instance may take it after). */
  leaseUntil?: number;
  lastError?: string;
  /**
   * Set when the job is done and its definition's `compactWhenDone` replaced the payload (and
   * dropped `results` and `doneListeners`): the record then only proves the key was handled.
   */
  compacted?: true;
}

export type JobOutcome = 'done' | 'dead';

export interface JobDefinition<P = unknown> {
  /**
   * Runs the job once; throw to have it retried. When absent, the job dispatches its payload as
   * the domain event named like the job type, to every listener of that event.
   */
  run?: (payload: P, context: { attempt: number; record: JobRecord<P> }) => Promise<void>;
  /**
   * Events whose listeners a dispatching job calls, in this order (their listeners concatenated).
   * Default: the job type. Lets one job type reach per-tenant events, e.g. the service-app's
   * fulfillment of service code 711 reaches `…fulfillment:711` listeners, then the catch-all ones.
   * Must give the same list on every attempt (listener indexes are remembered across retries).
   */
  events?: (payload: P) => readonly string[];
  /**
   * When no listener is attached, fail the attempt (retried, then dead-lettered) instead of
   * counting the job as done: for jobs whose success is reported to someone (an order fulfilled).
   */
  requireListener?: boolean;
  /**
   * Keep what each listener resolves to in `record.results` (values must be JSON-serialisable
   * plain data, as they are stored). For jobs whose handlers answer something (fulfillment metadata).
   */
  keepResults?: boolean;
  retry?: Partial<JobRetryPolicy>;
  /**
   * Once the job is done, store a smaller record: its payload becomes what this returns (return
   * undefined to drop it; `record` is the full done record, `results` included), and `results` and `doneListeners` are dropped; the record keeps its
   * type, key, status, attempts and times and gets `compacted: true`. It still makes duplicates
   * of the key detectable for the record's whole retention (`recordTtlMs`), at a fraction of the
   * memory. For job types whose finished records nobody reads. Dead jobs keep everything (they
   * may be replayed by hand), and `onSettled` still receives the full record.
   */
  compactWhenDone?: (payload: P, record: JobRecord<P>) => unknown;
  /** Called once when the job is done or dead (after the dead-letter event). Errors are logged. */
  onSettled?: (record: JobRecord<P>, outcome: JobOutcome, error?: unknown) => Promise<void> | void;
}

/** Payload of the dead-letter event: a job gave up. It stays in the store with status `dead`. */
export class DeadLetterEvent<P = unknown> {
  constructor(
    readonly type: string,
    readonly key: string,
    readonly payload: P,
    readonly attempts: number,
    readonly error: string,
    readonly receivedAt: Date,
  ) {}
}

export interface SubmitResult<P = unknown> {
  /** True when the key was already recorded: nothing new will run. */
  duplicate: boolean;
  record: JobRecord<P>;
}

export interface InboundPipelineOptions {
  /** Names the pipeline in logs and store keys (`checkout`, `service-app`). */
  name: string;
  store: HubtelStore;
  emitter: EventEmitter2;
  /** Event emitted when a job gives up. */
  deadLetterEvent: string;
  /** Defaults for every job type. */
  retry?: Partial<JobRetryPolicy>;
  /** How long finished records are kept (they are what makes duplicates detectable). */
  recordTtlMs?: number;
  /** How long a running job is owned by one process before another may take it over. */
  leaseMs?: number;
  /** How long shutdown waits for running jobs. */
  shutdownGraceMs?: number;
  /** Pick up unfinished jobs found in the store at bootstrap (only useful with a persistent store). */
  recoverOnBootstrap?: boolean;
  /** Resolves when event listeners are attached (EventEmitterReadinessWatcher.waitUntilReady). */
  whenReady?: () => Promise<void>;
  now?: () => number;
  random?: () => number;
  logger?: Logger;
}

export const DEFAULT_JOB_RETRY: JobRetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 };
const DEFAULT_RECORD_TTL_MS = 7 * 24 * 3600_000;
const DEFAULT_LEASE_MS = 5 * 60_000;
/** Shared by every new record: values are immutable (see HubtelStore), so one empty list serves all. */
const NO_LISTENERS: number[] = Object.freeze([]) as unknown as number[];

export class InboundPipeline implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly definitions = new Map<string, JobDefinition<any>>();
  /** Default event list per job type (the type itself), so dispatching allocates none. */
  private readonly typeEvents = new Map<string, readonly string[]>();
  /** Jobs launched and not settled yet (queued ones included): what drain() waits for. */
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  /** Jobs launched in this turn of the event loop, as [storeKey, known entry] pairs. */
  private queue: Array<string | StoreEntry<JobRecord> | undefined> = [];
  private scheduled = false;
  private readonly stopping = new AbortController();
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly prefix: string;
  private readonly writeOptions: { ttlMs: number };
  private readonly leaseMs: number;

  constructor(private readonly options: InboundPipelineOptions) {
    this.logger = options.logger ?? new HubtelLogger(`Hubtel:${options.name}`);
    this.now = options.now ?? Date.now;
    this.prefix = `hubtel:${options.name}:job:`;
    this.writeOptions = { ttlMs: options.recordTtlMs ?? DEFAULT_RECORD_TTL_MS };
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    // Each job waiting to retry listens on it; hundreds may wait at once (not a leak).
    setMaxListeners(0, this.stopping.signal);
  }

  /** Declares a job type. Call before submitting jobs of it (typically in a provider factory). */
  define<P>(type: string, definition: JobDefinition<P> = {}): this {
    this.definitions.set(type, definition);
    this.typeEvents.set(type, [type]);
    return this;
  }

  /**
   * Records the job under `key` and, when it is new, starts running it in the background.
   * Resolves once the record is stored: acknowledge the sender only after this.
   */
  async submit<P>(type: string, key: string, payload: P): Promise<SubmitResult<P>> {
    this.definition(type);
    const at = this.now();
    const record: JobRecord<P> = {
      type,
      key,
      payload,
      status: 'pending',
      attempts: 0,
      doneListeners: NO_LISTENERS,
      receivedAt: at,
      updatedAt: at,
    };
    const storeKey = this.storeKey(type, key);
    const created = await this.options.store.setIfAbsent(storeKey, record, this.writeOptions);
    if (!created) {
      const existing = await this.options.store.get<JobRecord<P>>(storeKey);
      return { duplicate: true, record: existing?.value ?? record };
    }
    // A new entry is at version 1 (HubtelStore): the first claim needs no read.
    this.launch(storeKey, { value: record, version: 1 });
    return { duplicate: false, record };
  }

  /** The stored record of a job, if it is still kept. */
  async get<P>(type: string, key: string): Promise<JobRecord<P> | undefined> {
    return (await this.options.store.get<JobRecord<P>>(this.storeKey(type, key)))?.value;
  }

  /** Resolves when every job running now (and retries they schedule) has settled. For tests and shutdown. */
  async drain(): Promise<void> {
    while (this.active > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.recoverOnBootstrap) return;
    // Listeners are attached by @nestjs/event-emitter in its own bootstrap hook: wait for it.
    const ready = this.options.whenReady?.() ?? new Promise<void>((resolve) => setImmediate(resolve));
    void ready
      .then(() => this.recover())
      .catch((error: unknown) => this.logger.error(`Recovery of unfinished jobs failed: ${describe(error)}`));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    const grace = this.options.shutdownGraceMs ?? 5_000;
    await Promise.race([this.drain(), sleep(grace)]);
  }

  /** Re-runs jobs left pending, or running with an expired lease (a crashed process). */
  async recover(): Promise<number> {
    let count = 0;
    for await (const [storeKey, entry] of this.options.store.scan<JobRecord>(this.prefix)) {
      const job = entry.value;
      const stale = job.status === 'running' && (job.leaseUntil ?? 0) < this.now();
      if (job.status === 'pending' || stale) {
        if (!this.definitions.has(job.type)) continue;
        this.launch(storeKey, undefined);
        count++;
      }
    }
    if (count > 0) this.logger.log(`Recovered ${count} unfinished job(s)`);
    return count;
  }

  private storeKey(type: string, key: string): string {
    return `${this.prefix}${type}:${key}`;
  }

  private definition(type: string): JobDefinition<any> {
    const definition = this.definitions.get(type);
    if (!definition)
      throw new HubtelError(
        'HUBTEL_CONFIG_INVALID',
        `Unknown job type "${type}" in pipeline ${this.options.name}`,
      );
    return definition;
  }

  private policy(definition: JobDefinition<any>): JobRetryPolicy {
    return { ...DEFAULT_JOB_RETRY, ...this.options.retry, ...definition.retry };
  }

  /**
   * Starts a job on the next turn of the event loop, so the caller acknowledges first (the job
   * never delays the HTTP answer). Jobs launched in the same turn share one setImmediate and start
   * in launch order, as they would with one each.
   */
  private launch(storeKey: string, known: StoreEntry<JobRecord> | undefined): void {
    this.active++;
    this.queue.push(storeKey, known);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.startQueued);
  }

  private readonly startQueued = (): void => {
    const queue = this.queue;
    this.queue = [];
    this.scheduled = false;
    for (let index = 0; index < queue.length; index += 2) {
      void this.work(queue[index] as string, queue[index + 1] as StoreEntry<JobRecord> | undefined);
    }
  };

  /** Runs one job to its outcome (retries included). Never rejects: failures end in the log. */
  private async work(storeKey: string, known: StoreEntry<JobRecord> | undefined): Promise<void> {
    try {
      for (;;) {
        const claimed = await this.claim(storeKey, known);
        known = undefined; // a retry claims afresh
        if (!claimed) return;
        if (!(await this.attempt(storeKey, claimed))) return;
      }
    } catch (error) {
      // attempt() handles its own failures; reaching here means the store itself failed.
      this.logger.error(`Job ${storeKey} stopped: ${describe(error)}`);
    } finally {
      if (--this.active === 0 && this.idleWaiters.length > 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    }
  }

  /** Runs one attempt of a claimed job and records its outcome. True when it is to be retried. */
  private async attempt(storeKey: string, entry: StoreEntry<JobRecord>): Promise<boolean> {
    const job = entry.value;
    const definition = this.definition(job.type);
    const attempt = job.attempts + 1;

    let error: unknown;
    let doneListeners = job.doneListeners;
    let results = job.results;
    try {
      if (definition.run) {
        await definition.run(job.payload, { attempt, record: job });
      } else {
        ({ doneListeners, results } = await this.dispatch(job, definition));
      }
    } catch (caught) {
      error = caught instanceof ListenerFailure ? caught.cause : caught;
      if (caught instanceof ListenerFailure) ({ doneListeners, results } = caught.progress);
    }

    const updatedAt = this.now();
    if (error === undefined) {
      const done = settledRecord(job, 'done', attempt, doneListeners, results, updatedAt, undefined);
      await this.write(storeKey, entry, definition.compactWhenDone ? compact(done, definition) : done);
      // The hook gets the full record, even when a compacted one was stored.
      if (definition.onSettled) await this.settle(definition, done, 'done');
      return false;
    }

    const policy = this.policy(definition);
    const message = describe(error);
    const elapsed = updatedAt - job.receivedAt;
    const delay = backoffDelay(attempt, policy, this.options.random);
    const outOfTime = policy.deadlineMs !== undefined && elapsed + delay >= policy.deadlineMs;
    if (attempt >= policy.maxAttempts || outOfTime) {
      const dead = settledRecord(job, 'dead', attempt, doneListeners, results, updatedAt, message);
      entry = await this.write(storeKey, entry, dead);
      this.logger.error(
        `Job ${job.type} ${maskPhoneNumbers(job.key)} gave up after ${attempt} attempt(s): ${message} (dead-lettered)`,
      );
      await this.deadLetter(entry.value, message);
      await this.settle(definition, entry.value, 'dead', error);
      return false;
    }

    // The next turn of the loop claims the job afresh, so the written entry is not kept.
    await this.write(
      storeKey,
      entry,
      settledRecord(job, 'pending', attempt, doneListeners, results, updatedAt, message),
    );
    this.logger.warn(
      `Job ${job.type} ${maskPhoneNumbers(job.key)} failed (attempt ${attempt}/${policy.maxAttempts}): ${message}; retrying in ${delay} ms`,
    );
    await sleep(delay, this.stopping.signal);
    // On shutdown the job stays pending in the store; a persistent store recovers it on restart.
    return !this.stopping.signal.aborted;
  }

  /**
   * Takes the job for this process (compare-and-set), so two instances never run it at once.
   * `known`: the entry as this process just wrote it (a new job), tried without reading it first.
   */
  private async claim(
    storeKey: string,
    known: StoreEntry<JobRecord> | undefined,
  ): Promise<StoreEntry<JobRecord> | undefined> {
    let entry = known ?? (await this.options.store.get<JobRecord>(storeKey));
    for (let tries = 0; tries < 5; tries++) {
      if (!entry) return undefined;
      const job = entry.value;
      const now = this.now();
      const leaseFree = job.status === 'pending' || (job.status === 'running' && (job.leaseUntil ?? 0) < now);
      if (!leaseFree) return undefined;
      const next: JobRecord = {
        type: job.type,
        key: job.key,
        payload: job.payload,
        status: 'running',
        attempts: job.attempts,
        doneListeners: job.doneListeners,
        receivedAt: job.receivedAt,
        updatedAt: now,
        leaseUntil: now + this.leaseMs,
      };
      if (job.results !== undefined) next.results = job.results;
      if (job.lastError !== undefined) next.lastError = job.lastError;
      const written = await this.options.store.compareAndSet(
        storeKey,
        entry.version,
        next,
        this.writeOptions,
      );
      if (written) return written;
      entry = await this.options.store.get<JobRecord>(storeKey);
    }
    return undefined;
  }

  private async write(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    next: JobRecord,
  ): Promise<StoreEntry<JobRecord>> {
    const written = await this.options.store.compareAndSet(storeKey, entry.version, next, this.writeOptions);
    // We hold the lease, so nobody else should have written; if they did, keep our outcome anyway.
    return written ?? (await this.options.store.set(storeKey, next, this.writeOptions));
  }

  /** Calls each listener of the job's event(s) that has not succeeded yet, in order. */
  private async dispatch(job: JobRecord, definition: JobDefinition<any>): Promise<DispatchProgress> {
    const events = definition.events?.(job.payload) ?? this.typeEvents.get(job.type) ?? [job.type];
    const emitter = this.options.emitter;
    const listeners = (
      events.length === 1
        ? emitter.listeners(events[0]!)
        : events.flatMap((event) => emitter.listeners(event))
    ) as Array<(payload: unknown) => unknown>;
    if (listeners.length === 0) {
      const names = events.map((event) => `"${event}"`).join(', ');
      if (definition.requireListener) throw new Error(`No handler is listening to ${names}`);
      this.logger.warn(
        `No handler is listening to ${names}; the event for ${maskPhoneNumbers(job.key)} was not handled by the app`,
      );
      return { doneListeners: NO_LISTENERS, results: job.results };
    }
    const before = job.doneListeners;
    const results = definition.keepResults ? { ...job.results } : undefined;
    // Listeners run in index order, so `done` comes out sorted.
    const done: number[] = [];
    let failure: unknown;
    for (let index = 0; index < listeners.length; index++) {
      if (before.length > 0 && before.includes(index)) {
        done.push(index);
        continue;
      }
      try {
        const value = await listeners[index]!(job.payload);
        done.push(index);
        if (results && value !== undefined) results[String(index)] = value;
      } catch (error) {
        failure ??= error;
      }
    }
    // Indexes beyond today's listeners (fewer listeners than on an earlier attempt) are kept.
    for (const index of before) if (index >= listeners.length) done.push(index);
    const progress: DispatchProgress = { doneListeners: exactList(done), results };
    if (failure !== undefined) throw new ListenerFailure(failure, progress);
    return progress;
  }

  private async deadLetter(job: JobRecord, error: string): Promise<void> {
    const event = new DeadLetterEvent(
      job.type,
      job.key,
      job.payload,
      job.attempts,
      error,
      new Date(job.receivedAt),
    );
    try {
      await this.options.emitter.emitAsync(this.options.deadLetterEvent, event);
    } catch (listenerError) {
      this.logger.error(`A dead-letter listener failed: ${describe(listenerError)}`);
    }
  }

  private async settle(
    definition: JobDefinition<any>,
    job: JobRecord,
    outcome: JobOutcome,
    error?: unknown,
  ): Promise<void> {
    if (!definition.onSettled) return;
    try {
      await definition.onSettled(job, outcome, error);
    } catch (hookError) {
      this.logger.error(
        `After-job hook of ${job.type} ${maskPhoneNumbers(job.key)} failed: ${describe(hookError)}`,
      );
    }
  }
}

interface DispatchProgress {
  doneListeners: number[];
  results: Record<string, unknown> | undefined;
}

class ListenerFailure extends Error {
  constructor(
    override readonly cause: unknown,
    readonly progress: DispatchProgress,
  ) {
    super('listener failed');
  }
}

/** `[0, 1, … n-1]`, shared (frozen) per n: the usual outcome, every listener done. */
const ALL_DONE: number[][] = [];

/**
 * The list as it will be kept in the store: a shared one when every listener is done, otherwise
 * a copy of exactly its length (an array grown by push keeps spare capacity, for as long as the
 * record is kept).
 */
function exactList(done: number[]): number[] {
  const n = done.length;
  if (n === 0) return NO_LISTENERS;
  if (done[n - 1] === n - 1) {
    return (ALL_DONE[n] ??= Object.freeze(done.slice()) as unknown as number[]);
  }
  return done.slice();
}

/** A job's record after an attempt (no lease: nobody runs it now). */
function settledRecord(
  job: JobRecord,
  status: JobStatus,
  attempts: number,
  doneListeners: number[],
  results: Record<string, unknown> | undefined,
  updatedAt: number,
  lastError: string | undefined,
): JobRecord {
  const next: JobRecord = {
    type: job.type,
    key: job.key,
    payload: job.payload,
    status,
    attempts,
    doneListeners,
    receivedAt: job.receivedAt,
    updatedAt,
  };
  if (results !== undefined) next.results = results;
  if (lastError !== undefined) next.lastError = lastError;
  return next;
}

/** What a done job's record keeps with `compactWhenDone`: enough to recognise its key. */
function compact(done: JobRecord, definition: JobDefinition<any>): JobRecord {
  return {
    type: done.type,
    key: done.key,
    payload: definition.compactWhenDone!(done.payload, done),
    status: 'done',
    attempts: done.attempts,
    doneListeners: NO_LISTENERS,
    receivedAt: done.receivedAt,
    updatedAt: done.updatedAt,
    compacted: true,
  };
}

function describe(error: unknown): string {
  return maskPhoneNumbers(error instanceof Error ? error.message : String(error));
}
