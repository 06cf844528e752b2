/** A start pushed out to make room: its store record is deleted only if still at `version`. */
export interface EvictedStart {
  sessionId: string;
  /** The version the start was written at (a later answer, here or on another instance, bumps it). */
  version: number;
}

interface Start {
  expiresAt: number;
  version: number;
}

/**
 * The sessions of this instance that were started and have not had their first answer yet: the
 * only sessions anyone can create without going past the first prompt, so the ones a flood of
 * made-up SessionIds would pile up. At most `limit`; each one is forgotten here at the same time
 * its store record expires (`ttlMs` after the start), or at its first answer.
 *
 * At the limit, a new start pushes out the oldest one: a flood evicts the flood (its own earlier
 * starts), not the customers, who answer within seconds and so leave this map long before
 * `limit` further starts arrive. Refusing new starts instead would lock every customer out for as
 * long as the flood goes on.
 *
 * One map, in start order: every start gets the same TTL, so insertion order is both expiry order
 * and eviction order (a restart of a SessionId moves it to the back).
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

  /**
   * Records a start written at `version`; returns the oldest start it pushed out when the limit
   * was reached (the caller deletes that one's store record), else undefined.
   */
  started(sessionId: string, version: number): EvictedStart | undefined {
    this.starts.delete(sessionId);
    this.prune();
    let evicted: EvictedStart | undefined;
    if (this.starts.size >= this.limit) {
      // The first entry is the oldest: Map iterates in insertion order.
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
