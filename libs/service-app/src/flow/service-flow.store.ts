/** Sessions in the store (sliding TTL, compare-and-set: two calls never both advance one); starts capped. */
import { deleteIfVersion } from '#internal';
import type { HubtelStore, StoreWriteOptions } from 'nestjs-hubtel';
import { SERVICE_APP_KEYS } from '../service-app.constants.js';
import { describe, type ServiceAppLogger } from '../service-app.logger.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { ServiceFlowResponse } from '../service-app.types.js';
import { PendingStarts, type EvictedStart } from './service-flow.pending.js';
import { releaseResponse } from './service-flow.responses.js';
import { readRecord, sessionKey, type SessionRecord } from './service-flow.session.js';
import type { UssdScreens } from './service-flow.ussd.js';

export class FlowSessionStore {
  /** Shared by every account's engine: `maxPendingSessions` is the instance's. */
  pending: PendingStarts;
  private readonly sessionWrite: StoreWriteOptions;
  /** A start lives the shorter `sessionStartTtlMs` until its first answer. */
  private readonly startWrite: StoreWriteOptions;
  /** When the cap of pending starts was last reported (once a minute at most). */
  private capWarnedAt = -Infinity;

  constructor(
    readonly store: HubtelStore,
    private readonly options: ResolvedServiceAppOptions,
    private readonly logger: ServiceAppLogger,
    private readonly ussd: UssdScreens,
  ) {
    this.sessionWrite = Object.freeze({ ttlMs: options.sessionTtlMs });
    this.startWrite = Object.freeze({ ttlMs: options.sessionStartTtlMs });
    this.pending = new PendingStarts(options.maxPendingSessions, options.sessionStartTtlMs);
  }

  /** The session under `key` and its version (`session` undefined: unreadable by this version). */
  async read(key: string): Promise<{ version: number; session: SessionRecord | undefined } | undefined> {
    const entry = await this.store.get<unknown>(key);
    return entry && { version: entry.version, session: readRecord(entry.value) };
  }

  /** Writes the session (compare-and-set), then answers; when another call won, its prompt is answered. */
  async save(
    sessionId: string,
    key: string,
    session: SessionRecord,
    version: number | undefined,
    answer: () => ServiceFlowResponse,
    /** Once an answer is written (a resumable flow keeps its state for the next dial). */
    written?: () => Promise<void>,
  ): Promise<ServiceFlowResponse> {
    if (version === undefined) {
      // A new initiation starts over, even over a SessionId seen before.
      const started = await this.store.set(key, session, this.startWrite);
      const evicted = this.pending.started(sessionId, started.version);
      if (evicted) await this.evict(evicted);
      return answer();
    }
    if (await this.store.compareAndSet(key, version, session, this.sessionWrite)) {
      this.pending.settled(sessionId);
      await written?.();
      return answer();
    }
    const winner = (await this.read(key))?.session;
    this.logger.warn(`Concurrent answers for session ${sessionId}; the first one was kept`);
    return winner
      ? this.ussd.prompt(winner, sessionId)
      : releaseResponse(sessionId, this.options.messages.sessionExpired);
  }

  /** `timeout`: marked timed out (compare-and-set: an answer that won the race is refused next). */
  async timeOut(sessionId: string, key: string, version: number, session: SessionRecord): Promise<void> {
    await this.store.compareAndSet(key, version, { ...session, timedOut: true }, this.sessionWrite);
    this.pending.settled(sessionId);
  }

  async forget(key: string): Promise<void> {
    await this.store.delete(key);
    this.pending.settled(key.slice(SERVICE_APP_KEYS.session.length));
  }

  /** The oldest start gives way, deleted only at its start version (one answered since is left alone). */
  private async evict(evicted: EvictedStart): Promise<void> {
    const now = Date.now();
    if (now - this.capWarnedAt >= 60_000) {
      this.capWarnedAt = now;
      this.logger.warn(
        `${this.options.maxPendingSessions} sessions are waiting for their first answer (serviceApp.maxPendingSessions); the oldest unanswered starts are forgotten to make room for new ones (a flood of made-up session starts?)`,
      );
    }
    try {
      await deleteIfVersion(this.store, sessionKey(evicted.sessionId), evicted.version);
    } catch (error) {
      this.logger.debug(
        `Could not forget the unanswered start of session ${evicted.sessionId}: ${describe(error)}`,
      );
    }
  }
}
