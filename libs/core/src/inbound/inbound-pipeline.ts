import { setMaxListeners } from 'node:events';
import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import { HubtelError } from '../errors/hubtel.errors.js';
import { maskPhoneNumbers } from '../logging/redact.js';
import { backoffDelay, sleep } from '../retry/backoff.js';
import { HandlerRegistry, type PipelineHandler } from '../events/handler-registry.js';
import type { HubtelStore, StoreEntry } from '../store/hubtel-store.interface.js';
import { MemoryStore } from '../store/memory.store.js';
import { handlerSignal, jobSignal } from './inbound-telemetry.js';
import { listDeadLetters, requeueDeadLetter, type DeadLetter } from './inbound-dead-letters.js';
import {
  DEFAULT_SHUTDOWN_GRACE_MS,
  HubtelShuttingDownError,
  countLeftovers,
  reportShutdown,
} from './inbound-shutdown.js';
import type { HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import type { JobRunner, JobRunRef } from './job-runner.js';
import { InboundDeferrals, JobDeferral, carryDeferral, isStaleRun, runRequest } from './inbound-defer.js';

/**
 * The one inbound road of the suite, shared by checkout callbacks and fulfillment requests:
 *
 *   record (set-if-absent on the job's key) → acknowledge → run → retry with backoff → dead letter
 *
 * A job is recorded in the store BEFORE the caller acknowledges the HTTP request, so a crash after
 * the 2xx loses nothing (with a persistent store, unfinished jobs are picked up again at bootstrap,
 * and by a periodic sweep of every instance). The key makes a job idempotent: a duplicate
 * (sequential or concurrent) finds the key taken and runs nothing.
 *
 * A job either dispatches a domain event to its handlers, or runs its own function (the
 * service-app's fulfillment callback sender). Handlers (see HandlerRegistry) are called one by
 * one, and each one that succeeded is remembered by its stable identity (`Class.method@event`),
 * so a retry re-runs only the handlers that failed, even on an instance running a newer deploy
 * with handlers added, removed or reordered: one failing handler never makes another run twice.
 *
 * Ownership: a job is owned by the process holding its lease (`leaseUntil`). A running job's
 * lease is renewed every `heartbeatMs` while its handlers run, so a long handler on a live
 * instance is never taken over; a job waiting for its retry in this process is leased until its
 * `nextAttemptAt` plus a lease. Every instance sweeps the store every `sweepIntervalMs` and takes
 * over (compare-and-set, so exactly one wins) running jobs whose lease expired — their instance
 * died — and pending jobs that are due and owned by nobody.
 *
 * With a `runner` (JobRunner, e.g. BullMQ) the pipeline no longer runs jobs on its own timers: it
 * asks the runner to run a recorded job (before the acknowledgement, so the request is as durable
 * as the record), and the runner calls back for one attempt at a time, on whichever instance takes
 * it. A failed attempt records its retry (pending, `nextAttemptAt`, leased to nobody) and asks the
 * runner for the next run after the backoff; the runner's own crash detection replaces the lease
 * takeover, and the sweep only asks the runner again for jobs it may have lost (recorded just
 * before a crash, or whose run request failed). Leases and compare-and-set still guard every run.
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
  /**
   * Identities (PipelineHandler.id) of the handlers that already succeeded, in dispatch order.
   * Absent only in a record written by a version before identities (see `doneListeners`).
   */
  doneHandlers: string[];
  /**
   * @deprecated Written by versions before handler identities: indexes in the listener order of
   * that version. Read once, when such a job is run again: mapped to today's handlers at those
   * positions (right when the deploy did not change the handler list, the usual case for an
   * upgrade; re-running every handler instead would surely run the succeeded ones twice).
   */
  doneListeners?: number[];
  /**
   * With `keepResults`: what each handler that succeeded resolved to (by handler identity, in
   * dispatch order), when it was not undefined. Kept across retries, so a handler that succeeded
   * once keeps its answer.
   */
  results?: Record<string, unknown>;
  receivedAt: number;
  updatedAt: number;
  /**
   * Until when one process owns the job: while running (renewed by its heartbeat), or while it
   * waits in that process for its retry. Another instance may take the job only after it.
   */
  leaseUntil?: number;
  /** A pending job that failed: not retried before this time. */
  nextAttemptAt?: number;
  lastError?: string;
  /**
   * Set when the job is done and its definition's `compactWhenDone` replaced the payload (and
   * dropped `results` and `doneHandlers`): the record then only proves the key was handled.
   */
  compacted?: true;
  /** Pending because its run deferred it (see JobDeferral) until `nextAttemptAt`: not a failure. */
  deferred?: true;
  /** How often it deferred itself or was woken: names its next run (see inbound-defer.ts). */
  deferrals?: number;
  /** What its last deferral asked the next run to read (JSON-serialisable plain data). */
  state?: unknown;
}

export type JobOutcome = 'done' | 'dead';

/** What a job's `run` is given besides its payload. */
export interface JobRunContext<P = unknown> {
  attempt: number;
  record: JobRecord<P>;
  /**
   * Returned by `run`: run the job again at `until` (epoch ms), with `state` as `record.state`.
   * Not a failed attempt (the retry policy does not count it); durable (a delayed job of the
   * runner, or a timer here that any instance's sweep takes over should this process die).
   */
  defer(until: number, state?: unknown): JobDeferral;
  /** With `wakeOnDuplicate`: the payload of a duplicate that came while this run ran (consumed). */
  takeWake(): Promise<P | undefined>;
}

export interface JobDefinition<P = unknown> {
  /**
   * Runs the job once; throw to have it retried. When absent, the job dispatches its payload as
   * the domain event named like the job type, to every listener of that event.
   */
  run?: (payload: P, context: JobRunContext<P>) => Promise<void | JobDeferral>;
  /**
   * A duplicate submitted while the job is deferred wakes it: it runs now (on any instance) with
   * the duplicate's payload; one submitted while it runs is kept for `takeWake()`, and makes a
   * deferral that run ends with a run at once. See inbound-defer.ts.
   */
  wakeOnDuplicate?: boolean;
  /**
   * Events whose listeners a dispatching job calls, in this order (their listeners concatenated).
   * Default: the job type. Lets one job type reach per-tenant events, e.g. the service-app's
   * fulfillment of service code 711 reaches `…fulfillment:711` listeners, then the catch-all ones.
   * Return the same array for the same input (cache it): handler lists are cached per array.
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
   * undefined to drop it; `record` is the full done record, `results` included), and `results` and `doneHandlers` are dropped; the record keeps its
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
  /** True when the key was already recorded: nothing new will run (unless `woken`). */
  duplicate: boolean;
  /** With `wakeOnDuplicate`: the duplicate woke the deferred job, or was kept for its run. */
  woken?: boolean;
  record: JobRecord<P>;
}

export interface InboundPipelineOptions {
  /** Names the pipeline in logs and store keys (`checkout`, `service-app`). */
  name: string;
  store: HubtelStore;
  emitter: EventEmitter2;
  /**
   * Finds the handlers of job events and their identities. In a Nest app give it DiscoveryService
   * and MetadataScanner; the default knows only the emitter (every listener identified by position).
   */
  handlers?: HandlerRegistry;
  /** Event emitted when a job gives up. */
  deadLetterEvent: string;
  /** Defaults for every job type. */
  retry?: Partial<JobRetryPolicy>;
  /** How long finished records are kept (they are what makes duplicates detectable). */
  recordTtlMs?: number;
  /**
   * How long a job is owned by one process without news from it before another may take it over.
   * Default 30 s: short, so a dead instance's jobs resume soon, and safe because a live one renews
   * the lease of every running job every `heartbeatMs` (an event loop or store stalled for about
   * `leaseMs - heartbeatMs` could still lose a job to another instance).
   */
  leaseMs?: number;
  /** How often leases of running jobs are renewed. Default a third of `leaseMs`. */
  heartbeatMs?: number;
  /**
   * How often the store is swept for jobs to take over (a dead instance's, or due and unowned).
   * 0 disables it. Default half of `leaseMs`, and 0 with a MemoryStore (it lives in this process:
   * no other instance can leave jobs in it).
   */
  sweepIntervalMs?: number;
  /**
   * How long shutdown waits for jobs running in this process to finish (default 5 s); what is left
   * then is logged with its count (see inbound-shutdown.ts).
   */
  shutdownGraceMs?: number;
  /**
   * Runs the recorded jobs (see JobRunner). Default: this process, on its own timers. Its `leaseMs`
   * is the default of `leaseMs`.
   */
  runner?: JobRunner;
  /** Pick up unfinished jobs found in the store at bootstrap (only useful with a persistent store). */
  recoverOnBootstrap?: boolean;
  /** Resolves when event listeners are attached (EventEmitterReadinessWatcher.waitUntilReady). */
  whenReady?: () => Promise<void>;
  now?: () => number;
  random?: () => number;
  logger?: Logger;
  /** Told of each handler call and each attempt's outcome (done, retry, dead). */
  telemetry?: HubtelTelemetry;
}

export const DEFAULT_JOB_RETRY: JobRetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 };
const DEFAULT_RECORD_TTL_MS = 7 * 24 * 3600_000;
const DEFAULT_LEASE_MS = 30_000;
/** Shared by every new record: values are immutable (see HubtelStore), so one empty list serves all. */
const NO_HANDLERS: string[] = Object.freeze([]) as unknown as string[];

/** A job this process runs now: the entry as last written (renewals included). */
interface HeldLease {
  storeKey: string;
  entry: StoreEntry<JobRecord>;
  /** Its index in `held` (-1 once released or lost). */
  slot: number;
  renewal: Promise<void> | undefined;
  lost: boolean;
}

export class InboundPipeline implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
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
  /** Where open (pending or running) jobs are marked, for the periodic sweep (see `openKey`). */
  private readonly openPrefix: string;
  private readonly writeOptions: { ttlMs: number };
  private readonly leaseMs: number;
  private readonly runner: JobRunner | undefined;
  private readonly heartbeatMs: number;
  private readonly sweepIntervalMs: number;
  private readonly handlers: HandlerRegistry;
  /** Jobs running in this process, by store key: their leases, renewed by the heartbeat. */
  // An array with swap-removal, not a Map: registering is on every job's path and most jobs end
  // long before the first beat.
  private readonly held: HeldLease[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping = false;
  /** Identities of a handler list, shared by every record whose handlers all succeeded. */
  private readonly allDone = new WeakMap<readonly PipelineHandler[], string[]>();
  private readonly migrated = new Set<string>();
  /** Set by the first shutdown hook: new inbound work is refused (see `assertAcceptingInbound`). */
  private closing = false;
  /** Retries that waited here and were given back to the store at shutdown. */
  private retriesReleased = 0;
  private readonly deferrals: InboundDeferrals;

  constructor(private readonly options: InboundPipelineOptions) {
    this.logger = options.logger ?? new HubtelLogger(`Hubtel:${options.name}`);
    this.now = options.now ?? Date.now;
    this.prefix = `hubtel:${options.name}:job:`;
    this.openPrefix = `hubtel:${options.name}:open:`;
    this.writeOptions = { ttlMs: options.recordTtlMs ?? DEFAULT_RECORD_TTL_MS };
    this.runner = options.runner;
    this.leaseMs = options.leaseMs ?? options.runner?.leaseMs ?? DEFAULT_LEASE_MS;
    this.heartbeatMs = options.heartbeatMs ?? Math.max(1, Math.floor(this.leaseMs / 3));
    this.sweepIntervalMs =
      options.sweepIntervalMs ?? (options.store instanceof MemoryStore ? 0 : Math.ceil(this.leaseMs / 2));
    this.handlers =
      options.handlers ?? new HandlerRegistry({ emitter: options.emitter, logger: this.logger });
    // Each job waiting to retry listens on it; hundreds may wait at once (not a leak).
    setMaxListeners(0, this.stopping.signal);
    this.deferrals = new InboundDeferrals({
      name: options.name,
      store: options.store,
      runner: this.runner,
      writeOptions: this.writeOptions,
      leaseMs: this.leaseMs,
      signal: this.stopping.signal,
      now: this.now,
      write: (storeKey, entry, next) => this.write(storeKey, entry, next),
      launch: (storeKey) => this.launch(storeKey, undefined),
    });
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
      doneHandlers: NO_HANDLERS,
      receivedAt: at,
      updatedAt: at,
    };
    const storeKey = this.storeKey(type, key);
    // A runner leaving first runs here: the open mark goes with the record (the same round trip),
    // so should this process die in the run, the sweep of any instance hands the job to the runner.
    const here = this.runner?.firstRunHere === true;
    const created = here
      ? await this.recordWithMark(storeKey, record)
      : await this.options.store.setIfAbsent(storeKey, record, this.writeOptions);
    if (!created) {
      const existing = await this.options.store.get<JobRecord<P>>(storeKey);
      const job = existing?.value;
      // Recorded, never run, owned by nobody: the sender may have got an error although the record
      // was written (a store that died before its reply, or a queue unreachable), so no process
      // launched it, and no open mark shows it to the sweeps. The sender's retry starts it now:
      // asked of the runner again (it keeps one per run), or launched here (the claim's
      // compare-and-set lets only one process run it, should its first launch still be under way).
      if (job?.status === 'pending' && job.attempts === 0 && !job.deferrals && (job.leaseUntil ?? 0) < at) {
        if (this.runner) {
          await this.runner.schedule(this.options.name, { storeKey, type, attempt: 1, delayMs: 0 });
        } else {
          this.markOpen(storeKey);
          this.launch(storeKey, undefined);
        }
      }
      if (this.definitions.get(type)!.wakeOnDuplicate && existing) {
        const woken = await this.deferrals.onDuplicate(storeKey, existing, payload);
        return { duplicate: true, record: job!, woken };
      }
      return { duplicate: true, record: job ?? record };
    }
    if (this.runner && !here) {
      // Before the acknowledgement: a crash right after it still leaves the job to run elsewhere.
      await this.runner.schedule(this.options.name, { storeKey, type, attempt: 1, delayMs: 0 });
      setImmediate(() => this.markOpen(storeKey));
      return { duplicate: false, record };
    }
    // A new entry is at version 1 (HubtelStore): the first claim needs no read.
    this.launch(storeKey, { value: record, version: 1 });
    return { duplicate: false, record };
  }

  /** Writes a new record and its open mark at once; true when the record is new. */
  private async recordWithMark(storeKey: string, record: JobRecord): Promise<boolean> {
    const store = this.options.store;
    const [created] = await Promise.all([
      store.setIfAbsent(storeKey, record, this.writeOptions),
      store.setIfAbsent(this.openKey(storeKey), 1, this.writeOptions),
    ]);
    return created;
  }

  /** True when a job runner decides where jobs run (any instance), false when they run here. */
  get distributed(): boolean {
    return this.runner !== undefined;
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
    if (!this.runner && !this.options.recoverOnBootstrap && this.sweepIntervalMs <= 0) return;
    // Listeners are attached by @nestjs/event-emitter in its own bootstrap hook: wait for it.
    const ready = this.options.whenReady?.() ?? new Promise<void>((resolve) => setImmediate(resolve));
    void ready
      .then(async () => {
        try {
          if (this.runner && !this.stopping.signal.aborted)
            await this.runner.start(this.options.name, this.execute);
          if (this.options.recoverOnBootstrap) await this.recover();
        } finally {
          this.startSweeping();
        }
      })
      .catch((error: unknown) => this.logger.error(`Recovery of unfinished jobs failed: ${describe(error)}`));
  }

  /** The first shutdown hook: from now on, new inbound work is answered 503 (nothing recorded). */
  onModuleDestroy(): void {
    this.closing = true;
  }

  /** False once the app shuts down: inbound endpoints then refuse new work. */
  get acceptingInbound(): boolean {
    return !this.closing;
  }

  /**
   * Throws HubtelShuttingDownError (the endpoints answer 503 with Retry-After) once the app shuts
   * down. Called by the modules' inbound entry points before they record or emit anything.
   */
  assertAcceptingInbound(what: string): void {
    if (this.closing) throw new HubtelShuttingDownError(what);
  }

  /** The jobs of this pipeline that gave up (see inbound-dead-letters.ts), oldest first. */
  listDeadLetters(): Promise<DeadLetter[]> {
    return listDeadLetters(this.options.store, this.options.name);
  }

  /**
   * Runs a dead letter again, now: only its handlers that failed run (those that succeeded are
   * named in the record). Throws HubtelDeadLetterNotFoundError / HubtelNotDeadLetterError.
   * Resolves once it is queued; `drain()` (or `get()`) shows when it settled.
   */
  async replayDeadLetter(id: string): Promise<void> {
    const { storeKey, entry } = await requeueDeadLetter(
      this.options.store,
      this.options.name,
      id,
      this.writeOptions.ttlMs,
      this.now,
    );
    const job = entry.value;
    if (!this.definitions.has(job.type)) {
      // Recorded by a deploy with another job list: left open for an instance that knows it.
      this.logger.warn(`Dead-lettered job ${id} is of a type this instance does not run; left pending`);
      return;
    }
    this.logger.log(`Replaying dead-lettered job ${job.type} ${maskPhoneNumbers(job.key)}`);
    if (this.runner) {
      // With the job's deferral count, or a once-deferred job's replay would be a stale run.
      await this.runner.schedule(this.options.name, runRequest(storeKey, job, 0));
    } else {
      this.launch(storeKey, entry);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.stopping.abort();
    if (this.sweeper) clearInterval(this.sweeper);
    const grace = this.options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    // The runner's jobs running here are left to it past the grace (another instance retakes them).
    const stopped = this.runner?.stop(this.options.name).catch((error: unknown) => {
      this.logger.error(`Stopping the job runner failed: ${describe(error)}`);
    });
    await Promise.race([Promise.all([this.drain(), stopped]), sleep(grace)]);
    // Jobs still running past the grace are left to their lease: it expires, another instance takes them.
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    const { store, name } = this.options;
    const running = this.held.length;
    await reportShutdown(this.logger, () =>
      countLeftovers(name, store, this.prefix, grace, running, this.retriesReleased),
    );
  }

  /**
   * Takes over the jobs nobody runs (at bootstrap, with recoverOnBootstrap): running with an
   * expired lease (their process died), or pending and not owned (left by a crash or a shutdown;
   * a retry not due yet is run now: the app just started, and this keeps a store no sweep visits
   * from holding it forever). Each is claimed by compare-and-set: two instances recovering at
   * once never both run a job. Resolves with how many it launched (some may then lose the claim).
   */
  async recover(): Promise<number> {
    return this.takeOver(false);
  }

  /**
   * What the timer runs every `sweepIntervalMs`: as recover(), but a pending job is taken only once
   * its retry is due. Skipped while a sweep is still going.
   */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      return await this.takeOver(true);
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * The open-job marks: each names a job recorded and not settled yet (or settled by a process that
   * died before it removed the mark). A settled job's mark is removed here.
   */
  private async *openJobs(): AsyncIterable<[string, StoreEntry<JobRecord>]> {
    const store = this.options.store;
    for await (const [openKey] of store.scan<number>(this.openPrefix)) {
      const storeKey = this.prefix + openKey.slice(this.openPrefix.length);
      const entry = await store.get<JobRecord>(storeKey);
      if (!entry || entry.value.status === 'done' || entry.value.status === 'dead') {
        await store.delete(openKey);
        continue;
      }
      yield [storeKey, entry];
    }
  }

  /** The open mark of a job. */
  private openKey(storeKey: string): string {
    return this.openPrefix + storeKey.slice(this.prefix.length);
  }

  /**
   * Marks a new job open, for the periodic sweeps of every instance (they read these marks, not
   * every record kept for days). Sent after the acknowledgement, so it costs the sender no round
   * trip; a job recorded by a process that died before marking it is found by the bootstrap
   * recovery (every record) of the next instance that starts, or run by the job runner.
   */
  private markOpen(storeKey: string): void {
    this.options.store
      .setIfAbsent(this.openKey(storeKey), 1, this.writeOptions)
      .catch((error: unknown) => this.logger.warn(`Could not mark job ${storeKey} open: ${describe(error)}`));
  }

  /** Forgets a settled job's open mark (best effort: a mark left behind is removed by the sweep). */
  private closeMark(storeKey: string, written: JobRecord): void {
    // Merged into another instance's record that still runs it: the mark stays.
    if (written.status !== 'done' && written.status !== 'dead') return;
    this.options.store.delete(this.openKey(storeKey)).catch(() => undefined);
  }

  private async takeOver(dueOnly: boolean): Promise<number> {
    let count = 0;
    // The periodic sweep reads the open marks; recovery at bootstrap reads every record (so it also
    // finds jobs recorded by a version before the marks, or with their mark lost).
    const jobs = dueOnly ? this.openJobs() : this.options.store.scan<JobRecord>(this.prefix);
    for await (const [storeKey, entry] of jobs) {
      const job = entry.value;
      if (!this.definitions.has(job.type)) continue;
      if (this.runner) {
        // Asked again (a run the runner lost), whether due or not: the runner keeps one per run.
        if (!takeable(job, this.now(), false)) continue;
        const delayMs = Math.max(0, (job.nextAttemptAt ?? 0) - this.now());
        await this.runner.schedule(this.options.name, runRequest(storeKey, job, delayMs));
        count++;
        continue;
      }
      if (!takeable(job, this.now(), dueOnly)) continue;
      // Deferred (not failed): run when due, even at bootstrap.
      if (job.deferred && (job.nextAttemptAt ?? 0) > this.now())
        this.deferrals.later(storeKey, job.nextAttemptAt! - this.now());
      else this.launch(storeKey, undefined);
      count++;
    }
    if (count > 0) this.logger.log(`Recovered ${count} unfinished job(s)`);
    return count;
  }

  private startSweeping(): void {
    if (this.sweepIntervalMs <= 0 || this.sweeper || this.stopping.signal.aborted) return;
    this.sweeper = setInterval(() => {
      this.sweep().catch((error: unknown) =>
        this.logger.error(`Sweep of unfinished jobs failed: ${describe(error)}`),
      );
    }, this.sweepIntervalMs);
    this.sweeper.unref();
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

  /**
   * The runner's callback: runs one attempt of a job, on this instance. A job another instance
   * runs now (its lease is live: the runner delivered it twice, or took it from a process that only
   * stalled) or whose retry is not due yet is waited for, then taken if still unfinished; a
   * finished one is left alone. Rejects when the store fails or this instance shuts down meanwhile,
   * so the runner keeps the run for later.
   */
  private readonly execute = async (storeKey: string, run?: JobRunRef): Promise<void> => {
    this.active++;
    try {
      // A run overtaken by a wake (the record's deferral count moved on) claims nothing.
      const current = run && ((job: JobRecord) => !isStaleRun(job, run));
      for (;;) {
        const claimed = await this.claim(storeKey, undefined, current);
        if (claimed) {
          await this.attempt(storeKey, claimed);
          return;
        }
        const job = (await this.options.store.get<JobRecord>(storeKey))?.value;
        if (!job || job.status === 'done' || job.status === 'dead' || isStaleRun(job, run)) return;
        const now = this.now();
        const until =
          job.status === 'running'
            ? (job.leaseUntil ?? 0)
            : Math.max(job.leaseUntil ?? 0, job.nextAttemptAt ?? 0);
        if (this.stopping.signal.aborted) throw new HubtelError('HUBTEL_SHUTTING_DOWN', 'Shutting down');
        await sleep(Math.max(1, until - now + 1), this.stopping.signal);
      }
    } finally {
      this.settledOne();
    }
  };

  /** Runs one job to its outcome (retries included). Never rejects: failures end in the log. */
  private async work(storeKey: string, known: StoreEntry<JobRecord> | undefined, outages = 0): Promise<void> {
    // A job just recorded by submit(), or picked up again after a store outage: marked open first
    // (on the same connection, so before its outcome removes the mark).
    // (With a runner leaving first runs here, submit() wrote the mark with the record.)
    if ((known?.version === 1 && !this.runner?.firstRunHere) || outages > 0) this.markOpen(storeKey);
    try {
      for (;;) {
        const claimed = await this.claim(storeKey, known);
        if (!claimed) return;
        // A retry claims the pending entry this process wrote (and owns by its lease).
        known = await this.attempt(storeKey, claimed);
        if (!known) return;
      }
    } catch (error) {
      // attempt() handles its own failures; reaching here means the store itself failed. The job
      // may be unmarked (its mark not written yet): this process tries it again once the store
      // answers, as the sweeps might not see it.
      this.logger.error(`Job ${storeKey} stopped: ${describe(error)}; trying again`);
      if (!this.stopping.signal.aborted) {
        this.active++;
        const delay = Math.min(5_000, 250 * 2 ** Math.min(outages, 5));
        void sleep(delay, this.stopping.signal).then(() => {
          if (this.stopping.signal.aborted) return this.settledOne();
          // work() settles the count taken above when it ends.
          void this.work(storeKey, undefined, outages + 1);
        });
      }
    } finally {
      this.settledOne();
    }
  }

  private settledOne(): void {
    if (--this.active === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /**
   * Runs one attempt of a claimed job and records its outcome. Returns the pending entry it wrote
   * when the job is to be retried (after its backoff), undefined otherwise.
   */
  private async attempt(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
  ): Promise<StoreEntry<JobRecord> | undefined> {
    const job = entry.value;
    const definition = this.definition(job.type);
    const attempt = job.attempts + 1;

    let error: unknown;
    let doneHandlers = job.doneHandlers ?? NO_HANDLERS;
    let results = job.results;
    let deferral: void | JobDeferral = undefined;
    const lease = this.hold(storeKey, entry);
    try {
      if (definition.run) {
        deferral = await definition.run(job.payload, {
          attempt,
          record: job,
          defer: (until, state) => new JobDeferral(until, state),
          takeWake: () => this.deferrals.takeWake(storeKey),
        });
      } else {
        ({ doneHandlers, results } = await this.dispatch(job, definition, lease));
      }
    } catch (caught) {
      error = caught instanceof ListenerFailure ? caught.cause : caught;
      if (caught instanceof ListenerFailure) ({ doneHandlers, results } = caught.progress);
    }
    // Ends the heartbeat of the job; the entry as last written (after any renewal) is written over.
    this.release(lease);
    if (lease.renewal) await lease.renewal;
    entry = lease.entry;
    if (error === undefined && deferral instanceof JobDeferral)
      return this.deferrals.defer(storeKey, entry, job, deferral);

    const updatedAt = this.now();
    if (error === undefined) {
      const done = settledRecord(job, 'done', attempt, doneHandlers, results, updatedAt, undefined);
      const written = await this.write(
        storeKey,
        entry,
        definition.compactWhenDone ? compact(done, definition) : done,
        done.doneHandlers,
      );
      this.closeMark(storeKey, written.value);
      this.options.telemetry?.record(jobSignal(this.options.name, job.type, 'done', attempt));
      // The hook gets the full record, even when a compacted one was stored.
      if (definition.onSettled) await this.settle(definition, done, 'done');
      return undefined;
    }

    const policy = this.policy(definition);
    const message = describe(error);
    const elapsed = updatedAt - job.receivedAt;
    const delay = backoffDelay(attempt, policy, this.options.random);
    const outOfTime = policy.deadlineMs !== undefined && elapsed + delay >= policy.deadlineMs;
    if (attempt >= policy.maxAttempts || outOfTime) {
      const dead = settledRecord(job, 'dead', attempt, doneHandlers, results, updatedAt, message);
      entry = await this.write(storeKey, entry, dead);
      this.closeMark(storeKey, entry.value);
      this.logger.error(
        `Job ${job.type} ${maskPhoneNumbers(job.key)} gave up after ${attempt} attempt(s): ${message} (dead-lettered)`,
      );
      this.options.telemetry?.record(jobSignal(this.options.name, job.type, 'dead', attempt));
      await this.deadLetter(entry.value, message);
      await this.settle(definition, entry.value, 'dead', error);
      return undefined;
    }

    // Leased to this process until the retry is due plus a lease, so no sweep (ours or another
    // instance's) runs it meanwhile; past that, another instance may take it (this one stalled).
    const pending = settledRecord(job, 'pending', attempt, doneHandlers, results, updatedAt, message);
    pending.nextAttemptAt = updatedAt + delay;
    // With a runner the retry is the runner's (a delayed run), not this process's.
    if (!this.runner) pending.leaseUntil = pending.nextAttemptAt + this.leaseMs;
    const written = await this.write(storeKey, entry, pending);
    // Merged into another instance's record (it took the job over): the retry is theirs.
    if (
      written.value.status !== 'pending' ||
      written.value.leaseUntil !== pending.leaseUntil ||
      written.value.nextAttemptAt !== pending.nextAttemptAt
    )
      return undefined;
    this.logger.warn(
      `Job ${job.type} ${maskPhoneNumbers(job.key)} failed (attempt ${attempt}/${policy.maxAttempts}): ${message}; retrying in ${delay} ms`,
    );
    this.options.telemetry?.record(jobSignal(this.options.name, job.type, 'retry', attempt));
    if (this.runner) {
      await this.runner.schedule(this.options.name, runRequest(storeKey, written.value, delay));
      return undefined;
    }
    await sleep(delay, this.stopping.signal);
    if (!this.stopping.signal.aborted) return written;
    // Shutting down: give the job up, so another instance (or this one restarted) takes it when due.
    const { leaseUntil: _owned, ...released } = written.value;
    await this.options.store.compareAndSet(storeKey, written.version, released, this.writeOptions);
    this.retriesReleased++;
    return undefined;
  }

  /**
   * Writes the handlers that succeeded so far into the running record (compare-and-set on the
   * entry the heartbeat also writes: it waits for a renewal under way, and is one itself). Best
   * effort: a failed write only leaves the attempt's final write to record them.
   */
  private async saveProgress(
    lease: HeldLease,
    done: readonly string[],
    results: Record<string, unknown> | undefined,
  ): Promise<void> {
    if (lease.slot < 0) return;
    if (lease.renewal) await lease.renewal;
    const save = async (): Promise<void> => {
      const value: JobRecord = { ...lease.entry.value, doneHandlers: done.slice() };
      if (results) value.results = { ...value.results, ...results };
      try {
        const written = await this.options.store.compareAndSet(
          lease.storeKey,
          lease.entry.version,
          value,
          this.writeOptions,
        );
        if (written) lease.entry = written;
      } catch (error) {
        this.logger.warn(`Could not record the progress of job ${lease.storeKey}: ${describe(error)}`);
      }
    };
    const saving = save();
    lease.renewal = saving.finally(() => (lease.renewal = undefined));
    await lease.renewal;
  }

  /** Registers a running job for the heartbeat, which renews its lease while it runs. */
  private hold(storeKey: string, entry: StoreEntry<JobRecord>): HeldLease {
    const lease: HeldLease = { storeKey, entry, slot: this.held.length, renewal: undefined, lost: false };
    this.held.push(lease);
    if (!this.heartbeat && !this.stopping.signal.aborted) {
      this.heartbeat = setInterval(this.renewLeases, this.heartbeatMs);
      this.heartbeat.unref();
    }
    return lease;
  }

  private release(lease: HeldLease): void {
    if (lease.slot < 0) return;
    const last = this.held.pop()!;
    if (last !== lease) {
      this.held[lease.slot] = last;
      last.slot = lease.slot;
    }
    lease.slot = -1;
  }

  /** The heartbeat: renews the lease of every job running for at least half a heartbeat. */
  private readonly renewLeases = (): void => {
    const now = this.now();
    for (const lease of this.held) {
      if (lease.renewal || (lease.entry.value.leaseUntil ?? 0) - now > this.leaseMs - this.heartbeatMs / 2)
        continue;
      lease.renewal = this.renew(lease.storeKey, lease).finally(() => (lease.renewal = undefined));
    }
  };

  private async renew(storeKey: string, lease: HeldLease): Promise<void> {
    const { value, version } = lease.entry;
    try {
      const written = await this.options.store.compareAndSet(
        storeKey,
        version,
        { ...value, leaseUntil: this.now() + this.leaseMs },
        this.writeOptions,
      );
      if (written) {
        lease.entry = written;
        return;
      }
      lease.lost = true;
      this.release(lease);
      this.logger.warn(
        `Job ${value.type} ${maskPhoneNumbers(value.key)} was taken over by another instance while it ran here (its lease expired): its handlers may run twice`,
      );
    } catch (error) {
      // The store is unreachable: try again on the next beat (the lease still runs).
      this.logger.warn(`Could not renew the lease of job ${storeKey}: ${describe(error)}`);
    }
  }

  /**
   * Takes the job for this process (compare-and-set), so two instances never run it at once.
   * `known`: the entry as this process just wrote it (a new job, or its own pending retry: owned,
   * so taken whatever its lease says), tried without reading it first.
   */
  private async claim(
    storeKey: string,
    known: StoreEntry<JobRecord> | undefined,
    accept?: (job: JobRecord) => boolean,
  ): Promise<StoreEntry<JobRecord> | undefined> {
    let entry = known ?? (await this.options.store.get<JobRecord>(storeKey));
    let owned = known !== undefined;
    for (let tries = 0; tries < 5; tries++) {
      if (!entry) return undefined;
      const job = entry.value;
      const now = this.now();
      if (owned ? job.status !== 'pending' : !takeable(job, now, false) || accept?.(job) === false)
        return undefined;
      const next: JobRecord = {
        type: job.type,
        key: job.key,
        payload: job.payload,
        status: 'running',
        attempts: job.attempts,
        doneHandlers: job.doneHandlers,
        receivedAt: job.receivedAt,
        updatedAt: now,
        leaseUntil: now + this.leaseMs,
      };
      // A record of the version before identities: kept until its first dispatch maps it.
      if (job.doneHandlers === undefined && job.doneListeners !== undefined)
        next.doneListeners = job.doneListeners;
      if (job.results !== undefined) next.results = job.results;
      if (job.lastError !== undefined) next.lastError = job.lastError;
      carryDeferral(job, next);
      const written = await this.options.store.compareAndSet(
        storeKey,
        entry.version,
        next,
        this.writeOptions,
      );
      if (written) return written;
      entry = await this.options.store.get<JobRecord>(storeKey);
      owned = false;
    }
    return undefined;
  }

  /**
   * Writes an attempt's outcome over the entry this process claimed. `done`: the handlers that
   * succeeded in it (`next` may be compacted).
   *
   * A store outage is waited out (tried again every 50 ms, backing off to 1 s, until the store
   * answers or the app shuts down): the handlers have run, and a record left `running` would have
   * them run again by the instance that takes the job over once its lease runs out. Written within
   * the lease, the outcome holds (a longer outage ends in the merge below).
   */
  private async write(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    next: JobRecord,
    done: string[] = next.doneHandlers,
  ): Promise<StoreEntry<JobRecord>> {
    for (let failures = 0; ; failures++) {
      try {
        return await this.writeOnce(storeKey, entry, next, done);
      } catch (error) {
        if (!isStoreUnavailable(error) || this.stopping.signal.aborted) throw error;
        if (failures === 0)
          this.logger.warn(
            `Could not record the outcome of job ${next.type} ${maskPhoneNumbers(next.key)}: ${describe(error)}; trying again until the store answers`,
          );
        await sleep(Math.min(1_000, 50 * 2 ** Math.min(failures, 5)), this.stopping.signal);
      }
    }
  }

  private async writeOnce(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    next: JobRecord,
    done: string[],
  ): Promise<StoreEntry<JobRecord>> {
    const store = this.options.store;
    const written = await store.compareAndSet(storeKey, entry.version, next, this.writeOptions);
    if (written) return written;
    // Someone wrote meanwhile: this process stalled past its lease and another instance took the
    // job. Keep both outcomes, so neither instance re-runs what the other did.
    this.logger.warn(
      `Job ${next.type} ${maskPhoneNumbers(next.key)} was taken over by another instance while it ran here: merging outcomes`,
    );
    for (let tries = 0; tries < 5; tries++) {
      const current = await store.get<JobRecord>(storeKey);
      if (!current) break;
      const merged = mergeOutcome(current.value, next, done, this.now());
      if (merged === current.value) return current;
      const again = await store.compareAndSet(storeKey, current.version, merged, this.writeOptions);
      if (again) return again;
    }
    return store.set(storeKey, next, this.writeOptions);
  }

  /** Calls each handler of the job's event(s) that has not succeeded yet, in order. */
  private async dispatch(
    job: JobRecord,
    definition: JobDefinition<any>,
    lease: HeldLease,
  ): Promise<DispatchProgress> {
    const events = definition.events?.(job.payload) ?? this.typeEvents.get(job.type) ?? [job.type];
    const handlers = this.handlers.handlersOf(events);
    const legacy = job.doneHandlers === undefined ? this.fromIndexes(job, handlers) : undefined;
    const before = legacy ? legacy.before : job.doneHandlers;
    const previous = legacy ? legacy.previous : job.results;
    if (handlers.length === 0) {
      const names = events.map((event) => `"${event}"`).join(', ');
      if (definition.requireListener) throw new Error(`No handler is listening to ${names}`);
      this.logger.warn(
        `No handler is listening to ${names}; the event for ${maskPhoneNumbers(job.key)} was not handled by the app`,
      );
      return { doneHandlers: before, results: previous };
    }
    // Built in dispatch order, so readers see answers in handler order (keys are not numbers).
    const results: Record<string, unknown> | undefined = definition.keepResults ? {} : undefined;
    const done: string[] = [];
    let failure: unknown;
    for (const handler of handlers) {
      const id = handler.id;
      if (before.length > 0 && before.includes(id)) {
        done.push(id);
        if (results && previous?.[id] !== undefined) results[id] = previous[id];
        continue;
      }
      try {
        const value = await handler.call(job.payload);
        this.options.telemetry?.record(handlerSignal(this.options.name, job.type, id, true));
        done.push(id);
        if (results && value !== undefined) results[id] = value;
        // More handlers to call: record this one's success now, so a crash in a later one (this
        // process killed mid-handler) never has it run again where the job is taken over.
        if (handler !== handlers[handlers.length - 1]) await this.saveProgress(lease, done, results);
      } catch (error) {
        this.options.telemetry?.record(handlerSignal(this.options.name, job.type, id, false));
        failure ??= error;
      }
    }
    // Handlers that succeeded and are gone today (a deploy removed them) stay remembered, with
    // their answers: should they come back, they have run already.
    for (const id of before) if (!done.includes(id)) done.push(id);
    if (results && previous) for (const id in previous) if (!(id in results)) results[id] = previous[id];
    const progress: DispatchProgress = { doneHandlers: this.kept(done, handlers), results };
    if (failure !== undefined) throw new ListenerFailure(failure, progress);
    return progress;
  }

  /**
   * What already succeeded, by identity. A record of the version before identities holds listener
   * indexes: they are read as today's handlers at those positions (see JobRecord.doneListeners).
   */
  private fromIndexes(
    job: JobRecord,
    handlers: readonly PipelineHandler[],
  ): { before: string[]; previous: Record<string, unknown> | undefined } {
    const indexes = job.doneListeners ?? [];
    const before = indexes.filter((index) => index < handlers.length).map((index) => handlers[index]!.id);
    let previous: Record<string, unknown> | undefined;
    if (job.results) {
      previous = {};
      for (const [index, value] of Object.entries(job.results)) {
        const handler = handlers[Number(index)];
        if (handler) previous[handler.id] = value;
      }
    }
    if (indexes.length > 0 && !this.migrated.has(job.key)) {
      this.migrated.add(job.key);
      this.logger.warn(
        `Job ${job.type} ${maskPhoneNumbers(job.key)} was recorded before handler identities: its succeeded handlers ${JSON.stringify(indexes)} are taken as today's at those positions (${before.join(', ') || 'none'})`,
      );
    }
    return { before, previous };
  }

  /**
   * The list as it will be kept in the store: a shared one when every handler is done (the usual
   * outcome), otherwise a copy of exactly its length (an array grown by push keeps spare capacity,
   * for as long as the record is kept).
   */
  private kept(done: string[], handlers: readonly PipelineHandler[]): string[] {
    if (done.length === 0) return NO_HANDLERS;
    if (done.length === handlers.length && done.every((id, index) => id === handlers[index]!.id)) {
      let shared = this.allDone.get(handlers);
      if (!shared) {
        shared = Object.freeze(done.slice()) as unknown as string[];
        this.allDone.set(handlers, shared);
      }
      return shared;
    }
    return done.slice();
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
  doneHandlers: string[];
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

/**
 * May this process take the job? Running with an expired lease (its process died), or pending and
 * not leased (a fresh job between its record and its run, or one a process gave up on), and with
 * `dueOnly`, its retry due.
 */
function takeable(job: JobRecord, now: number, dueOnly: boolean): boolean {
  if (job.status === 'running') return (job.leaseUntil ?? 0) < now;
  return (
    job.status === 'pending' && (job.leaseUntil ?? 0) < now && (!dueOnly || (job.nextAttemptAt ?? 0) <= now)
  );
}

/**
 * This process's outcome of an attempt (`ours`, with the handlers that succeeded in it: `done`)
 * merged with the record another instance wrote meanwhile (`theirs`). Returns `theirs` itself when
 * it stands as it is.
 */
function mergeOutcome(theirs: JobRecord, ours: JobRecord, done: string[], now: number): JobRecord {
  const settled = theirs.status === 'done' || theirs.status === 'dead';
  const runningThere = theirs.status === 'running' && (theirs.leaseUntil ?? 0) >= now;
  // Settled there (unless it gave up where all succeeded here), or running there now: theirs
  // stands, told what succeeded here.
  if ((settled && !(theirs.status === 'dead' && ours.status === 'done')) || runningThere) {
    if (settled || done.every((id) => theirs.doneHandlers?.includes(id))) return theirs;
    const merged: JobRecord = { ...theirs, doneHandlers: union(theirs.doneHandlers, done) };
    if (ours.results) merged.results = { ...ours.results, ...theirs.results };
    return merged;
  }
  // Nobody runs it there: ours stands, with what succeeded there too.
  if (ours.compacted) return ours;
  const merged: JobRecord = { ...ours, doneHandlers: union(ours.doneHandlers, theirs.doneHandlers) };
  if (theirs.results) merged.results = { ...theirs.results, ...ours.results };
  return merged;
}

function union(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] {
  const out = [...(a ?? [])];
  for (const id of b ?? []) if (!out.includes(id)) out.push(id);
  return out;
}

/** A job's record after an attempt (no lease: nobody runs it now). */
function settledRecord(
  job: JobRecord,
  status: JobStatus,
  attempts: number,
  doneHandlers: string[],
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
    doneHandlers,
    receivedAt: job.receivedAt,
    updatedAt,
  };
  if (results !== undefined) next.results = results;
  if (lastError !== undefined) next.lastError = lastError;
  return carryDeferral(job, next);
}

/** What a done job's record keeps with `compactWhenDone`: enough to recognise its key. */
function compact(done: JobRecord, definition: JobDefinition<any>): JobRecord {
  return {
    type: done.type,
    key: done.key,
    payload: definition.compactWhenDone!(done.payload, done),
    status: 'done',
    attempts: done.attempts,
    doneHandlers: NO_HANDLERS,
    receivedAt: done.receivedAt,
    updatedAt: done.updatedAt,
    compacted: true,
  };
}

function describe(error: unknown): string {
  return maskPhoneNumbers(error instanceof Error ? error.message : String(error));
}

/** The store could not be reached (down, or too slow): the write may succeed when tried again. */
function isStoreUnavailable(error: unknown): boolean {
  return error instanceof HubtelError && error.code === 'HUBTEL_STORE_UNAVAILABLE';
}
