import { HubtelError, type HubtelStore, type StoreEntry } from 'nestjs-hubtel';
import {
  CHECKOUT_DEFAULT_ACCOUNT,
  CHECKOUT_INVOICE_PREFIX,
  CHECKOUT_WATCH_PREFIX,
} from '../checkout.constants.js';
import type { PaymentAmounts } from 'nestjs-hubtel';
import type { CheckoutAttention, CheckoutEvidenceSource, CheckoutPayee } from '../checkout.events.js';

/**
 * `pending` until an outcome is verified; `failed` after a failed attempt (the payer may retry and
 * still pay); `paid` is final; `expired` when the reconciler gave up (a late verified payment still
 * turns it `paid`: money received always wins); `attention` when a verified payment matches on
 * neither count (paid, needs a person: `resolveAttention` turns it `paid` or `refunded`);
 * `refunded`: its payment was given back (final).
 */
export type CheckoutInvoiceStatus = 'pending' | 'paid' | 'failed' | 'expired' | 'attention' | 'refunded';

/** What the module remembers of an invoice it created. Plain JSON. */
export interface CheckoutInvoice {
  clientReference: string;
  /**
   * The account that created it (`default`, or a named account): its keys and POS Sales ID confirm
   * and reconcile it, and its callbacks come on its path only. Absent on records written before
   * accounts existed: `default`.
   */
  account?: string;
  /** The platform's id, once `/items/initiate` answered. */
  checkoutId?: string;
  checkoutUrl?: string;
  checkoutDirectUrl?: string;
  amount: number;
  description: string;
  status: CheckoutInvoiceStatus;
  /**
   * `creating` while `/items/initiate` is in flight, `created` once it answered, `unknown` when
   * no answer came (the platform may or may not have the invoice; the reconciler finds out).
   */
  creation: 'creating' | 'created' | 'unknown';
  /** ISO times. */
  createdAt: string;
  updatedAt: string;
  paidAt?: string;
  amountPaid?: number;
  paidVia?: CheckoutEvidenceSource;
  /** The verified figures of the payment (gross, charges, net, who bore the charge), when the status check gave them. */
  amounts?: PaymentAmounts;
  /** The last failed attempt. */
  failure?: { responseCode?: string; status: string; reason?: string; at: string };
  /**
   * Set when the status check verified a payment that matches on neither count (status
   * `attention`); the reconciler stops. Its `resolution` once resolved.
   */
  attention?: CheckoutAttention;
  /** The caller's `metadata`. */
  metadata?: Record<string, unknown>;
  /** The payee details given to `createInvoice` (the number normalised): this app's own record of who pays. */
  payee?: CheckoutPayee;
  /**
   * Confirmation rounds of paid callbacks that the status check did not confirm. Each ended round
   * moves this on, so the next callback is confirmed afresh rather than taken for a duplicate.
   */
  confirmRound?: number;
  /**
   * When the last ended round's last status check was answered (epoch ms): the next round's
   * first check keeps `verification.recheck.minIntervalMs` from it.
   */
  confirmCheckedAt?: number;
}

/**
 * A copy of `current` with `changes` applied (a change cannot remove a field), built field by
 * field. Not `{ ...current, ...changes }`: V8 builds a spread copy that then gains properties
 * (paidAt, amountPaid, …) through its slow path, many times slower than a literal.
 * The keys come in the order a created, then paid or failed invoice had them. Lists every field
 * of CheckoutInvoice: add new ones here too (the spec round-trips an invoice with all of them).
 */
export function changeInvoice(current: CheckoutInvoice, changes: Partial<CheckoutInvoice>): CheckoutInvoice {
  const next: CheckoutInvoice = {
    clientReference: current.clientReference,
    amount: changes.amount ?? current.amount,
    description: changes.description ?? current.description,
    status: changes.status ?? current.status,
    creation: changes.creation ?? current.creation,
    createdAt: current.createdAt,
    updatedAt: changes.updatedAt ?? current.updatedAt,
  };
  // An invoice never changes account.
  if (current.account !== undefined) next.account = current.account;
  const metadata = changes.metadata ?? current.metadata;
  if (metadata !== undefined) next.metadata = metadata;
  const checkoutId = changes.checkoutId ?? current.checkoutId;
  if (checkoutId !== undefined) next.checkoutId = checkoutId;
  const checkoutUrl = changes.checkoutUrl ?? current.checkoutUrl;
  if (checkoutUrl !== undefined) next.checkoutUrl = checkoutUrl;
  const checkoutDirectUrl = changes.checkoutDirectUrl ?? current.checkoutDirectUrl;
  if (checkoutDirectUrl !== undefined) next.checkoutDirectUrl = checkoutDirectUrl;
  const paidAt = changes.paidAt ?? current.paidAt;
  if (paidAt !== undefined) next.paidAt = paidAt;
  const amountPaid = changes.amountPaid ?? current.amountPaid;
  if (amountPaid !== undefined) next.amountPaid = amountPaid;
  const paidVia = changes.paidVia ?? current.paidVia;
  if (paidVia !== undefined) next.paidVia = paidVia;
  const amounts = changes.amounts ?? current.amounts;
  if (amounts !== undefined) next.amounts = amounts;
  const failure = changes.failure ?? current.failure;
  if (failure !== undefined) next.failure = failure;
  const attention = changes.attention ?? current.attention;
  if (attention !== undefined) next.attention = attention;
  const confirmRound = changes.confirmRound ?? current.confirmRound;
  if (confirmRound !== undefined) next.confirmRound = confirmRound;
  const payee = changes.payee ?? current.payee;
  if (payee !== undefined) next.payee = payee;
  const confirmCheckedAt = changes.confirmCheckedAt ?? current.confirmCheckedAt;
  if (confirmCheckedAt !== undefined) next.confirmCheckedAt = confirmCheckedAt;
  return next;
}

/** The reconciler's schedule for one invoice it still watches. */
export interface CheckoutWatchEntry {
  clientReference: string;
  /** Epoch ms of creation. */
  createdAt: number;
  /** Epoch ms of the next status check. */
  nextCheckAt: number;
  /** Status checks made so far. */
  checks: number;
}

const MAX_CAS_TRIES = 20;

/**
 * Invoices (`hubtel:checkout:invoice:<clientReference>`) and the reconciler's watch list
 * (`hubtel:checkout:watch:<clientReference>`) on a HubtelStore. Every change is a compare-and-set
 * on the invoice's version, so concurrent writers (a callback, the reconciler, another instance)
 * never overwrite each other's transition.
 */
export class CheckoutInvoiceStore {
  private readonly writeOptions: { ttlMs: number };

  constructor(
    private readonly store: HubtelStore,
    ttlMs: number,
    private readonly watchTtlMs: number,
    private readonly now: () => number = Date.now,
    /**
     * False when reconciliation is off: nothing is put on the watch list, so `unwatch` (once per
     * payment) skips a store delete. A watch entry left by an earlier configuration expires on
     * its TTL, and a reconciler turned on again drops it when it finds the invoice settled.
     */
    private readonly watching = true,
  ) {
    this.writeOptions = { ttlMs };
  }

  async get(clientReference: string): Promise<CheckoutInvoice | undefined> {
    return (await this.store.get<CheckoutInvoice>(invoiceKey(clientReference)))?.value;
  }

  /** The invoice with its store version, to hand to `update` (which then need not read it again). */
  getEntry(clientReference: string): Promise<StoreEntry<CheckoutInvoice> | undefined> {
    return this.store.get<CheckoutInvoice>(invoiceKey(clientReference));
  }

  /** Records a new invoice; false when the reference is taken. */
  async create(invoice: CheckoutInvoice): Promise<boolean> {
    return this.store.setIfAbsent(invoiceKey(invoice.clientReference), invoice, this.writeOptions);
  }

  /**
   * Applies `change` atomically: reads, computes, compare-and-sets, and re-reads on conflict.
   * `change` returns the new invoice, or undefined to leave it as it is; it is given the ISO time
   * to stamp as `updatedAt` (a returned invoice with another `updatedAt` is stamped with a copy).
   * `known`: the entry the caller just read, tried first instead of reading it again (a stale one
   * only costs a failed compare-and-set and a re-read). `at`: the time to stamp (default now).
   * Resolves to the invoice as stored after the call and whether this call changed it; undefined
   * when there is no invoice.
   */
  async update(
    clientReference: string,
    change: (invoice: CheckoutInvoice, updatedAt: string) => CheckoutInvoice | undefined,
    known?: StoreEntry<CheckoutInvoice>,
    at?: string,
  ): Promise<{ invoice: CheckoutInvoice; changed: boolean } | undefined> {
    const key = invoiceKey(clientReference);
    const updatedAt = at ?? new Date(this.now()).toISOString();
    for (let tries = 0; tries < MAX_CAS_TRIES; tries++) {
      const entry = tries === 0 && known ? known : await this.store.get<CheckoutInvoice>(key);
      if (!entry) return undefined;
      const next = change(entry.value, updatedAt);
      if (next === undefined) return { invoice: entry.value, changed: false };
      const stamped = next.updatedAt === updatedAt ? next : changeInvoice(next, { updatedAt });
      const written = await this.store.compareAndSet(key, entry.version, stamped, this.writeOptions);
      if (written) return { invoice: written.value, changed: true };
    }
    throw new HubtelError(
      'HUBTEL_STORE_CONFLICT',
      `Invoice ${clientReference} kept changing under concurrent writers; gave up after ${MAX_CAS_TRIES} tries`,
    );
  }

  async delete(clientReference: string): Promise<void> {
    await this.store.delete(invoiceKey(clientReference));
    await this.store.delete(watchKey(clientReference));
  }

  /** Puts an invoice on the reconciler's watch list (first check at `firstCheckAt`). */
  async watch(clientReference: string, createdAt: number, firstCheckAt: number): Promise<void> {
    const entry: CheckoutWatchEntry = { clientReference, createdAt, nextCheckAt: firstCheckAt, checks: 0 };
    await this.store.set(watchKey(clientReference), entry, { ttlMs: this.watchTtlMs });
  }

  async unwatch(clientReference: string): Promise<void> {
    if (!this.watching) return;
    await this.store.delete(watchKey(clientReference));
  }

  /** Every invoice still watched, with its store version (for `claim`). */
  watched(): AsyncIterable<[string, StoreEntry<CheckoutWatchEntry>]> {
    return this.store.scan<CheckoutWatchEntry>(CHECKOUT_WATCH_PREFIX);
  }

  /**
   * Takes the next check of an invoice for this process by moving its schedule forward
   * (compare-and-set): two reconcilers (two instances) never check the same invoice at once.
   */
  async claim(entry: StoreEntry<CheckoutWatchEntry>, next: CheckoutWatchEntry): Promise<boolean> {
    const written = await this.store.compareAndSet(
      watchKey(entry.value.clientReference),
      entry.version,
      next,
      { ttlMs: this.watchTtlMs },
    );
    return written !== undefined;
  }
}

/** The account of an invoice (records written before accounts existed are the default's). */
export function invoiceAccount(invoice: Pick<CheckoutInvoice, 'account'>): string {
  return invoice.account ?? CHECKOUT_DEFAULT_ACCOUNT;
}

export function invoiceKey(clientReference: string): string {
  return `${CHECKOUT_INVOICE_PREFIX}${clientReference}`;
}

export function watchKey(clientReference: string): string {
  return `${CHECKOUT_WATCH_PREFIX}${clientReference}`;
}
