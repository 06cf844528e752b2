import type { StoreEntry } from '../store/hubtel-store.interface.js';
import { runRequest, type InboundDeferrals } from './inbound-defer.js';
import { describe, takeable, type JobsContext } from './inbound-job.records.js';
import type { JobRecord } from './inbound-job.types.js';

/**
 * Taking over jobs nobody runs. Every instance sweeps the store every `sweepIntervalMs` and takes
 * over (compare-and-set, so exactly one wins) running jobs whose lease expired — their instance
 * died — and pending jobs that are due and owned by nobody; with recoverOnBootstrap, every record
 * is read once at bootstrap. The sweeps read open marks (one per job recorded and not settled),
 * not every record kept for days. With a runner, a job found this way is asked of the runner again.
 */

/** What the pipeline lends its takeover. */
export interface TakeoverHost {
  /** Store keys of this pipeline's records start with it (`hubtel:<name>:job:`). */
  readonly prefix: string;
  readonly sweepIntervalMs: number;
  readonly deferrals: InboundDeferrals;
  /** True for job types this instance defines (others are left to an instance that knows them). */
  knows(type: string): boolean;
  /** Runs the job here, claimed first (see InboundPipeline). */
  launch(storeKey: string): void;
}

export class JobTakeover {
  /** Where open (pending or running) jobs are marked, for the periodic sweep (see `openKey`). */
  private readonly openPrefix: string;
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(
    private readonly ctx: JobsContext,
    private readonly host: TakeoverHost,
  ) {
    this.openPrefix = `hubtel:${ctx.name}:open:`;
  }

  /**
   * Takes over the jobs nobody runs (at bootstrap, with recoverOnBootstrap): running with an
   * expired lease (their process died), or pending and not owned (left by a crash or a shutdown;
   * a retry not due yet is run now: the app just started, and this keeps a store no sweep visits
   * from holding it forever). Each is claimed by compare-and-set: two instances recovering at
   * once never both run a job. Resolves with how many it launched (some may then lose the claim).
   */
  async recover(): Promise<number> {
    return this.takeOver(false);
  }

  /**
   * What the timer runs every `sweepIntervalMs`: as recover(), but a pending job is taken only once
   * its retry is due. Skipped while a sweep is still going.
   */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      return await this.takeOver(true);
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * The open-job marks: each names a job recorded and not settled yet (or settled by a process that
   * died before it removed the mark). A settled job's mark is removed here.
   */
  private async *openJobs(): AsyncIterable<[string, StoreEntry<JobRecord>]> {
    const store = this.ctx.store;
    for await (const [openKey] of store.scan<number>(this.openPrefix)) {
      const storeKey = this.host.prefix + openKey.slice(this.openPrefix.length);
      const entry = await store.get<JobRecord>(storeKey);
      if (!entry || entry.value.status === 'done' || entry.value.status === 'dead') {
        await store.delete(openKey);
        continue;
      }
      yield [storeKey, entry];
    }
  }

  /** The open mark of a job. */
  private openKey(storeKey: string): string {
    return this.openPrefix + storeKey.slice(this.host.prefix.length);
  }

  /**
   * Marks a new job open, for the periodic sweeps of every instance (they read these marks, not
   * every record kept for days). Sent after the acknowledgement, so it costs the sender no round
   * trip; a job recorded by a process that died before marking it is found by the bootstrap
   * recovery (every record) of the next instance that starts, or run by the job runner.
   */
  markOpen(storeKey: string): void {
    this.ctx.store
      .setIfAbsent(this.openKey(storeKey), 1, this.ctx.writeOptions)
      .catch((error: unknown) =>
        this.ctx.logger.warn(`Could not mark job ${storeKey} open: ${describe(error)}`),
      );
  }

  /** Forgets a settled job's open mark (best effort: a mark left behind is removed by the sweep). */
  closeMark(storeKey: string, written: JobRecord): void {
    // Merged into another instance's record that still runs it: the mark stays.
    if (written.status !== 'done' && written.status !== 'dead') return;
    this.ctx.store.delete(this.openKey(storeKey)).catch(() => undefined);
  }

  private async takeOver(dueOnly: boolean): Promise<number> {
    let count = 0;
    // The periodic sweep reads the open marks; recovery at bootstrap reads every record (so it also
    // finds jobs recorded by a version before the marks, or with their mark lost).
    const jobs = dueOnly ? this.openJobs() : this.ctx.store.scan<JobRecord>(this.host.prefix);
    for await (const [storeKey, entry] of jobs) {
      const job = entry.value;
      if (!this.host.knows(job.type)) continue;
      if (this.ctx.runner) {
        // Asked again (a run the runner lost), whether due or not: the runner keeps one per run.
        if (!takeable(job, this.ctx.now(), false)) continue;
        const delayMs = Math.max(0, (job.nextAttemptAt ?? 0) - this.ctx.now());
        await this.ctx.runner.schedule(this.ctx.name, runRequest(storeKey, job, delayMs));
        count++;
        continue;
      }
      if (!takeable(job, this.ctx.now(), dueOnly)) continue;
      // Deferred (not failed): run when due, even at bootstrap.
      if (job.deferred && (job.nextAttemptAt ?? 0) > this.ctx.now())
        this.host.deferrals.later(storeKey, job.nextAttemptAt! - this.ctx.now());
      else this.host.launch(storeKey);
      count++;
    }
    // No summary line: a job launched here may lose its claim, and one handed to the runner may be
    // one it already holds; the pipeline says "Recovered" for each job that runs here.
    return count;
  }

  start(): void {
    if (this.host.sweepIntervalMs <= 0 || this.sweeper || this.ctx.signal.aborted) return;
    this.sweeper = setInterval(() => {
      this.sweep().catch((error: unknown) =>
        this.ctx.logger.error(`Sweep of unfinished jobs failed: ${describe(error)}`),
      );
    }, this.host.sweepIntervalMs);
    this.sweeper.unref();
  }

  /** Writes a new record and its open mark at once; true when the record is new. */
  async recordWithMark(storeKey: string, record: JobRecord): Promise<boolean> {
    const store = this.ctx.store;
    const [created] = await Promise.all([
      store.setIfAbsent(storeKey, record, this.ctx.writeOptions),
      store.setIfAbsent(this.openKey(storeKey), 1, this.ctx.writeOptions),
    ]);
    return created;
  }

  /** Stops the periodic sweep (shutdown). */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }
}
