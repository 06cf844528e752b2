import { UnrecoverableError } from 'bullmq';
import { BULLMQ_RUNNER_DEFAULTS } from './bullmq.constants.js';

/** The BullMQ backoff type of every run: the delay is the one the pipeline named. */
export const BACKOFF_TYPE = 'hubtel';

/** Thrown by the processor for a dead letter the pipeline wrote: BullMQ keeps it in its failed set. */
export class BullmqDeadLetterError extends UnrecoverableError {}

/** Thrown for a `retry` outcome: the worker's backoff strategy reads `delayMs` from it. */
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

/** A run's BullMQ job id, readable in dashboards; `:` (forbidden in custom ids) and `%` percent-encoded. */
export function bullmqJobId(storeKey: string, run: number): string {
  return `${storeKey.replace(/%/g, '%25').replace(/:/g, '%3A')}@${run}`;
}

/** The worker's backoff: a retry's delay is the pipeline's; other errors double `retryDelayMs`, capped. */
export function retryDelay(attemptsMade: number, _type?: string, error?: Error): number {
  if (error instanceof BullmqRetryError) return Math.max(0, error.delayMs);
  const { retryDelayMs, maxRetryDelayMs } = BULLMQ_RUNNER_DEFAULTS;
  return Math.min(maxRetryDelayMs, retryDelayMs * 2 ** Math.min(Math.max(0, attemptsMade - 1), 30));
}
