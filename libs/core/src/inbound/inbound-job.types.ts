import type { Logger } from '@nestjs/common';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import type { HandlerRegistry } from '../events/handler-registry.js';
import type { HubtelStore } from '../store/hubtel-store.interface.js';
import { HubtelError } from '../errors/hubtel.errors.js';
import type { HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import type { JobDeferral } from './inbound-defer.js';
import type { JobRunner } from './job-runner.js';

/**
 * What the inbound pipeline (inbound-pipeline.ts) stores and is told: a job's record, the
 * definition of a job type, the pipeline's options. The road itself is described there.
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

/**
 * What a job's `gate` answers when the job must not run: it is settled as `outcome` without
 * running (no handler called), `reason` kept as its `lastError` (when dead) and logged.
 */
export interface JobRefusal {
  outcome: JobOutcome;
  reason: string;
}

/**
 * Given to `onSettled` (as its error) for a job its gate settled without running, and thrown by
 * `replayDeadLetter` for a dead letter its gate refuses: nothing ran, nothing will.
 */
export class JobRefusedError extends HubtelError {
  constructor(
    readonly type: string,
    readonly key: string,
    readonly refusal: JobRefusal,
  ) {
    super('HUBTEL_STORE_CONFLICT', refusal.reason);
  }
}

export interface JobDefinition<P = unknown> {
  /**
   * Asked before every run of the job, whatever led to it (first run, retry, takeover of a dead
   * instance's job, deferral, wake, a replay by a service method or by `hubtel-trigger
   * dead-letters`): they all meet here, so one check covers every road to the handlers. Resolve
   * undefined to run; a JobRefusal settles the job without running it. It runs under the job's
   * lease, so it may write (a claim) before the handlers run.
   */
  gate?: (payload: P, record: JobRecord<P>) => Promise<JobRefusal | undefined>;
  /**
   * How long a done record is kept (default the pipeline's `recordTtlMs`): records whose only use
   * is to make a duplicate detectable for a while (a refused order, a finished confirmation round)
   * need not stay for days, and forged ones must not. Dead ones keep the pipeline's: they may be
   * replayed.
   */
  doneTtlMs?: (record: JobRecord<P>) => number | undefined;
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
