import type { HubtelStore, StoreEntry } from '../store/hubtel-store.interface.js';
import type { JobRecord } from './inbound-job.types.js';
import type { JobRunRequest, JobRunner, JobRunRef } from './job-runner.js';

/**
 * Deferred jobs: a job's `run` that has nothing to do yet (a payment the status check does not
 * show yet) returns `context.defer(until, state)` instead of waiting inside the running job. The
 * record says so durably — `pending`, `deferred`, `nextAttemptAt: until`, the job's `state` — and
 * it is not a failed attempt (the retry policy does not count it). The runner runs it again then:
 * a delayed BullMQ job with the BullMQ runner, a timer of this process without one (leased to it
 * until then plus a lease, so the sweep of any instance takes it over should this one die).
 *
 * Waking early: with the definition's `wakeOnDuplicate`, a duplicate submitted (on any instance)
 * while the job is deferred rewrites the record — due now, the duplicate's payload, one more
 * `deferrals` — and asks for a run now. The run asked before (a BullMQ delayed job, a timer of
 * another process) still comes at its time; it names the `deferrals` count it was asked for, so it
 * is a no-op (the claim is a compare-and-set that refuses a stale run), never a second run. A
 * duplicate that comes while the job runs (or is about to) leaves a wake mark for it: the run reads
 * it with `context.takeWake()`, and a deferral the run ends with becomes a run at once.
 */

/** What `run` returns (from `context.defer`) to be run again at `until` (epoch ms). */
export class JobDeferral {
  constructor(
    readonly until: number,
    /** JSON-serialisable plain data: the next run reads it as `record.state`. */
    readonly state?: unknown,
  ) {}
}

/** What a pipeline lends its deferrals. */
export interface DeferHost {
  readonly name: string;
  readonly store: HubtelStore;
  readonly runner: JobRunner | undefined;
  readonly writeOptions: { ttlMs: number };
  readonly leaseMs: number;
  readonly signal: AbortSignal;
  now(): number;
  /** The pipeline's outcome write over the entry it claimed (waits out store outages, merges). */
  write(storeKey: string, entry: StoreEntry<JobRecord>, next: JobRecord): Promise<StoreEntry<JobRecord>>;
  /** Runs the job in this process (claimed first: a no-op when another has it). */
  launch(storeKey: string): void;
}

interface WakeMark {
  payload: unknown;
  at: number;
}

/** A wake mark lives until the run it is for ends (a handler's time), then expires if unread. */
const WAKE_MARK_TTL_MS = 3600_000;

export class InboundDeferrals {
  /** Deferred jobs waiting in this process, by store key: a wake here ends the wait at once. */
  private readonly wakers = new Map<string, () => void>();
  private readonly wakePrefix: string;

  constructor(private readonly host: DeferHost) {
    this.wakePrefix = `hubtel:${host.name}:wake:`;
  }

  /**
   * Records a deferral the attempt ended with, over the running entry. With a runner, asks it for
   * the run at `until` and returns undefined; without, waits here until then (or a wake) and
   * returns the entry to claim again (undefined on shutdown: the lease is given up).
   */
  async defer(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    job: JobRecord,
    deferral: JobDeferral,
  ): Promise<StoreEntry<JobRecord> | undefined> {
    const { store, runner, writeOptions } = this.host;
    const now = this.host.now();
    const next: JobRecord = { ...deferredRecord(job, deferral, now) };
    if (!runner) next.leaseUntil = deferral.until + this.host.leaseMs;
    let written = await this.host.write(storeKey, entry, next);
    // Merged into another instance's record (it took the job over): the next run is theirs.
    if (!written.value.deferred || written.value.nextAttemptAt !== deferral.until) return undefined;
    // Written first, read second (a waker writes its mark, then reads the record): one of the two
    // sees the other, so no wake is lost between the run and its deferral.
    const mark = await this.takeWake(storeKey);
    if (mark) {
      const woken = wokenRecord(written.value, mark, this.host.now());
      if (!runner) woken.leaseUntil = next.leaseUntil;
      written = (await store.compareAndSet(storeKey, written.version, woken, writeOptions)) ?? written;
    }
    return this.await(storeKey, written);
  }

  /**
   * A duplicate of a job with `wakeOnDuplicate`: runs a deferred job now with the duplicate's
   * payload; leaves a wake mark for one that runs (or is about to). True when either was done.
   */
  async onDuplicate(
    storeKey: string,
    entry: StoreEntry<JobRecord> | undefined,
    payload: unknown,
  ): Promise<boolean> {
    const { store, writeOptions } = this.host;
    let marked = false;
    for (let tries = 0; entry && tries < 5; tries++) {
      const job = entry.value;
      if (job.status === 'done' || job.status === 'dead') return marked;
      if (job.status === 'pending' && job.deferred) {
        const woken = await store.compareAndSet(
          storeKey,
          entry.version,
          wokenRecord(job, payload, this.host.now()),
          writeOptions,
        );
        if (woken) {
          if (marked) await store.delete(this.wakeKey(storeKey));
          await this.start(storeKey, woken.value);
          return true;
        }
      } else if (!marked) {
        const mark: WakeMark = { payload, at: this.host.now() };
        await store.set(this.wakeKey(storeKey), mark, { ttlMs: WAKE_MARK_TTL_MS });
        marked = true;
        // Read again: it may have deferred meanwhile (without seeing the mark).
      } else {
        return true;
      }
      entry = await store.get<JobRecord>(storeKey);
    }
    return marked;
  }

  /** The payload of a duplicate that came while the job ran (consumed), if any. */
  async takeWake(storeKey: string): Promise<unknown> {
    const key = this.wakeKey(storeKey);
    const mark = await this.host.store.get<WakeMark>(key);
    if (!mark) return undefined;
    await this.host.store.delete(key);
    return mark.value.payload;
  }

  /**
   * A deferred job found by the bootstrap recovery before its time: run here when due (a timer),
   * not early.
   */
  later(storeKey: string, ms: number): void {
    void this.wait(storeKey, this.host.now() + ms).then(() => {
      if (!this.host.signal.aborted) this.host.launch(storeKey);
    });
  }

  private async await(
    storeKey: string,
    written: StoreEntry<JobRecord>,
  ): Promise<StoreEntry<JobRecord> | undefined> {
    const job = written.value;
    const delayMs = Math.max(0, (job.nextAttemptAt ?? 0) - this.host.now());
    if (this.host.runner) {
      await this.host.runner.schedule(this.host.name, runRequest(storeKey, job, delayMs));
      return undefined;
    }
    if (delayMs > 0) await this.wait(storeKey, job.nextAttemptAt!);
    if (!this.host.signal.aborted) return written;
    // Shutting down: give the job up, so another instance (or this one restarted) runs it when due.
    const { leaseUntil: _owned, ...released } = job;
    await this.host.store
      .compareAndSet(storeKey, written.version, released, this.host.writeOptions)
      .catch(() => undefined);
    return undefined;
  }

  /** A woken job's run: asked of the runner, or here (the local wait ends, or a new run). */
  private async start(storeKey: string, job: JobRecord): Promise<void> {
    if (this.host.runner) {
      await this.host.runner.schedule(this.host.name, runRequest(storeKey, job, 0));
      return;
    }
    const waiting = this.wakers.get(storeKey);
    if (waiting) waiting();
    else this.host.launch(storeKey);
  }

  /**
   * Resolves once `now()` reaches `until` (epoch ms), on a wake here, or on shutdown. Never before
   * its time: a timer can fire a millisecond early by `Date.now()` (libuv counts from the loop's
   * cached, truncated time), and a run that comes before its due time is taken for a wake by the
   * job (the checkout confirmation would make one status check more than its schedule).
   */
  private wait(storeKey: string, until: number): Promise<void> {
    const signal = this.host.signal;
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        if (this.wakers.get(storeKey) === done) this.wakers.delete(storeKey);
        resolve();
      };
      const due = () => {
        const left = until - this.host.now();
        if (left <= 0) return done();
        timer = setTimeout(due, left);
        timer.unref();
      };
      let timer = setTimeout(due, Math.max(0, until - this.host.now()));
      timer.unref();
      this.wakers.set(storeKey, done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private wakeKey(storeKey: string): string {
    return this.wakePrefix + storeKey;
  }
}

/** The run of a recorded job, as a runner is asked for it (the deferral count names it). */
export function runRequest(storeKey: string, job: JobRecord, delayMs: number): JobRunRequest {
  const request: JobRunRequest = { storeKey, type: job.type, attempt: job.attempts + 1, delayMs };
  if (job.deferrals) request.deferral = job.deferrals;
  return request;
}

/**
 * A run asked before the job deferred or was woken again (a delayed job or timer overtaken by a
 * wake): another run was asked for the record as it is now, this one must do nothing.
 */
export function isStaleRun(job: JobRecord, run: JobRunRef | undefined): boolean {
  return run !== undefined && (job.deferrals ?? 0) !== (run.deferral ?? 0);
}

/** Keeps a job's deferral count and state across the records a run writes (claim, retry, outcome). */
export function carryDeferral(from: JobRecord, to: JobRecord): JobRecord {
  if (from.deferrals !== undefined) to.deferrals = from.deferrals;
  if (from.state !== undefined) to.state = from.state;
  return to;
}

function deferredRecord(job: JobRecord, deferral: JobDeferral, now: number): JobRecord {
  const next: JobRecord = {
    type: job.type,
    key: job.key,
    payload: job.payload,
    status: 'pending',
    attempts: job.attempts,
    doneHandlers: job.doneHandlers,
    receivedAt: job.receivedAt,
    updatedAt: now,
    nextAttemptAt: deferral.until,
    deferred: true,
    deferrals: (job.deferrals ?? 0) + 1,
  };
  const state = deferral.state === undefined ? job.state : deferral.state;
  if (state !== undefined) next.state = state;
  if (job.results !== undefined) next.results = job.results;
  if (job.lastError !== undefined) next.lastError = job.lastError;
  return next;
}

/** A deferred job due now, with a duplicate's payload, owned by nobody: a new run is asked. */
function wokenRecord(job: JobRecord, payload: unknown, now: number): JobRecord {
  const { leaseUntil: _owner, deferred: _deferred, ...rest } = job;
  return { ...rest, payload, updatedAt: now, nextAttemptAt: now, deferrals: (job.deferrals ?? 0) + 1 };
}
