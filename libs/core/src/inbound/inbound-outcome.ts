import type { Logger } from '@nestjs/common';
import { HubtelError } from '../errors/hubtel.errors.js';
import { describeError, maskPhoneNumbers } from '../logging/redact.js';
import { sleep } from '../retry/backoff.js';
import type { HubtelStore, StoreEntry } from '../store/hubtel-store.interface.js';
import { NO_HANDLERS } from './inbound-dispatch.js';
import type { JobDefinition, JobRecord, JobStatus } from './inbound-job.types.js';
import type { JobRunRequest } from './job-runner.js';

export interface OutcomeWriter {
  store: HubtelStore;
  writeOptions: { ttlMs: number };
  logger: Logger;
  /** Aborted at shutdown: a store outage is no longer waited out. */
  stopping: AbortSignal;
}

/** The record after a run: all it carries over (results, state, the run it is) but `deferred`. */
export function nextRecord(
  updatedAt: number,
  job: JobRecord,
  status: JobStatus,
  attempts: number,
  lastError?: string,
  followUps?: ReadonlyArray<{ storeKey: string }>,
): JobRecord {
  // A dispatch without `keepResults` has no `results` key.
  const next = copyRecord(job, (key, value) =>
    key === 'results' ? value !== undefined : key !== 'deferred' && key !== 'lastError' && key !== 'settling',
  );
  next.status = status;
  next.attempts = attempts;
  next.updatedAt = updatedAt;
  if (lastError !== undefined) next.lastError = lastError;
  if (followUps?.length) next.then = followUps.map((f) => f.storeKey);
  return next;
}

/**
 * A record's own keys that `keep` accepts, in their order. Copied key by key rather than with a rest
 * pattern and a spread: on Node 20, V8 builds those (and any key added to them) on a slow path, and
 * this runs at every settle.
 */
function copyRecord(job: JobRecord, keep: (key: string, value: unknown) => boolean): JobRecord {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(job)) {
    const value = job[key as keyof JobRecord];
    if (keep(key, value)) out[key] = value;
  }
  return out as unknown as JobRecord;
}

/**
 * Writes a run's outcome over the entry it read (CAS), keeping what succeeded on either side; false:
 * another run settled it first (no hooks fire). A store outage is waited out: else handlers rerun.
 */
export async function writeOutcome(
  writer: OutcomeWriter,
  storeKey: string,
  entry: StoreEntry<JobRecord>,
  next: JobRecord,
  definition: JobDefinition<any>,
): Promise<boolean> {
  const done = next.status === 'done';
  // Compacted first: a module's compactWhenDone may read what its doneTtlMs then forgets.
  const value = done && definition.compactWhenDone ? compact(next, definition) : next;
  const ttlMs = done ? definition.doneTtlMs?.(next) : undefined;
  const options = ttlMs === undefined ? writer.writeOptions : { ttlMs };
  let current: StoreEntry<JobRecord> | undefined = entry;
  for (let failures = 0; current;) {
    const theirs: JobRecord = current.value;
    // Settled by another run: it stands (unless it gave up where this run succeeded).
    const lost = theirs.status === 'done' || (theirs.status === 'dead' && value.status !== 'done');
    const merged = lost ? union(theirs, value) : union(value, theirs);
    if (lost && merged === theirs) return false;
    try {
      if (await writer.store.compareAndSet(storeKey, current.version, merged, options)) return !lost;
      current = await writer.store.get<JobRecord>(storeKey);
    } catch (error) {
      if (
        !(error instanceof HubtelError && error.code === 'HUBTEL_STORE_UNAVAILABLE') ||
        writer.stopping.aborted
      )
        throw error;
      if (failures++ === 0)
        writer.logger.warn(
          `Could not record the outcome of job ${next.type} ${maskPhoneNumbers(next.key)}: ${describeError(error)}; trying again until the store answers`,
        );
      await sleep(Math.min(1_000, 50 * 2 ** Math.min(failures, 5)), writer.stopping);
    }
  }
  return false;
}

export function isSettled(job: JobRecord): boolean {
  return job.status === 'done' || job.status === 'dead';
}

/** The run a record names, as its runner is asked for it. */
export function request(storeKey: string, job: JobRecord): JobRunRequest {
  return { storeKey, type: job.type, run: job.run ?? 1 };
}

/** `base` with the handlers that succeeded in `other` too (`base` itself when none is new). */
function union(base: JobRecord, other: JobRecord): JobRecord {
  const added = other.doneHandlers.filter((id) => !base.doneHandlers.includes(id));
  return base.compacted || added.length === 0
    ? base
    : { ...base, doneHandlers: [...base.doneHandlers, ...added] };
}

/** What a done job's record keeps with `compactWhenDone`: enough to recognise its key. */
function compact(done: JobRecord, definition: JobDefinition<any>): JobRecord {
  const compacted = copyRecord(done, (key) => key !== 'results' && key !== 'state' && key !== 'lastError');
  compacted.payload = definition.compactWhenDone!(done.payload, done);
  compacted.doneHandlers = NO_HANDLERS;
  compacted.compacted = true;
  return compacted;
}
