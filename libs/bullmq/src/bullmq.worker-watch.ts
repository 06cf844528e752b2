import type { Logger } from '@nestjs/common';
import type { Worker } from 'bullmq';
import { bounded, closeBounded } from './bullmq.connection.js';

/** A worker of the runner, and how to make it again. */
export interface Watched {
  worker: Worker<never>;
  /** The same worker, with its listeners, on a connection of its own for the next-job fetch. */
  create: () => Watched;
  concurrency: number;
  /** Jobs this worker object runs now: one replaced is closed once they end. */
  running: number;
  /** The job found due at the last check, when it showed this worker taking none. */
  suspect?: string;
  idle?: () => void;
}

export interface WorkerWatchOptions {
  /** How often workers are judged (the runner's stalled interval). */
  intervalMs: number;
  logger: Logger;
  /** A job due and not taken, and how long `name`'s worker started none, when that is a takeover. */
  notTakingJobs(name: string): Promise<{ jobId: string; idleMs: number } | undefined>;
  /** Whether `name`'s queue holds its jobs back by design: paused, rate-limited or at its global concurrency. */
  heldBack(name: string): Promise<boolean>;
}

/**
 * Closes and makes again a worker that takes no job while one is due. Its next-job fetch can hang
 * for good on a connection that reconnected (seen after a Cluster's CLUSTERDOWN that a stalled
 * process saw late): BullMQ takes nothing more, although Redis answers. Judged every interval: stuck
 * when it has room for a job (a worker at its concurrency never is), started none for a takeover
 * while one is due, and the same job was found at the check before (a delayed job that just came due
 * is not taken for a stuck worker).
 */
export class WorkerWatch {
  private readonly watched = new Map<string, Watched>();
  /** Workers replaced whose jobs here have not ended yet. */
  private readonly retiring = new Set<Watched>();
  /** Workers made again, by name: how often and when last (the runner's health shows it). */
  private readonly restarts = new Map<string, { count: number; at: number }>();
  private timer?: NodeJS.Timeout;
  private checking = false;
  private closed = false;

  constructor(private readonly options: WorkerWatchOptions) {}

  add(name: string, entry: Watched): void {
    this.watched.set(name, entry);
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.check(), this.options.intervalMs);
    this.timer.unref();
  }

  remove(name: string): void {
    this.watched.delete(name);
  }

  /** Runs a job of a worker, counted: a worker replaced is closed once its jobs ended. */
  async run<T>(entry: Pick<Watched, 'running' | 'idle'>, job: () => Promise<T>): Promise<T> {
    entry.running++;
    try {
      return await job();
    } finally {
      if (--entry.running === 0) entry.idle?.();
    }
  }

  /** `{ name: "2 times, last at <ISO date>" }` for each worker made again, if any was. */
  restarted(): Record<string, string> | undefined {
    if (this.restarts.size === 0) return undefined;
    return Object.fromEntries(
      [...this.restarts].map(([name, { count, at }]) => [
        name,
        `${count} time${count === 1 ? '' : 's'}, last at ${new Date(at).toISOString()}`,
      ]),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.all([...this.retiring].map((entry) => closeBounded(entry.worker)));
  }

  private async check(): Promise<void> {
    if (this.checking || this.closed) return;
    this.checking = true;
    try {
      for (const [name, entry] of [...this.watched]) {
        let stuck =
          entry.running < entry.concurrency
            ? await this.options.notTakingJobs(name).catch(() => undefined) // Redis away: nothing to judge
            : undefined;
        // Held back by design: judged afresh, over two checks, once the queue lets jobs go again.
        if (stuck && (entry.worker.isPaused() || (await this.options.heldBack(name).catch(() => true))))
          stuck = undefined;
        const suspect = entry.suspect;
        entry.suspect = stuck?.jobId;
        if (!stuck || stuck.jobId !== suspect || this.closed || this.watched.get(name) !== entry) continue;
        this.restarts.set(name, { count: (this.restarts.get(name)?.count ?? 0) + 1, at: Date.now() });
        this.options.logger.warn(
          `Worker ${name} took no job for ${Math.round(stuck.idleMs / 1000)} s while one was due and it had room: closed, and started again on a new connection`,
        );
        entry.create();
        void this.retire(entry);
      }
    } finally {
      this.checking = false;
    }
  }

  /**
   * Closes a replaced worker once its jobs here ended: they end on it, their locks renewed meanwhile,
   * so none is cut off and run again elsewhere. Forced: a graceful close waits for its fetch, which
   * may never settle, and its lock renewal timers would run on for good.
   */
  private async retire(entry: Watched): Promise<void> {
    this.retiring.add(entry);
    // No new job on it meanwhile, were its fetch to settle after all: the new worker takes them.
    void entry.worker.pause(true).catch(() => undefined);
    if (entry.running > 0) await new Promise<void>((resolve) => (entry.idle = resolve));
    if (this.closed) return; // closed by close()
    await bounded(entry.worker.close(true), () => entry.worker.disconnect());
    this.retiring.delete(entry);
  }
}
