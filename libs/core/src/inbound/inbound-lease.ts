import { maskPhoneNumbers } from '../logging/redact.js';
import type { StoreEntry } from '../store/hubtel-store.interface.js';
import { carryDeferral } from './inbound-defer.js';
import { describe, takeable, type JobsContext } from './inbound-job.records.js';
import type { JobRecord } from './inbound-job.types.js';

/**
 * Ownership of jobs: a job is owned by the process holding its lease (`leaseUntil`). A claim takes
 * it (compare-and-set, so two instances never run it at once); while its attempt runs here the
 * heartbeat renews the lease every `heartbeatMs`, so a long handler on a live instance is never
 * taken over; a handler's success is saved into the running record under the same lease.
 */

/** A job this process runs now: the entry as last written (renewals included). */
export interface HeldLease {
  storeKey: string;
  entry: StoreEntry<JobRecord>;
  /** Its index in `held` (-1 once released or lost). */
  slot: number;
  renewal: Promise<void> | undefined;
  lost: boolean;
}

export class JobLeases {
  /** Jobs running in this process, by store key: their leases, renewed by the heartbeat. */
  // An array with swap-removal, not a Map: registering is on every job's path and most jobs end
  // long before the first beat.
  private readonly held: HeldLease[] = [];
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: JobsContext,
    private readonly heartbeatMs: number,
  ) {}

  /** How many jobs run in this process now. */
  get running(): number {
    return this.held.length;
  }

  /** Ends the heartbeat (shutdown): leases of jobs still running expire, another instance retakes them. */
  stop(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /**
   * Takes the job for this process (compare-and-set), so two instances never run it at once.
   * `known`: the entry as this process just wrote it (a new job, or its own pending retry: owned,
   * so taken whatever its lease says), tried without reading it first.
   */
  async claim(
    storeKey: string,
    known: StoreEntry<JobRecord> | undefined,
    accept?: (job: JobRecord) => boolean,
  ): Promise<StoreEntry<JobRecord> | undefined> {
    let entry = known ?? (await this.ctx.store.get<JobRecord>(storeKey));
    let owned = known !== undefined;
    for (let tries = 0; tries < 5; tries++) {
      if (!entry) return undefined;
      const job = entry.value;
      const now = this.ctx.now();
      if (owned ? job.status !== 'pending' : !takeable(job, now, false) || accept?.(job) === false)
        return undefined;
      const next: JobRecord = {
        type: job.type,
        key: job.key,
        payload: job.payload,
        status: 'running',
        attempts: job.attempts,
        doneHandlers: job.doneHandlers,
        receivedAt: job.receivedAt,
        updatedAt: now,
        leaseUntil: now + this.ctx.leaseMs,
      };
      // A record of the version before identities: kept until its first dispatch maps it.
      if (job.doneHandlers === undefined && job.doneListeners !== undefined)
        next.doneListeners = job.doneListeners;
      if (job.results !== undefined) next.results = job.results;
      if (job.lastError !== undefined) next.lastError = job.lastError;
      carryDeferral(job, next);
      const written = await this.ctx.store.compareAndSet(
        storeKey,
        entry.version,
        next,
        this.ctx.writeOptions,
      );
      if (written) return written;
      entry = await this.ctx.store.get<JobRecord>(storeKey);
      owned = false;
    }
    return undefined;
  }

  /**
   * Writes the handlers that succeeded so far into the running record (compare-and-set on the
   * entry the heartbeat also writes: it waits for a renewal under way, and is one itself). Best
   * effort: a failed write only leaves the attempt's final write to record them.
   */
  async saveProgress(
    lease: HeldLease,
    done: readonly string[],
    results: Record<string, unknown> | undefined,
  ): Promise<void> {
    if (lease.slot < 0) return;
    if (lease.renewal) await lease.renewal;
    const save = async (): Promise<void> => {
      const value: JobRecord = { ...lease.entry.value, doneHandlers: done.slice() };
      if (results) value.results = { ...value.results, ...results };
      try {
        const written = await this.ctx.store.compareAndSet(
          lease.storeKey,
          lease.entry.version,
          value,
          this.ctx.writeOptions,
        );
        if (written) lease.entry = written;
      } catch (error) {
        this.ctx.logger.warn(`Could not record the progress of job ${lease.storeKey}: ${describe(error)}`);
      }
    };
    const saving = save();
    lease.renewal = saving.finally(() => (lease.renewal = undefined));
    await lease.renewal;
  }

  /** Registers a running job for the heartbeat, which renews its lease while it runs. */
  hold(storeKey: string, entry: StoreEntry<JobRecord>): HeldLease {
    const lease: HeldLease = { storeKey, entry, slot: this.held.length, renewal: undefined, lost: false };
    this.held.push(lease);
    if (!this.heartbeat && !this.ctx.signal.aborted) {
      this.heartbeat = setInterval(this.renewLeases, this.heartbeatMs);
      this.heartbeat.unref();
    }
    return lease;
  }

  release(lease: HeldLease): void {
    if (lease.slot < 0) return;
    const last = this.held.pop()!;
    if (last !== lease) {
      this.held[lease.slot] = last;
      last.slot = lease.slot;
    }
    lease.slot = -1;
  }

  /** The heartbeat: renews the lease of every job running for at least half a heartbeat. */
  private readonly renewLeases = (): void => {
    const now = this.ctx.now();
    for (const lease of this.held) {
      if (
        lease.renewal ||
        (lease.entry.value.leaseUntil ?? 0) - now > this.ctx.leaseMs - this.heartbeatMs / 2
      )
        continue;
      lease.renewal = this.renew(lease.storeKey, lease).finally(() => (lease.renewal = undefined));
    }
  };

  private async renew(storeKey: string, lease: HeldLease): Promise<void> {
    const { value, version } = lease.entry;
    try {
      const written = await this.ctx.store.compareAndSet(
        storeKey,
        version,
        { ...value, leaseUntil: this.ctx.now() + this.ctx.leaseMs },
        this.ctx.writeOptions,
      );
      if (written) {
        lease.entry = written;
        return;
      }
      lease.lost = true;
      this.release(lease);
      this.ctx.logger.warn(
        `Job ${value.type} ${maskPhoneNumbers(value.key)} was taken over by another instance while it ran here (its lease expired): its handlers may run twice`,
      );
    } catch (error) {
      // The store is unreachable: try again on the next beat (the lease still runs).
      this.ctx.logger.warn(`Could not renew the lease of job ${storeKey}: ${describe(error)}`);
    }
  }
}
