import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Product } from './catalog.js';

export type OrderStatus = 'awaiting-payment' | 'paid' | 'failed' | 'cancelled' | 'expired';
export type ReceiptStatus = 'not-sent' | 'sending' | 'sent' | 'failed' | 'unknown';

export interface Order {
  /** Also the invoice's clientReference (at most 32 characters): one key for both. */
  id: string;
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
    amountPaid: number;
    channel?: string;
    source: string;
    confirmedByStatusCheck: boolean;
    payer?: string;
  };
  receipt: { status: ReceiptStatus; to?: string; messageId?: string; error?: string };
  createdAt: string;
  updatedAt: string;
  paidAt?: string;
}

/** Shape of an order id: unguessable, so one customer cannot read another's order page. */
export const ORDER_ID_PATTERN = /^ord_[0-9a-f]{24}$/;

/** Orders kept before the oldest are forgotten (the example keeps them in memory). */
const MAX_ORDERS = 10_000;

/**
 * The shop's orders, in memory (a real shop has a database). State changes are the only ways in,
 * and each one is idempotent: a paid order never goes back, a late "failed" never hides a payment.
 */
@Injectable()
export class OrdersService {
  private readonly orders = new Map<string, Order>();

  create(product: Product, phone: string, customerName?: string): Order {
    const now = new Date().toISOString();
    const order: Order = {
      id: `ord_${randomBytes(12).toString('hex')}`,
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
    this.orders.set(order.id, order);
    if (this.orders.size > MAX_ORDERS) this.orders.delete(this.orders.keys().next().value!);
    return order;
  }

  get(id: unknown): Order | undefined {
    return typeof id === 'string' && ORDER_ID_PATTERN.test(id) ? this.orders.get(id) : undefined;
  }

  list(): Order[] {
    return [...this.orders.values()];
  }

  checkoutStarted(id: string, checkout: { checkoutId: string; checkoutUrl: string }): void {
    this.change(id, (o) => {
      o.checkoutId = checkout.checkoutId;
      o.checkoutUrl = checkout.checkoutUrl;
    });
  }

  /** The payment is verified. Returns false when it already was (nothing changes). */
  markPaid(id: string, payment: NonNullable<Order['payment']>): boolean {
    let changed = false;
    this.change(id, (o) => {
      if (o.status === 'paid') return;
      // Money arrived: that wins over an earlier failure, a cancel click or an expiry.
      o.status = 'paid';
      o.payment = payment;
      o.paidAt = new Date().toISOString();
      delete o.failure;
      changed = true;
    });
    return changed;
  }

  /** A payment attempt failed (the payer may try again on the payment page). */
  markFailed(id: string, reason: string): void {
    this.change(id, (o) => {
      if (o.status !== 'awaiting-payment' && o.status !== 'failed') return;
      o.status = 'failed';
      o.failure = reason;
    });
  }

  /** The payer cancelled at checkout. */
  markCancelled(id: string): void {
    this.change(id, (o) => {
      if (o.status === 'awaiting-payment' || o.status === 'failed') o.status = 'cancelled';
    });
  }

  /** No payment came before the checkout module gave up on the invoice. */
  markExpired(id: string): void {
    this.change(id, (o) => {
      if (o.status !== 'paid') o.status = 'expired';
    });
  }

  setReceipt(id: string, receipt: Order['receipt']): void {
    this.change(id, (o) => {
      o.receipt = receipt;
    });
  }

  private change(id: string, apply: (order: Order) => void): void {
    const order = this.orders.get(id);
    if (!order) return;
    apply(order);
    order.updatedAt = new Date().toISOString();
  }
}

/** What the order page's script and JSON clients see (no internal fields; the phone masked). */
export function publicOrder(order: Order, maskedPhone: (phone: string) => string) {
  return {
    id: order.id,
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
          channel: order.payment.channel ?? null,
          confirmedByStatusCheck: order.payment.confirmedByStatusCheck,
        }
      : null,
    receipt: {
      status: order.receipt.status,
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

function isSettled(order: Order): boolean {
  if (order.status === 'paid')
    return order.receipt.status !== 'not-sent' && order.receipt.status !== 'sending';
  return order.status === 'cancelled' || order.status === 'expired';
}
