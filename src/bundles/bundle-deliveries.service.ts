import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type HubtelStore } from 'nestjs-hubtel';
import { EXAMPLE_STORE } from '../platform/store.module.js';

export interface BundleDelivery {
  /** Our reference of the top-up (sent back to the platform as the callback's MetaData). */
  id: string;
  orderId: string;
  sessionId: string;
  destination: string;
  bundle: string;
  bundleName: string;
  amount: number;
  deliveredAt: string;
  /** What the platform was told (`success`/`failed`), once the fulfillment callback was accepted. */
  reported: string | null;
  reportedAt: string | null;
}

/** How long a delivery is kept (the store forgets it then). */
const DELIVERY_TTL_MS = 30 * 24 * 60 * 60 * 1000;

const KEY_PREFIX = 'example:delivery:';

/**
 * The bundles delivered, in the app's store (EXAMPLE_STORE: memory, or Redis shared by every
 * replica). In a real service this is the call to the telco's top-up API; here it records the
 * delivery so the simulator page and the tests can see it. Idempotent per OrderId (set-if-absent):
 * the module runs the fulfillment handler once per order, and this holds even if not.
 */
@Injectable()
export class BundleDeliveries {
  constructor(@Inject(EXAMPLE_STORE) private readonly store: HubtelStore) {}

  async deliver(
    input: Omit<BundleDelivery, 'id' | 'deliveredAt' | 'reported' | 'reportedAt'>,
  ): Promise<BundleDelivery> {
    const delivery: BundleDelivery = {
      ...input,
      id: `dlv_${randomBytes(8).toString('hex')}`,
      deliveredAt: new Date().toISOString(),
      reported: null,
      reportedAt: null,
    };
    const key = KEY_PREFIX + input.orderId;
    if (await this.store.setIfAbsent(key, delivery, { ttlMs: DELIVERY_TTL_MS })) return delivery;
    return (await this.store.get<BundleDelivery>(key))?.value ?? delivery;
  }

  async reported(orderId: string, serviceStatus: string): Promise<void> {
    const key = KEY_PREFIX + orderId;
    for (;;) {
      const entry = await this.store.get<BundleDelivery>(key);
      if (!entry) return;
      const next = { ...entry.value, reported: serviceStatus, reportedAt: new Date().toISOString() };
      // Compare-and-set: another replica's write in between is read again, not overwritten.
      if (await this.store.compareAndSet(key, entry.version, next)) return;
    }
  }

  async get(orderId: string): Promise<BundleDelivery | undefined> {
    return (await this.store.get<BundleDelivery>(KEY_PREFIX + orderId))?.value;
  }

  /** Newest first. */
  async list(limit = 50): Promise<BundleDelivery[]> {
    const all: BundleDelivery[] = [];
    for await (const [, entry] of this.store.scan<BundleDelivery>(KEY_PREFIX)) all.push(entry.value);
    return all
      .sort((a, b) => b.deliveredAt.localeCompare(a.deliveredAt) || b.id.localeCompare(a.id))
      .slice(0, limit);
  }
}
