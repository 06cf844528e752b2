import type { EventEmitter2 } from '@nestjs/event-emitter';
import { maskPhoneNumbers } from '../logging/redact.js';
import { backoffDelay, sleep } from '../retry/backoff.js';
import type { StoreEntry } from '../store/hubtel-store.interface.js';
import { JobDeferral, runRequest, type InboundDeferrals } from './inbound-defer.js';
import { ListenerFailure, type HandlerDispatch } from './inbound-dispatch.js';
import {
  NO_HANDLERS,
  compact,
  describe,
  isStoreUnavailable,
  mergeOutcome,
  settledRecord,
  type JobsContext,
} from './inbound-job.records.js';
import {
  DEFAULT_JOB_RETRY,
  DeadLetterEvent,
  type JobDefinition,
  type JobOutcome,
  type JobRecord,
  type JobRetryPolicy,
} from './inbound-job.types.js';
import type { JobLeases } from './inbound-lease.js';
import { jobSignal } from './inbound-telemetry.js';

/**
 * One attempt of a claimed job, to its outcome: run its function or dispatch its event to its
 * handlers, then write what came of it over the claimed entry — done (compacted if asked),
 * deferred, pending with its retry after a backoff, or dead (the dead-letter event, then
 * `onSettled`). The write is a compare-and-set that merges with another instance's record should
 * this process have lost the job meanwhile.
 */

/** What the pipeline lends its attempts. */
export interface AttemptHost {
  definition(type: string): JobDefinition<any>;
  readonly retry: Partial<JobRetryPolicy> | undefined;
  readonly random: (() => number) | undefined;
  readonly emitter: EventEmitter2;
  /** Event emitted when a job gives up. */
  readonly deadLetterEvent: string;
  readonly leases: JobLeases;
  readonly dispatch: HandlerDispatch;
  readonly deferrals: InboundDeferrals;
  /** Forgets a settled job's open mark (see JobTakeover). */
  closeMark(storeKey: string, written: JobRecord): void;
}

export class JobAttempts {
  /** Retries that waited here and were given back to the store at shutdown. */
  retriesReleased = 0;

  constructor(
    private readonly ctx: JobsContext,
    private readonly host: AttemptHost,
  ) {}

  /**
   * Runs one attempt of a claimed job and records its outcome. Returns the pending entry it wrote
   * when the job is to be retried (after its backoff), undefined otherwise.
   */
  async attempt(storeKey: string, entry: StoreEntry<JobRecord>): Promise<StoreEntry<JobRecord> | undefined> {
    const job = entry.value;
    const definition = this.host.definition(job.type);
    const attempt = job.attempts + 1;

    let error: unknown;
    let doneHandlers = job.doneHandlers ?? NO_HANDLERS;
    let results = job.results;
    let deferral: void | JobDeferral = undefined;
    const lease = this.host.leases.hold(storeKey, entry);
    try {
      if (definition.run) {
        deferral = await definition.run(job.payload, {
          attempt,
          record: job,
          defer: (until, state) => new JobDeferral(until, state),
          takeWake: () => this.host.deferrals.takeWake(storeKey),
        });
      } else {
        ({ doneHandlers, results } = await this.host.dispatch.dispatch(job, definition, lease));
      }
    } catch (caught) {
      error = caught instanceof ListenerFailure ? caught.cause : caught;
      if (caught instanceof ListenerFailure) ({ doneHandlers, results } = caught.progress);
    }
    // Ends the heartbeat of the job; the entry as last written (after any renewal) is written over.
    this.host.leases.release(lease);
    if (lease.renewal) await lease.renewal;
    entry = lease.entry;
    if (error === undefined && deferral instanceof JobDeferral)
      return this.host.deferrals.defer(storeKey, entry, job, deferral);

    const updatedAt = this.ctx.now();
    if (error === undefined) {
      const done = settledRecord(job, 'done', attempt, doneHandlers, results, updatedAt, undefined);
      const written = await this.write(
        storeKey,
        entry,
        definition.compactWhenDone ? compact(done, definition) : done,
        done.doneHandlers,
        definition.doneRecordTtlMs === undefined ? undefined : { ttlMs: definition.doneRecordTtlMs },
      );
      this.host.closeMark(storeKey, written.value);
      this.ctx.telemetry?.record(jobSignal(this.ctx.name, job.type, 'done', attempt));
      // The hook gets the full record, even when a compacted one was stored.
      if (definition.onSettled) await this.settle(definition, done, 'done');
      return undefined;
    }

    const policy = this.policy(definition);
    const message = describe(error);
    const elapsed = updatedAt - job.receivedAt;
    const delay = backoffDelay(attempt, policy, this.host.random);
    const outOfTime = policy.deadlineMs !== undefined && elapsed + delay >= policy.deadlineMs;
    if (attempt >= policy.maxAttempts || outOfTime) {
      const dead = settledRecord(job, 'dead', attempt, doneHandlers, results, updatedAt, message);
      entry = await this.write(storeKey, entry, dead);
      this.host.closeMark(storeKey, entry.value);
      this.ctx.logger.error(
        `Job ${job.type} ${maskPhoneNumbers(job.key)} gave up after ${attempt} attempt(s): ${message} (dead-lettered)`,
      );
      this.ctx.telemetry?.record(jobSignal(this.ctx.name, job.type, 'dead', attempt));
      await this.deadLetter(entry.value, message);
      await this.settle(definition, entry.value, 'dead', error);
      return undefined;
    }

    // Leased to this process until the retry is due plus a lease, so no sweep (ours or another
    // instance's) runs it meanwhile; past that, another instance may take it (this one stalled).
    const pending = settledRecord(job, 'pending', attempt, doneHandlers, results, updatedAt, message);
    pending.nextAttemptAt = updatedAt + delay;
    // With a runner the retry is the runner's (a delayed run), not this process's.
    if (!this.ctx.runner) pending.leaseUntil = pending.nextAttemptAt + this.ctx.leaseMs;
    const written = await this.write(storeKey, entry, pending);
    // Merged into another instance's record (it took the job over): the retry is theirs.
    if (
      written.value.status !== 'pending' ||
      written.value.leaseUntil !== pending.leaseUntil ||
      written.value.nextAttemptAt !== pending.nextAttemptAt
    )
      return undefined;
    this.ctx.logger.warn(
      `Job ${job.type} ${maskPhoneNumbers(job.key)} failed (attempt ${attempt}/${policy.maxAttempts}): ${message}; retrying in ${delay} ms`,
    );
    this.ctx.telemetry?.record(jobSignal(this.ctx.name, job.type, 'retry', attempt));
    if (this.ctx.runner) {
      await this.ctx.runner.schedule(this.ctx.name, runRequest(storeKey, written.value, delay));
      return undefined;
    }
    await sleep(delay, this.ctx.signal);
    if (!this.ctx.signal.aborted) return written;
    // Shutting down: give the job up, so another instance (or this one restarted) takes it when due.
    const { leaseUntil: _owned, ...released } = written.value;
    await this.ctx.store.compareAndSet(storeKey, written.version, released, this.ctx.writeOptions);
    this.retriesReleased++;
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
  async write(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    next: JobRecord,
    done: string[] = next.doneHandlers,
    options: { ttlMs: number } = this.ctx.writeOptions,
  ): Promise<StoreEntry<JobRecord>> {
    for (let failures = 0; ; failures++) {
      try {
        return await this.writeOnce(storeKey, entry, next, done, options);
      } catch (error) {
        if (!isStoreUnavailable(error) || this.ctx.signal.aborted) throw error;
        if (failures === 0)
          this.ctx.logger.warn(
            `Could not record the outcome of job ${next.type} ${maskPhoneNumbers(next.key)}: ${describe(error)}; trying again until the store answers`,
          );
        await sleep(Math.min(1_000, 50 * 2 ** Math.min(failures, 5)), this.ctx.signal);
      }
    }
  }

  private async writeOnce(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    next: JobRecord,
    done: string[],
    options: { ttlMs: number },
  ): Promise<StoreEntry<JobRecord>> {
    const store = this.ctx.store;
    const written = await store.compareAndSet(storeKey, entry.version, next, options);
    if (written) return written;
    // Someone wrote meanwhile: this process stalled past its lease and another instance took the
    // job. Keep both outcomes, so neither instance re-runs what the other did.
    this.ctx.logger.warn(
      `Job ${next.type} ${maskPhoneNumbers(next.key)} was taken over by another instance while it ran here: merging outcomes`,
    );
    for (let tries = 0; tries < 5; tries++) {
      const current = await store.get<JobRecord>(storeKey);
      if (!current) break;
      const merged = mergeOutcome(current.value, next, done, this.ctx.now());
      if (merged === current.value) return current;
      const again = await store.compareAndSet(storeKey, current.version, merged, options);
      if (again) return again;
    }
    return store.set(storeKey, next, options);
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
      await this.host.emitter.emitAsync(this.host.deadLetterEvent, event);
    } catch (listenerError) {
      this.ctx.logger.error(`A dead-letter listener failed: ${describe(listenerError)}`);
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
      this.ctx.logger.error(
        `After-job hook of ${job.type} ${maskPhoneNumbers(job.key)} failed: ${describe(hookError)}`,
      );
    }
  }

  private policy(definition: JobDefinition<any>): JobRetryPolicy {
    return { ...DEFAULT_JOB_RETRY, ...this.host.retry, ...definition.retry };
  }
}
