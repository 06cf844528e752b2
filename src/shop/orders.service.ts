import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { HUBTEL_DEFAULT_ACCOUNT, type HubtelStore } from 'nestjs-hubtel';
import { HUBTEL_PLATFORM, type HubtelPlatform } from '../platform/platform.module.js';
import { EXAMPLE_STORE } from '../platform/store.module.js';
import type { Product } from './catalog.js';

/** `needs-attention`: money arrived that matches the order on neither count (amount, currency). */
export type OrderStatus =
  'awaiting-payment' | 'paid' | 'failed' | 'cancelled' | 'expired' | 'needs-attention';
export type ReceiptStatus = 'not-sent' | 'sending' | 'sent' | 'failed' | 'unknown';

export interface Order {
  /** Also the invoice's clientReference (at most 32 characters): one key for both. */
  id: string;
  /** The shop's Hubtel account (`default` when absent: orders placed before there were two shops). */
  shop?: string;
  productId: string;
  productName: string;
  amount: number;
  customerName?: string;
  /** The customer's number, normalised (233XXXXXXXXX). */
  phone: string;
  status: OrderStatus;
  /** Why the last payment attempt failed, or why checkout could not start. */
  failure?: string;
  checkoutId?: string;
  checkoutUrl?: string;
  payment?: {
    /** What the payer paid (gross). */
    amountPaid: number;
    /** The platform's charge, and what reaches the shop (net), as the status check verified them. */
    charges?: number;
    net?: number;
    /** `merchant` or `payer`. */
    chargesBorneBy?: string;
    channel?: string;
    source: string;
    confirmedByStatusCheck: boolean;
    payer?: string;
  };
  /** `since`: when a 'sending' claim was made (a claim older than RECEIPT_SENDING_STALE_MS lost its outcome). */
  receipt: { status: ReceiptStatus; to?: string; messageId?: string; error?: string; since?: string };
  createdAt: string;
  updatedAt: string;
  paidAt?: string;
}

/** Shape of an order id: unguessable, so one customer cannot read another's order page. */
export const ORDER_ID_PATTERN = /^ord_[0-9a-f]{24}$/;

/** How long a paid order is kept after its payment (the store forgets it then). */
const ORDER_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * An unpaid order lives as long as its invoice is watched (checkout's `giveUpAfterMs`, default
 * 24 h) and this much more; once the invoice expires, the order is kept only this long (its page
 * says "expired"). Orders anyone can place cost the store a day, not a month.
 */
const UNPAID_ORDER_GRACE_MS = 60 * 60 * 1000;
const GIVE_UP_DEFAULT_MS = 24 * 60 * 60 * 1000;

const KEY_PREFIX = 'example:order:';

/**
 * How long a receipt may stay 'sending': far longer than a send and the recording of its outcome
 * can take (the SMS timeout and retries, then RECEIPT_RECORD_PATIENCE_MS in the listener). Older,
 * its outcome was lost and no run of the paid handler came to settle it (settleLostReceipt; its
 * job given up): the page shows it 'unknown'.
 */
export const RECEIPT_SENDING_STALE_MS = 10 * 60 * 1000;

/**
 * The shop's orders, in the app's store (EXAMPLE_STORE: this process's memory, or Redis with
 * REDIS_URL, shared by every replica). State changes are the only ways in; each is idempotent (a
 * paid order never goes back, a late "failed" never hides a payment) and atomic: a compare-and-set
 * on the order's version, tried again on a conflict, so two replicas changing one order at once
 * never lose either change.
 */
@Injectable()
export class OrdersService {
  private readonly unpaidTtlMs: number;

  constructor(
    @Inject(EXAMPLE_STORE) private readonly store: HubtelStore,
    @Inject(HUBTEL_PLATFORM) platform: HubtelPlatform,
  ) {
    const giveUp = platform.checkout.reconciliation?.giveUpAfterMs ?? GIVE_UP_DEFAULT_MS;
    this.unpaidTtlMs = giveUp + UNPAID_ORDER_GRACE_MS;
  }

  async create(product: Product, phone: string, customerName?: string, shop?: string): Promise<Order> {
    const now = new Date().toISOString();
    const order: Order = {
      id: `ord_${randomBytes(12).toString('hex')}`,
      ...(shop === undefined || shop === HUBTEL_DEFAULT_ACCOUNT ? {} : { shop }),
      productId: product.id,
      productName: product.name,
      amount: product.price,
      phone,
      status: 'awaiting-payment',
      receipt: { status: 'not-sent' },
      createdAt: now,
      updatedAt: now,
      ...(customerName ? { customerName } : {}),
    };
    await this.store.setIfAbsent(KEY_PREFIX + order.id, order, { ttlMs: this.unpaidTtlMs });
    return order;
  }

  async get(id: unknown): Promise<Order | undefined> {
    if (typeof id !== 'string' || !ORDER_ID_PATTERN.test(id)) return undefined;
    return (await this.store.get<Order>(KEY_PREFIX + id))?.value;
  }

  /** Every order kept (a scan of the store: for tests and tools, not for a request path). */
  async list(): Promise<Order[]> {
    const orders: Order[] = [];
    for await (const [, entry] of this.store.scan<Order>(KEY_PREFIX)) orders.push(entry.value);
    return orders;
  }

  async checkoutStarted(id: string, checkout: { checkoutId: string; checkoutUrl: string }): Promise<void> {
    await this.change(id, (o) => {
      o.checkoutId = checkout.checkoutId;
      o.checkoutUrl = checkout.checkoutUrl;
      return true;
    });
  }

  /** The payment is verified. Returns false when it already was (nothing changes). */
  async markPaid(id: string, payment: NonNullable<Order['payment']>): Promise<boolean> {
    const { changed } = await this.change(
      id,
      (o) => {
        if (o.status === 'paid') return false;
        // Money arrived: that wins over an earlier failure, a cancel click or an expiry.
        o.status = 'paid';
        o.payment = payment;
        o.paidAt = new Date().toISOString();
        delete o.failure;
        return true;
      },
      ORDER_TTL_MS,
    );
    return changed;
  }

  /**
   * A payment attempt failed: the order still awaits payment, with a note. An attempt is not the
   * order (the payer may try again), and a "failed" callback carries no proof: a forged one made
   * the order show "failed" until the genuine payment came.
   */
  async noteFailedAttempt(id: string, reason: string): Promise<void> {
    await this.change(id, (o) => {
      if (o.status !== 'awaiting-payment' && o.status !== 'failed') return false;
      o.status = 'awaiting-payment';
      o.failure = reason;
      return true;
    });
  }

  /** The order itself failed: its checkout could not start, so there is nothing to pay. */
  async markFailed(id: string, reason: string): Promise<void> {
    await this.change(id, (o) => {
      if (o.status !== 'awaiting-payment') return false;
      o.status = 'failed';
      o.failure = reason;
      return true;
    });
  }

  /** The payer cancelled at checkout. Returns the order as it now is. */
  async markCancelled(id: string): Promise<Order | undefined> {
    const { order } = await this.change(id, (o) => {
      if (o.status !== 'awaiting-payment' && o.status !== 'failed') return false;
      o.status = 'cancelled';
      return true;
    });
    return order;
  }

  /** No payment came before the checkout module gave up on the invoice. */
  /** Money arrived that does not match the order: kept for a person (the checkout module holds the invoice too). */
  async markNeedsAttention(id: string, reason: string): Promise<void> {
    await this.change(
      id,
      (o) => {
        if (o.status === 'paid' || o.status === 'needs-attention') return false;
        o.status = 'needs-attention';
        o.failure = reason;
        return true;
      },
      ORDER_TTL_MS,
    );
  }

  async markExpired(id: string): Promise<void> {
    await this.change(
      id,
      (o) => {
        if (o.status === 'paid' || o.status === 'expired' || o.status === 'needs-attention') return false;
        o.status = 'expired';
        return true;
      },
      UNPAID_ORDER_GRACE_MS,
    );
  }

  /**
   * Claims the receipt for sending: true for exactly one caller while it is neither sent, nor
   * being sent, nor of unknown outcome (a retried handler, or a second replica, gets false).
   */
  async claimReceipt(id: string, to: string): Promise<boolean> {
    const { changed } = await this.change(id, (o) => {
      if (o.receipt.status !== 'not-sent' && o.receipt.status !== 'failed') return false;
      o.receipt = { status: 'sending', to, since: new Date().toISOString() };
      return true;
    });
    return changed;
  }

  /**
   * A receipt still 'sending' when the paid handler runs again becomes 'unknown' (never resent):
   * the handler runs again only once its last run is over (it threw, or its process died and the
   * job was taken over), so the send's outcome was lost, and the SMS may have gone out. True when
   * it was one.
   */
  async settleLostReceipt(id: string): Promise<boolean> {
    const { changed } = await this.change(id, (o) => {
      if (o.receipt.status !== 'sending') return false;
      o.receipt = {
        ...o.receipt,
        status: 'unknown',
        error: 'the run sending it ended before recording its outcome',
      };
      return true;
    });
    return changed;
  }

  async setReceipt(id: string, receipt: Order['receipt']): Promise<void> {
    await this.change(id, (o) => {
      o.receipt = receipt;
      return true;
    });
  }

  /**
   * Applies `apply` to a copy of the order and writes it if the order is still the version that
   * was read; otherwise reads it again and re-applies (another replica wrote in between).
   * `apply` returns false to change nothing. `ttlMs` gives the order a new lifetime (paid: kept a
   * month; expired: kept briefly); without it, it keeps the one it had.
   */
  private async change(
    id: string,
    apply: (order: Order) => boolean,
    ttlMs?: number,
  ): Promise<{ order?: Order; changed: boolean }> {
    const key = KEY_PREFIX + id;
    for (;;) {
      const entry = await this.store.get<Order>(key);
      if (!entry) return { changed: false };
      const order = structuredClone(entry.value);
      if (!apply(order)) return { order: entry.value, changed: false };
      order.updatedAt = new Date().toISOString();
      const write = ttlMs === undefined ? undefined : { ttlMs };
      if (await this.store.compareAndSet(key, entry.version, order, write)) return { order, changed: true };
    }
  }
}

/** What the order page's script and JSON clients see (no internal fields; the phone masked). */
export function publicOrder(order: Order, maskedPhone: (phone: string) => string) {
  return {
    id: order.id,
    shop: order.shop ?? HUBTEL_DEFAULT_ACCOUNT,
    product: order.productName,
    amount: order.amount,
    status: order.status,
    failure: order.failure ?? null,
    checkoutUrl:
      order.status === 'awaiting-payment' || order.status === 'failed' ? (order.checkoutUrl ?? null) : null,
    paidAt: order.paidAt ?? null,
    payment: order.payment
      ? {
          amountPaid: order.payment.amountPaid,
          charges: order.payment.charges ?? null,
          net: order.payment.net ?? null,
          chargesBorneBy: order.payment.chargesBorneBy ?? null,
          channel: order.payment.channel ?? null,
          confirmedByStatusCheck: order.payment.confirmedByStatusCheck,
        }
      : null,
    receipt: {
      // Shown as it will be settled: a lost 'sending' would keep the page waiting forever.
      status: isStaleSending(order) ? 'unknown' : order.receipt.status,
      to: order.receipt.to ? maskedPhone(order.receipt.to) : null,
      messageId: order.receipt.messageId ?? null,
    },
    /** True once nothing more will change by itself (the page stops polling). */
    settled: isSettled(order),
    createdAt: order.createdAt,
    updatedAt: order.updatedAt,
  };
}

export type PublicOrder = ReturnType<typeof publicOrder>;

function isStaleSending(order: Order, now = Date.now()): boolean {
  if (order.receipt.status !== 'sending') return false;
  // Claims written before `since` existed: the order's last change is when it was claimed, or later.
  const since = Date.parse(order.receipt.since ?? order.updatedAt);
  return !(now - since < RECEIPT_SENDING_STALE_MS);
}

function isSettled(order: Order): boolean {
  if (order.status === 'paid')
    return (
      order.receipt.status !== 'not-sent' && (order.receipt.status !== 'sending' || isStaleSending(order))
    );
  return order.status === 'cancelled' || order.status === 'expired' || order.status === 'needs-attention';
}
