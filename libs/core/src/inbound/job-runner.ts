import type { StoreEntry } from '../store/hubtel-store.interface.js';
import type { JobRecord } from './inbound-job.types.js';

// Where and when recorded jobs run: the runner owns time and place (retry, deferral, wake, takeover),
// the record owns which handlers succeeded. One runner per deployment.

/** A run of a recorded job, as a pipeline asks for it. */
export interface JobRunRequest {
  /** The record's store key: what the executor is called with. */
  storeKey: string;
  /** The job type (a name operators see, e.g. in a queue dashboard). */
  type: string;
  /** 1 for the first run, attempts + 1 for a replay: the same request asked twice is one run. */
  run: number;
  /** Start it no sooner than this many ms from now (the retry of a first attempt run at submit). */
  delayMs?: number;
  /** The record as submitted: a runner may give it back at the run's first start only (saving a read). */
  written?: StoreEntry<JobRecord>;
}

/** What one execution of a job came to, and so what the runner does next. */
export type JobRunOutcome =
  /** Done, dead (`dead`: why), or nothing to do (already settled): the run is over. */
  | { kind: 'settled'; dead?: string }
  /** Failed, to be retried after `delayMs` (the pipeline's backoff). */
  | { kind: 'retry'; delayMs: number; error: string }
  /** Deferred until `until` (epoch ms); once set to wait, `woken()` true means start it now. */
  | { kind: 'defer'; until: number; woken: () => Promise<boolean> };

/**
 * Runs one execution of the job under `storeKey`. `giveUp`: the runner gave the run up (e.g. stalled
 * too often): settle it dead with this reason. Rejects when the store fails: try again later.
 */
export type JobExecutor = (
  storeKey: string,
  giveUp?: string,
  written?: StoreEntry<JobRecord>,
) => Promise<JobRunOutcome>;

export interface JobRunner {
  /** True for a runner in this process: only it may sit beside a store in this process. */
  readonly local?: boolean;
  /** Starts running the jobs of a pipeline (called once its event listeners are attached). */
  start(pipeline: string, execute: JobExecutor): Promise<void>;
  /** Durably asks for a run: resolves once the request survives this process. */
  enqueue(pipeline: string, request: JobRunRequest): Promise<void>;
  /** Starts a deferred run now (a duplicate came); a no-op for a run that is not waiting. */
  wake(pipeline: string, request: JobRunRequest): Promise<void>;
  /** Runs `task` every `everyMs`, once per interval across instances (again for `name`: a no-op). */
  repeat(name: string, everyMs: number, task: () => Promise<void>): Promise<void>;
  /** Stops taking runs of the pipeline (or repeated task) here; resolves when those running ended. */
  stop(pipeline: string): Promise<void>;
  /** Optional: resolves when nothing of the pipeline runs or waits here (tests, shutdown). */
  drain?(pipeline: string): Promise<void>;
  /** Optional: whether the runner can take and run jobs now (without it: up). */
  health?(): Promise<JobRunnerHealth>;
}

/** What `JobRunner.health()` found. `details` is shown as is by health checks (no secrets). */
export interface JobRunnerHealth {
  up: boolean;
  details?: Record<string, unknown>;
}

interface Held {
  timer?: NodeJS.Timeout;
  running: boolean;
}

interface Repeated {
  timer?: NodeJS.Timeout;
  run?: Promise<void>;
}

/** One process's runner (memory store): a run is held by store key, so a job never runs twice at once. */
export class InProcessJobRunner implements JobRunner {
  readonly local = true;
  private readonly executors = new Map<string, JobExecutor>();
  private readonly held = new Map<string, Held>();
  /** Runs held per pipeline, so `drain` never scans `held`: n runs ending cost n steps, not n². */
  private readonly heldPerPipeline = new Map<string, number>();
  private readonly repeated = new Map<string, Repeated>();
  private idleWaiters: Array<() => void> = [];

  async start(pipeline: string, execute: JobExecutor): Promise<void> {
    this.executors.set(pipeline, execute);
  }

  async enqueue(pipeline: string, request: JobRunRequest): Promise<void> {
    if (!this.held.has(this.id(pipeline, request.storeKey)))
      this.later(pipeline, request.storeKey, request.delayMs ?? 0);
  }

  async wake(pipeline: string, request: JobRunRequest): Promise<void> {
    const held = this.held.get(this.id(pipeline, request.storeKey));
    if (held?.timer && !held.running) this.later(pipeline, request.storeKey, 0);
  }

  /** Runs `task` `everyMs` after its previous run ended; a failed run is the task's to report. */
  async repeat(name: string, everyMs: number, task: () => Promise<void>): Promise<void> {
    if (this.repeated.has(name)) return;
    const repeated: Repeated = {};
    const next = () => {
      repeated.timer = setTimeout(() => {
        repeated.timer = undefined;
        repeated.run = task()
          .catch(() => undefined)
          .finally(() => {
            repeated.run = undefined;
            if (this.repeated.get(name) === repeated) next();
          });
      }, everyMs);
      repeated.timer.unref();
    };
    this.repeated.set(name, repeated);
    next();
  }

  async stop(pipeline: string): Promise<void> {
    const repeated = this.repeated.get(pipeline);
    if (repeated) {
      this.repeated.delete(pipeline);
      clearTimeout(repeated.timer);
      await repeated.run;
    }
    if (!this.executors.delete(pipeline)) return;
    // Waiting runs are dropped: a memory store's records go with the process anyway.
    for (const [id, held] of this.held)
      if (id.startsWith(`${pipeline}\n`) && !held.running) {
        clearTimeout(held.timer);
        this.release(pipeline, id);
      }
    await this.drain(pipeline);
  }

  async drain(pipeline: string): Promise<void> {
    while (this.heldPerPipeline.has(pipeline))
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private later(pipeline: string, storeKey: string, delayMs: number): void {
    const id = this.id(pipeline, storeKey);
    const held = this.held.get(id) ?? this.hold(pipeline, id);
    clearTimeout(held.timer);
    held.timer = setTimeout(() => void this.run(pipeline, storeKey, id, held), delayMs);
    // A retry or a deferral never keeps the process alive; a first run does (it was acknowledged).
    if (delayMs > 0) held.timer.unref();
  }

  private hold(pipeline: string, id: string): Held {
    const held: Held = { running: false };
    this.held.set(id, held);
    this.heldPerPipeline.set(pipeline, (this.heldPerPipeline.get(pipeline) ?? 0) + 1);
    return held;
  }

  private async run(pipeline: string, storeKey: string, id: string, held: Held): Promise<void> {
    const execute = this.executors.get(pipeline);
    if (!execute) return this.release(pipeline, id);
    held.running = true;
    held.timer = undefined;
    let outcome: JobRunOutcome;
    try {
      outcome = await execute(storeKey);
    } catch {
      // The store failed: the executor logged it; try again soon.
      outcome = { kind: 'retry', delayMs: 1_000, error: 'store' };
    }
    held.running = false;
    if (outcome.kind === 'settled' || !this.executors.has(pipeline)) return this.release(pipeline, id);
    if (outcome.kind === 'retry') return this.later(pipeline, storeKey, outcome.delayMs);
    // Set to wait first, then asked for a wake: a duplicate that came before either is seen.
    this.later(pipeline, storeKey, Math.max(0, outcome.until - Date.now()));
    if (await outcome.woken().catch(() => false)) this.later(pipeline, storeKey, 0);
  }

  /** Waiters are woken when a pipeline has nothing left held here (each checks its own). */
  private release(pipeline: string, id: string): void {
    if (!this.held.delete(id)) return;
    const left = this.heldPerPipeline.get(pipeline)! - 1;
    if (left > 0) return void this.heldPerPipeline.set(pipeline, left);
    this.heldPerPipeline.delete(pipeline);
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private id(pipeline: string, storeKey: string): string {
    return `${pipeline}\n${storeKey}`;
  }
}
