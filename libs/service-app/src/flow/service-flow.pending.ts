/** A start pushed out to make room: its store record is deleted only if still at `version`. */
export interface EvictedStart {
  sessionId: string;
  /** The version the start was written at (a later answer bumps it). */
  version: number;
}

interface Start {
  expiresAt: number;
  version: number;
}

/**
 * Starts without a first answer (what a flood of made-up SessionIds piles up), at most `limit`: the
 * oldest is pushed out, so a flood evicts itself, not customers, who answer within seconds.
 */
export class PendingStarts {
  private readonly starts = new Map<string, Start>();

  constructor(
    private readonly limit: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** How many are waiting for their first answer (after dropping the expired ones). */
  get size(): number {
    this.prune();
    return this.starts.size;
  }

  /** Records a start written at `version`; returns the start it pushed out, if any. */
  started(sessionId: string, version: number): EvictedStart | undefined {
    this.starts.delete(sessionId);
    this.prune();
    let evicted: EvictedStart | undefined;
    if (this.starts.size >= this.limit) {
      const [oldest, start] = this.starts.entries().next().value as [string, Start];
      this.starts.delete(oldest);
      evicted = { sessionId: oldest, version: start.version };
    }
    this.starts.set(sessionId, { expiresAt: this.now() + this.ttlMs, version });
    return evicted;
  }

  /** The session had its first answer, ended, or was released. */
  settled(sessionId: string): void {
    this.starts.delete(sessionId);
  }

  private prune(): void {
    const now = this.now();
    for (const [sessionId, start] of this.starts) {
      if (start.expiresAt > now) return;
      this.starts.delete(sessionId);
    }
  }
}
