import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';

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

const MAX_DELIVERIES = 10_000;

/**
 * The bundles delivered, in memory. In a real service this is the call to the telco's top-up API;
 * here it records the delivery so the simulator page and the tests can see it. Idempotent per
 * OrderId: the module runs the fulfillment handler once per order, and this holds even if not.
 */
@Injectable()
export class BundleDeliveries {
  private readonly byOrder = new Map<string, BundleDelivery>();

  deliver(input: Omit<BundleDelivery, 'id' | 'deliveredAt' | 'reported' | 'reportedAt'>): BundleDelivery {
    const existing = this.byOrder.get(input.orderId);
    if (existing) return existing;
    const delivery: BundleDelivery = {
      ...input,
      id: `dlv_${randomBytes(8).toString('hex')}`,
      deliveredAt: new Date().toISOString(),
      reported: null,
      reportedAt: null,
    };
    this.byOrder.set(input.orderId, delivery);
    if (this.byOrder.size > MAX_DELIVERIES) this.byOrder.delete(this.byOrder.keys().next().value!);
    return delivery;
  }

  reported(orderId: string, serviceStatus: string): void {
    const delivery = this.byOrder.get(orderId);
    if (!delivery) return;
    delivery.reported = serviceStatus;
    delivery.reportedAt = new Date().toISOString();
  }

  get(orderId: string): BundleDelivery | undefined {
    return this.byOrder.get(orderId);
  }

  /** Newest first. */
  list(limit = 50): BundleDelivery[] {
    return [...this.byOrder.values()].reverse().slice(0, limit);
  }
}
