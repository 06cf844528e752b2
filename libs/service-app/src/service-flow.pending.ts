/**
 * The sessions of this instance that were started and have not had their first answer yet: the
 * only sessions anyone can create without going past the first prompt, so the ones a flood of
 * made-up SessionIds would pile up. Bounded by `limit`; each one is forgotten here at the same
 * time its store record expires (`ttlMs` after the start), or at its first answer.
 *
 * One map, in start order: every start gets the same TTL, so insertion order is expiry order and
 * the expired ones are always at the front (a restart of a SessionId moves it to the back).
 */
export class PendingStarts {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** How many are waiting for their first answer (after dropping the expired ones). */
  get size(): number {
    this.prune();
    return this.expiries.size;
  }

  /** False when the limit is reached: the start must not be stored. A re-started SessionId always fits. */
  hasRoom(sessionId: string): boolean {
    this.prune();
    return this.expiries.size < this.limit || this.expiries.has(sessionId);
  }

  started(sessionId: string): void {
    this.expiries.delete(sessionId);
    this.expiries.set(sessionId, this.now() + this.ttlMs);
  }

  /** The session had its first answer, ended, or was released. */
  settled(sessionId: string): void {
    this.expiries.delete(sessionId);
  }

  private prune(): void {
    const now = this.now();
    for (const [sessionId, expiresAt] of this.expiries) {
      if (expiresAt > now) return;
      this.expiries.delete(sessionId);
    }
  }
}
