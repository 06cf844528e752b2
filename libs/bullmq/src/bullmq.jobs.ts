import { UnrecoverableError } from 'bullmq';
import { BULLMQ_RUNNER_DEFAULTS } from './bullmq.constants.js';

/*
 * What a run's BullMQ job carries: its id (one job per run, however often it is asked for), and how
 * the processor tells BullMQ a run's outcome (a dead letter, a retry with the pipeline's delay).
 */

/** The BullMQ backoff type of every run: the delay is the one the pipeline named. */
export const BACKOFF_TYPE = 'hubtel';

/** Thrown by the processor for a dead letter the pipeline wrote: BullMQ keeps it in its failed set. */
export class BullmqDeadLetterError extends UnrecoverableError {}

/**
 * Thrown by the processor for a `retry` outcome: BullMQ moves the job to its delayed set, and the
 * worker's backoff strategy reads `delayMs` from it. Its message is the job's failed reason in
 * dashboards.
 */
export class BullmqRetryError extends Error {
  readonly code = 'HUBTEL_JOB_RETRY';
  constructor(
    readonly delayMs: number,
    message: string,
  ) {
    super(message);
    this.name = 'BullmqRetryError';
  }
}

/**
 * A BullMQ job id for a run of a recorded job: readable in dashboards, and never an integer nor
 * containing `:` (which BullMQ forbids in custom ids): `%` and `:` are percent-encoded.
 */
export function bullmqJobId(storeKey: string, run: number): string {
  return `${storeKey.replace(/%/g, '%25').replace(/:/g, '%3A')}@${run}`;
}

/**
 * The worker's backoff strategy: a retry's delay is the pipeline's; any other error (the executor
 * threw: the store unreachable) waits `retryDelayMs`, doubled per attempt of the run, capped.
 */
export function retryDelay(attemptsMade: number, _type?: string, error?: Error): number {
  if (error instanceof BullmqRetryError) return Math.max(0, error.delayMs);
  const { retryDelayMs, maxRetryDelayMs } = BULLMQ_RUNNER_DEFAULTS;
  return Math.min(maxRetryDelayMs, retryDelayMs * 2 ** Math.min(Math.max(0, attemptsMade - 1), 30));
}
