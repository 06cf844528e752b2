import { setMaxListeners } from 'node:events';
import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import { HubtelError } from '../errors/hubtel.errors.js';
import { maskPhoneNumbers } from '../logging/redact.js';
import { sleep } from '../retry/backoff.js';
import { HandlerRegistry } from '../events/handler-registry.js';
import type { StoreEntry } from '../store/hubtel-store.interface.js';
import { MemoryStore } from '../store/memory.store.js';
import { listDeadLetters, requeueDeadLetter, type DeadLetter } from './inbound-dead-letters.js';
import {
  DEFAULT_SHUTDOWN_GRACE_MS,
  HubtelShuttingDownError,
  countLeftovers,
  reportShutdown,
} from './inbound-shutdown.js';
import type { JobRunRef } from './job-runner.js';
import { InboundDeferrals, isStaleRun, runRequest } from './inbound-defer.js';
import { JobAttempts } from './inbound-attempt.js';
import { HandlerDispatch } from './inbound-dispatch.js';
import { NO_HANDLERS, describe, type JobsContext } from './inbound-job.records.js';
import {
  JobRefusedError,
  type InboundPipelineOptions,
  type JobDefinition,
  type JobRecord,
  type SubmitResult,
} from './inbound-job.types.js';
import { JobLeases } from './inbound-lease.js';
import { JobTakeover } from './inbound-takeover.js';

// The job record, definitions and options: public names of core, exported from here as before.
export {
  DEFAULT_JOB_RETRY,
  DeadLetterEvent,
  JobRefusedError,
  type InboundPipelineOptions,
  type JobRefusal,
  type JobDefinition,
  type JobOutcome,
  type JobRecord,
  type JobRetryPolicy,
  type JobRunContext,
  type JobStatus,
  type SubmitResult,
} from './inbound-job.types.js';

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
 *
 * Where each piece lives (this class composes them and is what the modules talk to):
 *   inbound-job.types.ts    the job record, job definitions, the pipeline's options
 *   inbound-job.records.ts  pure functions over records (who may take a job, merging outcomes)
 *   inbound-lease.ts        claim, lease, heartbeat, saved handler progress
 *   inbound-attempt.ts      one attempt: run or dispatch, outcome write, retry, dead letter
 *   inbound-dispatch.ts     calling a job's handlers, remembering which succeeded
 *   inbound-takeover.ts     open marks, the periodic sweep, recovery at bootstrap
 *   inbound-defer.ts        deferrals and wakes; inbound-shutdown.ts, inbound-dead-letters.ts
 * Submitting (record, duplicate handling) and running (launch, work, the runner's callback) are here.
 */

const DEFAULT_RECORD_TTL_MS = 7 * 24 * 3600_000;
const DEFAULT_LEASE_MS = 30_000;

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
  private readonly writeOptions: { ttlMs: number };
  private readonly runner: InboundPipelineOptions['runner'];
  private readonly sweepIntervalMs: number;
  /** Set by the first shutdown hook: new inbound work is refused (see `assertAcceptingInbound`). */
  private closing = false;
  private readonly deferrals: InboundDeferrals;
  private readonly leases: JobLeases;
  private readonly attempts: JobAttempts;
  private readonly takeover: JobTakeover;

  constructor(private readonly options: InboundPipelineOptions) {
    this.logger = options.logger ?? new HubtelLogger(`Hubtel:${options.name}`);
    this.now = options.now ?? Date.now;
    this.prefix = `hubtel:${options.name}:job:`;
    this.writeOptions = { ttlMs: options.recordTtlMs ?? DEFAULT_RECORD_TTL_MS };
    this.runner = options.runner;
    const leaseMs = options.leaseMs ?? options.runner?.leaseMs ?? DEFAULT_LEASE_MS;
    const heartbeatMs = options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3));
    const sweepIntervalMs =
      options.sweepIntervalMs ?? (options.store instanceof MemoryStore ? 0 : Math.ceil(leaseMs / 2));
    const handlers =
      options.handlers ?? new HandlerRegistry({ emitter: options.emitter, logger: this.logger });
    // Each job waiting to retry listens on it; hundreds may wait at once (not a leak).
    setMaxListeners(0, this.stopping.signal);
    const ctx: JobsContext = {
      name: options.name,
      store: options.store,
      writeOptions: this.writeOptions,
      leaseMs,
      runner: this.runner,
      signal: this.stopping.signal,
      logger: this.logger,
      telemetry: options.telemetry,
      now: this.now,
    };
    this.deferrals = new InboundDeferrals({
      name: options.name,
      store: options.store,
      runner: this.runner,
      writeOptions: this.writeOptions,
      leaseMs,
      signal: this.stopping.signal,
      now: this.now,
      write: (storeKey, entry, next) => this.attempts.write(storeKey, entry, next),
      launch: (storeKey) => this.launch(storeKey, undefined),
    });
    this.leases = new JobLeases(ctx, heartbeatMs);
    this.takeover = new JobTakeover(ctx, {
      prefix: this.prefix,
      sweepIntervalMs,
      deferrals: this.deferrals,
      knows: (type) => this.definitions.has(type),
      launch: (storeKey) => {
        this.recovering.add(storeKey);
        this.launch(storeKey, undefined);
      },
    });
    const takeover = this.takeover;
    this.attempts = new JobAttempts(ctx, {
      definition: (type) => this.definition(type),
      retry: options.retry,
      random: options.random,
      emitter: options.emitter,
      deadLetterEvent: options.deadLetterEvent,
      leases: this.leases,
      dispatch: new HandlerDispatch(ctx, handlers, this.typeEvents, this.leases),
      deferrals: this.deferrals,
      closeMark: (storeKey, written) => takeover.closeMark(storeKey, written),
    });
    this.sweepIntervalMs = sweepIntervalMs;
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
      ? await this.takeover.recordWithMark(storeKey, record)
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
          this.takeover.markOpen(storeKey);
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
      setImmediate(() => this.takeover.markOpen(storeKey));
      return { duplicate: false, record };
    }
    // A new entry is at version 1 (HubtelStore): the first claim needs no read.
    this.launch(storeKey, { value: record, version: 1 });
    return { duplicate: false, record };
  }

  /**
   * The app's event emitter, the one the pipeline dispatches on: what the module's other parts
   * emit with, so a module checks that the app has one once (see inboundKit).
   */
  get emitter(): EventEmitter2 {
    return this.options.emitter;
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
          this.takeover.start();
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
   * named in the record). Throws HubtelDeadLetterNotFoundError / HubtelNotDeadLetterError, and
   * JobRefusedError when the job's gate would leave it dead (said now to the caller; the gate is
   * asked again when it runs, as for a replay made from outside the app, which only gets there).
   * Resolves once it is queued; `drain()` (or `get()`) shows when it settled.
   */
  async replayDeadLetter(id: string): Promise<void> {
    const dead = (await this.options.store.get<JobRecord>(`${this.prefix}${id}`))?.value;
    const gate = dead?.status === 'dead' ? this.definitions.get(dead.type)?.gate : undefined;
    if (dead && gate) {
      const refusal = await gate(dead.payload, dead);
      if (refusal?.outcome === 'dead') throw new JobRefusedError(dead.type, dead.key, refusal);
    }
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
    this.takeover.stop();
    const grace = this.options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    // The runner's jobs running here are left to it past the grace (another instance retakes them).
    const stopped = this.runner?.stop(this.options.name).catch((error: unknown) => {
      this.logger.error(`Stopping the job runner failed: ${describe(error)}`);
    });
    await Promise.race([Promise.all([this.drain(), stopped]), sleep(grace)]);
    // Jobs still running past the grace are left to their lease: it expires, another instance takes them.
    this.leases.stop();
    const { store, name } = this.options;
    const running = this.leases.running;
    await reportShutdown(this.logger, () =>
      countLeftovers(name, store, this.prefix, grace, running, this.attempts.retriesReleased),
    );
  }

  /**
   * Takes over the jobs nobody runs (at bootstrap, with recoverOnBootstrap): running with an
   * expired lease (their process died), or pending and not owned (left by a crash or a shutdown;
   * a retry not due yet is run now: the app just started, and this keeps a store no sweep visits
   * from holding it forever). Each is claimed by compare-and-set: two instances recovering at
   * once never both run a job. Resolves with how many it launched (some may then lose the claim).
   */
  recover(): Promise<number> {
    return this.takeover.recover();
  }

  /**
   * What the timer runs every `sweepIntervalMs`: as recover(), but a pending job is taken only once
   * its retry is due. Skipped while a sweep is still going.
   */
  sweep(): Promise<number> {
    return this.takeover.sweep();
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

  /**
   * Starts a job on the next turn of the event loop, so the caller acknowledges first (the job
   * never delays the HTTP answer). Jobs launched in the same turn share one setImmediate and start
   * in launch order, as they would with one each.
   */
  /** Store keys launched by a takeover and not claimed yet, for the one recovery line per job run. */
  private readonly recovering = new Set<string>();

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
        const claimed = await this.leases.claim(storeKey, undefined, current);
        if (claimed) {
          await this.attempts.attempt(storeKey, claimed);
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
    if ((known?.version === 1 && !this.runner?.firstRunHere) || outages > 0) this.takeover.markOpen(storeKey);
    try {
      for (;;) {
        const claimed = await this.leases.claim(storeKey, known);
        // Said only for a taken-over job that runs here: one another instance claimed first is not.
        if (this.recovering.delete(storeKey) && claimed)
          this.logger.log(
            `Recovered unfinished job ${claimed.value.type} ${maskPhoneNumbers(claimed.value.key)}`,
          );
        if (!claimed) return;
        // A retry claims the pending entry this process wrote (and owns by its lease).
        known = await this.attempts.attempt(storeKey, claimed);
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
}
