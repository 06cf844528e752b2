import type { Logger } from '@nestjs/common';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import type { HandlerRegistry } from '../events/handler-registry.js';
import type { HubtelStore } from '../store/hubtel-store.interface.js';
import { HubtelError } from '../errors/hubtel.errors.js';
import { HUBTEL_DEFAULT_ACCOUNT } from '../hubtel.constants.js';
import type { HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import type { JobRunner } from './job-runner.js';

export interface JobRetryPolicy {
  /** Total runs allowed, the first included. `Infinity` with a `deadlineMs` retries until then. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Give up once this long has passed since the job was recorded. */
  deadlineMs?: number;
}

/** `pending` until it settles: when it runs is the runner's, not the record's. */
export type JobStatus = 'pending' | 'done' | 'dead';

export interface JobRecord<P = unknown> {
  type: string;
  key: string;
  payload: P;
  status: JobStatus;
  /** Runs that ended (deferrals not counted). */
  attempts: number;
  /** Identities (PipelineHandler.id) of the handlers that already succeeded, in dispatch order. */
  doneHandlers: string[];
  /** With `keepResults`: what each handler that succeeded resolved to (by identity), when defined. */
  results?: Record<string, unknown>;
  receivedAt: number;
  updatedAt: number;
  lastError?: string;
  /** Which run the runner holds (absent: 1): a replay asks for a new one. */
  run?: number;
  /** Done, and `compactWhenDone` replaced the payload (and dropped `results` and `doneHandlers`). */
  compacted?: true;
  /** Pending because its run deferred it (see JobRunContext.defer): not a failure. */
  deferred?: true;
  /** Pending with its outcome decided, because `beforeSettled` failed: only that is tried again. */
  settling?: JobOutcome;
  /** What its last deferral asked the next run to read (JSON-serialisable plain data). */
  state?: unknown;
  /** Settled: the follow-ups' store keys, asked for again should a run find it settled (a crash before). */
  then?: string[];
}

export type JobOutcome = 'done' | 'dead';

/** What `run` returns (from `context.defer`) to be run again at `until` (epoch ms). */
export class JobDeferral {
  constructor(
    readonly until: number,
    readonly state?: unknown,
  ) {}
}

/** What a job's `run` is given besides its payload. */
export interface JobRunContext<P = unknown> {
  attempt: number;
  record: JobRecord<P>;
  /** True when a duplicate started this run (`wakeOnDuplicate`): its payload is this run's. */
  woken: boolean;
  /** Returned by `run`: run the job again at `until`, with `state` as `record.state` (not a failure). */
  defer(until: number, state?: unknown): JobDeferral;
  /** With `wakeOnDuplicate`: the payload of a duplicate that came while this run ran (consumed). */
  takeWake(): Promise<P | undefined>;
}

/** What a job's `gate` answers when the job must not run: settled as `outcome`, `reason` logged. */
export interface JobRefusal {
  outcome: JobOutcome;
  reason: string;
}

/** Given to `onSettled` for a job its gate settled, and thrown by a refused replay: nothing ran. */
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
  /** Asked before every run, whatever led to it (retry, takeover, wake, replay); a refusal settles. */
  gate?: (payload: P, record: JobRecord<P>, read?: Promise<unknown>) => Promise<JobRefusal | undefined>;
  /** What the gate reads besides the record, in its round trip (`record`: as submitted, at a first start). */
  gateRead?: (key: string, record?: JobRecord<P>) => Promise<unknown>;
  /** How long a done record is kept (default `recordTtlMs`): short for records forged ones may fill. */
  doneTtlMs?: (record: JobRecord<P>) => number | undefined;
  /** Runs the job once; throw to retry. Absent: dispatches the payload as the event named like the type. */
  run?: (payload: P, context: JobRunContext<P>) => Promise<void | JobDeferral>;
  /** A duplicate wakes a deferred job now, or is kept for a running one's `takeWake()`. */
  wakeOnDuplicate?: boolean;
  /** Events whose listeners a dispatching job calls, in order. Default: the type. Same input, same array. */
  events?: (payload: P) => readonly string[];
  /** No listener attached fails the attempt (for jobs whose success is reported to someone). */
  requireListener?: boolean;
  /** Keep what each listener resolves to in `record.results` (JSON-serialisable plain data). */
  keepResults?: boolean;
  retry?: Partial<JobRetryPolicy>;
  /** Once done, the payload becomes what this returns (still detects duplicates). Dead jobs keep all. */
  compactWhenDone?: (payload: P, record: JobRecord<P>) => unknown;
  /**
   * Before a decided outcome is recorded (not a gate's refusal): what must follow it for sure. Throw to
   * keep the job pending, retried for this alone; idempotent. `followUps` run once it is settled.
   */
  beforeSettled?: (record: JobRecord<P>, outcome: JobOutcome, followUps: JobFollowUps) => Promise<void>;
  /** Called once when the job is done or dead (after the dead-letter event). Errors are logged. */
  onSettled?: (record: JobRecord<P>, outcome: JobOutcome, error?: unknown) => Promise<void> | void;
}

/** Submits jobs that follow the settling one (see `JobDefinition.beforeSettled`). */
export interface JobFollowUps {
  submit<P>(type: string, key: string, payload: P): Promise<SubmitResult<P>>;
}

/** Payload of the dead-letter event: a job gave up. It stays in the store with status `dead`. */
export class DeadLetterEvent<P = unknown> {
  /** The job's account: `payload.account`, else `default` (read by handlers' `account` filter). */
  readonly account: string;

  constructor(
    readonly type: string,
    readonly key: string,
    readonly payload: P,
    readonly attempts: number,
    readonly error: string,
    readonly receivedAt: Date,
  ) {
    const account = (payload as { account?: unknown } | null | undefined)?.account;
    this.account = typeof account === 'string' ? account : HUBTEL_DEFAULT_ACCOUNT;
  }
}

export interface SubmitResult<P = unknown> {
  /** True when the key was already recorded: nothing new will run (unless `woken`). */
  duplicate: boolean;
  /** With `wakeOnDuplicate`: the duplicate woke the job, or was kept for its run. */
  woken?: boolean;
  record: JobRecord<P>;
}

export interface InboundPipelineOptions {
  /** Names the pipeline in logs, store keys and queues (`checkout`, `service-app`). */
  name: string;
  store: HubtelStore;
  emitter: EventEmitter2;
  /** Finds the handlers of job events and their identities (DiscoveryService in a Nest app). */
  handlers?: HandlerRegistry;
  /** Event emitted when a job gives up. */
  deadLetterEvent: string;
  /** Defaults for every job type. */
  retry?: Partial<JobRetryPolicy>;
  /** How long finished records are kept (they are what makes duplicates detectable). */
  recordTtlMs?: number;
  /** How long shutdown waits for jobs running here (default 5 s); what is left is logged. */
  shutdownGraceMs?: number;
  /** Where and when jobs run: BullMQ with Redis; default an InProcessJobRunner (memory, one process). */
  runner?: JobRunner;
  /** Resolves when event listeners are attached (EventEmitterReadinessWatcher.waitUntilReady). */
  whenReady?: () => Promise<void>;
  now?: () => number;
  random?: () => number;
  logger?: Logger;
  /** Told of each handler call and each attempt's outcome (done, retry, dead). */
  telemetry?: HubtelTelemetry;
}

export const DEFAULT_JOB_RETRY: JobRetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 };
