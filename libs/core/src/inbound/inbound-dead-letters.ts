import { HubtelError } from '../errors/hubtel.errors.js';
import type { HubtelStore } from '../store/hubtel-store.interface.js';
import type { JobRecord } from './inbound-job.types.js';
import type { JobRunner } from './job-runner.js';

// Dead letters, on a store alone (`hubtel-trigger dead-letters` runs these from outside the app). A
// replay keeps `doneHandlers` (only failed handlers run) and `attempts` (failing again, dead again).

/** One dead-lettered job, as listed. */
export interface DeadLetter {
  /** What to replay it by: `<job type>:<key>` (unique within its pipeline). */
  id: string;
  pipeline: string;
  type: string;
  key: string;
  attempts: number;
  lastError?: string;
  /** Handlers (Class.method@event) that succeeded: a replay does not run them again. */
  succeededHandlers: string[];
  receivedAt: Date;
  deadAt: Date;
  payload: unknown;
}

/** `replayDeadLetter(id)` with an id no record of the pipeline has (unknown, or expired). */
export class HubtelDeadLetterNotFoundError extends HubtelError {
  constructor(
    readonly pipeline: string,
    readonly id: string,
  ) {
    super(
      'HUBTEL_NOT_FOUND',
      `No job "${id}" is recorded in the ${pipeline} pipeline (unknown id, or expired)`,
    );
  }
}

/** `replayDeadLetter(id)` of a job that is not dead (running, waiting, done, or replayed already). */
export class HubtelNotDeadLetterError extends HubtelError {
  constructor(
    readonly pipeline: string,
    readonly id: string,
    readonly status: string,
  ) {
    super(
      'HUBTEL_STORE_CONFLICT',
      `Job "${id}" of the ${pipeline} pipeline is ${status}, not dead: there is nothing to replay`,
    );
  }
}

export function jobKeyPrefix(pipeline: string): string {
  return `hubtel:${pipeline}:job:`;
}

/** The dead letters of a pipeline, oldest death first. */
export async function listDeadLetters(store: HubtelStore, pipeline: string): Promise<DeadLetter[]> {
  const prefix = jobKeyPrefix(pipeline);
  const found: DeadLetter[] = [];
  for await (const [storeKey, entry] of store.scan<JobRecord>(prefix)) {
    const job = entry.value;
    if (job?.status !== 'dead') continue;
    const letter: DeadLetter = {
      id: storeKey.slice(prefix.length),
      pipeline,
      type: job.type,
      key: job.key,
      attempts: job.attempts,
      succeededHandlers: [...(job.doneHandlers ?? [])],
      receivedAt: new Date(job.receivedAt),
      deadAt: new Date(job.updatedAt),
      payload: job.payload,
    };
    if (job.lastError !== undefined) letter.lastError = job.lastError;
    found.push(letter);
  }
  return found.sort((a, b) => a.deadAt.getTime() - b.deadAt.getTime());
}

/** Puts a dead letter back to `pending` as a new run (CAS: two replays at once make one), then queues it. */
export async function requeueDeadLetter(
  store: HubtelStore,
  pipeline: string,
  id: string,
  { ttlMs, runner, now = Date.now }: { ttlMs: number; runner: JobRunner; now?: () => number },
): Promise<JobRecord> {
  const storeKey = jobKeyPrefix(pipeline) + id;
  const entry = await store.get<JobRecord>(storeKey);
  if (!entry) throw new HubtelDeadLetterNotFoundError(pipeline, id);
  if (entry.value.status !== 'dead') throw new HubtelNotDeadLetterError(pipeline, id, entry.value.status);
  // A new run number each time: the runner keeps one job per number, and may still hold the last one.
  const run = Math.max(entry.value.run ?? 1, entry.value.attempts) + 1;
  const pending: JobRecord = { ...entry.value, status: 'pending', run, updatedAt: now() };
  const written = await store.compareAndSet(storeKey, entry.version, pending, { ttlMs });
  if (!written) {
    const current = await store.get<JobRecord>(storeKey);
    if (!current) throw new HubtelDeadLetterNotFoundError(pipeline, id);
    throw new HubtelNotDeadLetterError(pipeline, id, current.value.status);
  }
  try {
    await runner.enqueue(pipeline, { storeKey, type: pending.type, run });
  } catch (error) {
    // Not queued: dead again, so it is listed and can be replayed once the runner answers.
    await store.compareAndSet(storeKey, written.version, entry.value, { ttlMs }).catch(() => undefined);
    throw error;
  }
  return pending;
}

/** How long a pipeline keeps job records by default (its `recordTtlMs`): 7 days. */
export const DEFAULT_JOB_RECORD_TTL_MS = 7 * 24 * 3600_000;
