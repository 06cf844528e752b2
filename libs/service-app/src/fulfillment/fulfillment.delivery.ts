// The one delivery of a session: its goods go out under one OrderId, ever (while records are kept).
// The first paid order about to run its handlers claims the session (set-if-absent); any other
// OrderId of it runs no handler and is told the delivering order's outcome, so every OrderId the
// platform sent gets its callback. Asked by the fulfillment job's gate, on every road.
import { type HubtelStore, type StoreEntry, type HubtelLogger } from 'nestjs-hubtel';
import { DEFAULT_JOB_RECORD_TTL_MS, deleteIfVersion } from '#internal';
import { DeliveryContendedError } from './fulfillment.errors.js';
import { SERVICE_APP_KEYS } from '../service-app.constants.js';
import type { FulfillmentCallback } from '../service-app.types.js';

/** The outcome reported for the delivering order, mirrored to the session's other OrderIds. */
export type DeliveryOutcome = Pick<FulfillmentCallback, 'ServiceStatus' | 'MetaData'>;

export interface SessionDelivery {
  /** The OrderId whose handlers deliver the session's goods. */
  orderId: string;
  /** Other OrderIds that reached delivery for this session: they get the same outcome. */
  others?: string[];
  outcome?: DeliveryOutcome;
}

/** What `enter` says of one order (`fresh`: the claim was made by this call, not found). */
export type DeliveryTurn =
  | { deliver: true; fresh: boolean }
  | { deliver: false; delivering: string; outcome: DeliveryOutcome | undefined };

/** Most other OrderIds kept per session: past this, made-up ones flood it and get nothing mirrored. */
const MAX_OTHERS = 16;

export function deliveryKey(sessionId: string): string {
  return `${SERVICE_APP_KEYS.delivery}${sessionId}`;
}

/** Most claims remembered between `enter` and `settle` (a run that never settles leaves one). */
const MAX_CLAIMS = 10_000;
/** How long a remembered claim is used: far below the entry's TTL, so never a recreated entry's version 1. */
const CLAIM_USE_MS = 10 * 60_000;

export class FulfillmentDeliveries {
  private readonly write = { ttlMs: DEFAULT_JOB_RECORD_TTL_MS };
  /** The entries `enter` left, by session: `settle` writes over them without a read (CAS catches joiners). */
  private readonly claims = new Map<string, { entry: StoreEntry<SessionDelivery>; at: number }>();

  constructor(
    private readonly store: HubtelStore,
    private readonly logger: HubtelLogger,
  ) {}

  async get(sessionId: string): Promise<SessionDelivery | undefined> {
    return (await this.store.get<SessionDelivery>(deliveryKey(sessionId)))?.value;
  }

  /**
   * Claims the session's delivery, or joins the order that has it (its outcome mirrored, now or when
   * reported). Compare-and-set throughout: two replicas entering at once make one delivery.
   */
  async enter(sessionId: string, orderId: string): Promise<DeliveryTurn> {
    const key = deliveryKey(sessionId);
    for (let tries = 0; tries < 8; tries++) {
      if (await this.store.setIfAbsent<SessionDelivery>(key, { orderId }, this.write))
        return this.claimed(sessionId, { value: { orderId }, version: 1 }, true);
      const entry = await this.store.get<SessionDelivery>(key);
      if (!entry) continue; // expired between the two calls
      const delivery = entry.value;
      if (delivery.orderId === orderId) return this.claimed(sessionId, entry, false);
      const others = delivery.others ?? [];
      if (others.includes(orderId) || others.length >= MAX_OTHERS) {
        if (!others.includes(orderId))
          this.logger.warn(
            `Order ${orderId} of session ${sessionId}: too many OrderIds for one session; no outcome is mirrored to it`,
          );
        return { deliver: false, delivering: delivery.orderId, outcome: delivery.outcome };
      }
      const joined: SessionDelivery = { ...delivery, others: [...others, orderId] };
      if (await this.store.compareAndSet(key, entry.version, joined, this.write))
        return { deliver: false, delivering: delivery.orderId, outcome: delivery.outcome };
    }
    // Contended past reason: no delivery (the safe side); the gate's caller retries the job.
    throw new DeliveryContendedError(sessionId);
  }

  /** Records the delivering order's outcome (the first stays); returns the other OrderIds to tell. */
  async settle(sessionId: string, orderId: string, outcome: DeliveryOutcome): Promise<string[]> {
    const key = deliveryKey(sessionId);
    const claim = this.claims.get(sessionId);
    this.claims.delete(sessionId);
    let known = claim && Date.now() - claim.at < CLAIM_USE_MS ? claim.entry : undefined;
    for (let tries = 0; tries < 8; tries++) {
      const entry = known ?? (await this.store.get<SessionDelivery>(key));
      known = undefined;
      if (entry?.value.orderId !== orderId) return [];
      if (entry.value.outcome) return entry.value.others ?? [];
      const settled: SessionDelivery = { ...entry.value, outcome };
      if (await this.store.compareAndSet(key, entry.version, settled, this.write))
        return settled.others ?? [];
    }
    throw new DeliveryContendedError(sessionId);
  }

  /**
   * An order found reported before its handlers ran gives its claim back: a `fresh` one is deleted as
   * if never made; one a joiner reached, or an earlier run's, is settled with the reported outcome.
   */
  async release(
    sessionId: string,
    orderId: string,
    outcome: DeliveryOutcome,
    fresh: boolean,
  ): Promise<string[]> {
    if (fresh) {
      this.claims.delete(sessionId);
      if (await deleteIfVersion(this.store, deliveryKey(sessionId), 1)) return [];
    }
    return this.settle(sessionId, orderId, outcome);
  }

  private claimed(sessionId: string, entry: StoreEntry<SessionDelivery>, fresh: boolean): DeliveryTurn {
    this.claims.delete(sessionId);
    this.claims.set(sessionId, { entry, at: Date.now() });
    if (this.claims.size > MAX_CLAIMS) this.claims.delete(this.claims.keys().next().value!);
    return { deliver: true, fresh };
  }
}
