import type { Logger } from '@nestjs/common';
import { HubtelError } from '../errors/hubtel.errors.js';
import { maskPhoneNumbers } from '../logging/redact.js';
import type { HubtelStore } from '../store/hubtel-store.interface.js';
import type { HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import { carryDeferral } from './inbound-defer.js';
import type { JobDefinition, JobRecord, JobStatus } from './inbound-job.types.js';
import type { JobRunner } from './job-runner.js';

/**
 * The pieces of the inbound pipeline share: what each is lent by the pipeline (JobsContext), and
 * the pure functions over job records (who may take a job, a record after an attempt, merging two
 * instances' outcomes).
 */

/** What the pipeline lends its pieces (leases, attempts, takeover). */
export interface JobsContext {
  readonly name: string;
  readonly store: HubtelStore;
  readonly writeOptions: { ttlMs: number };
  readonly leaseMs: number;
  readonly runner: JobRunner | undefined;
  /** Aborted when the app shuts down. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly telemetry: HubtelTelemetry | undefined;
  now(): number;
}

/** Shared by every new record: values are immutable (see HubtelStore), so one empty list serves all. */
export const NO_HANDLERS: string[] = Object.freeze([]) as unknown as string[];

/**
 * May this process take the job? Running with an expired lease (its process died), or pending and
 * not leased (a fresh job between its record and its run, or one a process gave up on), and with
 * `dueOnly`, its retry due.
 */
export function takeable(job: JobRecord, now: number, dueOnly: boolean): boolean {
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
export function mergeOutcome(theirs: JobRecord, ours: JobRecord, done: string[], now: number): JobRecord {
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
export function settledRecord(
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
export function compact(done: JobRecord, definition: JobDefinition<any>): JobRecord {
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

export function describe(error: unknown): string {
  return maskPhoneNumbers(error instanceof Error ? error.message : String(error));
}

/** The store could not be reached (down, or too slow): the write may succeed when tried again. */
export function isStoreUnavailable(error: unknown): boolean {
  return error instanceof HubtelError && error.code === 'HUBTEL_STORE_UNAVAILABLE';
}
