/** Sessions and their carts in the store (sliding TTL, compare-and-set: two calls never both advance one); starts capped. */
import { describeError, deleteIfVersion } from '#internal';
import { maskMsisdn, type HubtelStore, type StoreWriteOptions, type HubtelLogger } from 'nestjs-hubtel';
import { SERVICE_APP_KEYS, accountOf, cartKey } from '../service-app.constants.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { ServiceFlowResponse } from '../service-app.types.js';
import type { AddToCartReply, StoredCart } from '../service-flow.types.js';
import { cartResponse, checkCartItem, releaseResponse } from './service-flow.responses.js';
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
    private readonly logger: HubtelLogger,
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
        `Could not forget the unanswered start of session ${evicted.sessionId}: ${describeError(error)}`,
      );
    }
  }

  /** `ctx.addToCart()`: the cart written under the SessionId for its fulfillment request. */
  async addToCart(
    sessionId: string,
    session: SessionRecord,
    step: string,
    reply: AddToCartReply,
    data: Record<string, unknown>,
    finish: () => Promise<void>,
  ): Promise<ServiceFlowResponse> {
    const item = checkCartItem(step, reply?.message, reply?.item);
    // A session's goods go out once whatever its carts: fulfillment.delivery.ts keeps that.
    const cart: StoredCart = {
      sessionId,
      flow: session.flow,
      serviceCode: session.serviceCode,
      mobile: session.mobile,
      item,
      data,
      createdAt: new Date().toISOString(),
    };
    if (session.operator !== undefined) cart.operator = session.operator;
    if (session.account !== undefined) cart.account = session.account;
    const written = await this.store.setIfAbsent(cartKey(sessionId), cart, { ttlMs: this.options.cartTtlMs });
    await finish();
    if (!written && !(await this.same(sessionId, cart))) {
      // The SessionId was started again while its cart stood: the cart it has is the one paid for.
      this.logger.warn(
        `Session ${sessionId} already has a cart; another one (for ${maskMsisdn(session.mobile)}) was not written`,
      );
      return releaseResponse(sessionId, this.options.messages.sessionExpired);
    }
    if (this.logger.isLevelEnabled('debug'))
      this.logger.debug(
        `Session ${sessionId} added "${item.ItemName}" x${item.Qty} at ${item.Price} to the cart`,
      );
    const label = reply.label ?? reply.message;
    if (!session.ussd) return cartResponse(sessionId, reply.message, label, item);
    const shown = this.ussd.shownText(true, session.flow, step, reply.message);
    return cartResponse(sessionId, shown, label, item, 'Release');
  }

  /** Whether the session's stored cart is `cart` again (a repeated answer), not another one. */
  private async same(sessionId: string, cart: StoredCart): Promise<boolean> {
    const kept = await this.cart(sessionId);
    return (
      !!kept &&
      kept.mobile === cart.mobile &&
      accountOf(kept) === accountOf(cart) &&
      JSON.stringify(kept.item) === JSON.stringify(cart.item)
    );
  }

  async cart(sessionId: string): Promise<StoredCart | undefined> {
    return (await this.store.get<StoredCart | null>(cartKey(sessionId)))?.value ?? undefined;
  }
}

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
