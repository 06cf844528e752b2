import type { HttpException, Logger } from '@nestjs/common';
import { HubtelError } from '../errors/hubtel.errors.js';
import type { HubtelStore } from '../store/hubtel-store.interface.js';
import { inboundHttpError } from './inbound-http-errors.js';
import { describeError } from '../logging/redact.js';

// Shutdown: new inbound work is refused (503, nothing recorded); jobs running here get
// `shutdownGraceMs`; what is left is said in one line with its counts, never dropped silently.

/** What a refused sender is told to wait (`Retry-After`, seconds): about a restart or a failover. */
export const SHUTDOWN_RETRY_AFTER_SECONDS = 5;

/** Default of `shutdownGraceMs`: how long shutdown waits for jobs running in this process. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 5_000;

/** Thrown by the modules' inbound entry points once the app shuts down; nothing was recorded. */
export class HubtelShuttingDownError extends HubtelError {
  constructor(what: string) {
    super(
      'HUBTEL_SHUTTING_DOWN',
      `This instance is shutting down: the ${what} was not recorded; send it again later`,
      { retryAfterMs: SHUTDOWN_RETRY_AFTER_SECONDS * 1_000 },
    );
  }
}

/** The 503 of refused work, with `Retry-After` and `Connection: close` (so it is retried elsewhere). */
export function shuttingDownHttpError(response: unknown, error: HubtelShuttingDownError): HttpException {
  const target = response as Partial<
    Record<'header' | 'setHeader', (name: string, value: string) => unknown>
  >;
  const set = target?.header ?? target?.setHeader;
  if (typeof set === 'function') {
    set.call(target, 'Retry-After', String(SHUTDOWN_RETRY_AFTER_SECONDS));
    set.call(target, 'Connection', 'close');
  }
  return inboundHttpError(503, 'HUBTEL_SHUTTING_DOWN', error.message);
}

/** What a pipeline leaves behind at the end of its shutdown grace. */
export interface ShutdownLeftovers {
  pipeline: string;
  graceMs: number;
  /** Jobs whose handlers were still running here when the grace ran out. */
  running: number;
  /** Jobs recorded and not run yet, or waiting for a retry (a memory store's only). */
  waiting: number;
  /** Dead letters kept in a memory store (lost with it); not counted for a durable store. */
  dead: number;
  /** False when the records live in this process's memory (a MemoryStore): lost on exit. */
  durable: boolean;
}

/** The one line said at the end of a pipeline's shutdown, and its level. */
export function shutdownLine(left: ShutdownLeftovers): { level: 'log' | 'warn'; text: string } {
  const head = `Shutdown of the ${left.pipeline} jobs:`;
  const open = left.running + left.waiting;
  if (left.durable)
    return open === 0
      ? { level: 'log', text: `${head} every job running here finished; what waits to run stays in BullMQ` }
      : {
          level: 'warn',
          text: `${head} ${plural(open, 'job')} still running after the ${left.graceMs} ms grace; BullMQ hands ${open === 1 ? 'it' : 'them'} to another instance or the next start, where only the handlers that did not finish run`,
        };
  if (open === 0 && left.dead === 0)
    return { level: 'log', text: `${head} every job finished; nothing left pending` };
  const parts = [
    `${left.running} still running after the ${left.graceMs} ms grace`,
    `${left.waiting} waiting to run or to retry`,
  ];
  const dead = left.dead > 0 ? ` and ${plural(left.dead, 'dead letter')}` : '';
  const one = open + left.dead === 1;
  return {
    level: 'warn',
    text: `${head} ${plural(open, 'job')} left pending (${parts.join(', ')})${dead} ${one ? 'is' : 'are'} kept in this process's memory store and LOST when it exits (keep ${one ? 'it' : 'them'} in Redis: HubtelRedisModule)`,
  };
}

/** Counts what is left and logs the line; never throws. Only a MemoryStore is read whole. */
export async function reportShutdown(
  logger: Logger,
  pipeline: string,
  store: HubtelStore,
  jobPrefix: string,
  graceMs: number,
  running: number,
): Promise<void> {
  const durable = !store.local;
  const left: ShutdownLeftovers = { pipeline, graceMs, running, waiting: 0, dead: 0, durable };
  try {
    if (!durable) {
      for await (const [, entry] of store.scan<{ status?: string }>(jobPrefix)) {
        const status = entry.value?.status;
        if (status === 'dead') left.dead++;
        else if (status !== 'done') left.waiting++;
      }
      // What runs here still is pending in the store: counted once, as running.
      left.running = Math.min(running, left.waiting);
      left.waiting -= left.running;
    }
    const { level, text } = shutdownLine(left);
    logger[level](text);
  } catch (error) {
    logger.warn(`Shutdown: could not count the jobs left pending: ${describeError(error)}`);
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
