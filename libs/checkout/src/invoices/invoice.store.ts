import { Inject, Injectable } from '@nestjs/common';
import { HubtelError, type HubtelStore, type PaymentAmounts, type StoreEntry } from 'nestjs-hubtel';
import {
  CHECKOUT_DEFAULT_ACCOUNT,
  CHECKOUT_INVOICE_PREFIX,
  CHECKOUT_RESOLVED_OPTIONS,
  CHECKOUT_STORE,
  CHECKOUT_WATCH_PREFIX,
} from '../checkout.constants.js';
import type { CheckoutAttention, CheckoutEvidenceSource, CheckoutPayee } from '../checkout.events.js';

/** `paid` and `refunded` are final; a late verified payment still turns `failed` or `expired` `paid`. */
export type CheckoutInvoiceStatus = 'pending' | 'paid' | 'failed' | 'expired' | 'attention' | 'refunded';

/** What the module remembers of an invoice it created. Plain JSON. */
export interface CheckoutInvoice {
  clientReference: string;
  /** The account that created it (absent: `default`): its callbacks come on its path only. */
  account?: string;
  /** The platform's id, once `/items/initiate` answered. */
  checkoutId?: string;
  checkoutUrl?: string;
  checkoutDirectUrl?: string;
  amount: number;
  description: string;
  status: CheckoutInvoiceStatus;
  /** `unknown` when `/items/initiate` gave no answer (the reconciler finds out). */
  creation: 'creating' | 'created' | 'unknown';
  /** ISO times. */
  createdAt: string;
  updatedAt: string;
  paidAt?: string;
  amountPaid?: number;
  paidVia?: CheckoutEvidenceSource;
  /** The verified figures and who bore the charge, when the status check gave them. */
  amounts?: PaymentAmounts;
  /** The last failed attempt. */
  failure?: { responseCode?: string; status: string; reason?: string; at: string };
  /** Why it is (or was) in `attention`, and its `resolution`. */
  attention?: CheckoutAttention;
  metadata?: Record<string, unknown>;
  /** The payee given to `createInvoice` (the number normalised). */
  payee?: CheckoutPayee;
  /** Ended confirmation rounds: the next callback is confirmed afresh, not taken for a duplicate. */
  confirmRound?: number;
  /** Epoch ms of the last ended round's last check: the next round's first is spaced from it. */
  confirmCheckedAt?: number;
}

/** The optional fields of an invoice after `account`, in the one order `changeInvoice` writes them. */
const OPTIONAL_FIELDS = [
  'metadata',
  'checkoutId',
  'checkoutUrl',
  'checkoutDirectUrl',
  'paidAt',
  'amountPaid',
  'paidVia',
  'amounts',
  'failure',
  'attention',
  'confirmRound',
  'payee',
  'confirmCheckedAt',
] as const satisfies readonly (keyof CheckoutInvoice)[];

/**
 * A copy of `current` with `changes` applied (none removes a field), field by field in one order: a
 * spread copy gains properties through V8's slow path. Add new fields here too (the spec checks).
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
  for (const key of OPTIONAL_FIELDS) {
    const value = changes[key] ?? current[key];
    if (value !== undefined) (next as unknown as Record<string, unknown>)[key] = value;
  }
  return next;
}

/** The reconciler's schedule for one invoice it still watches. */
export interface CheckoutWatchEntry {
  clientReference: string;
  /** Epoch ms. */
  createdAt: number;
  nextCheckAt: number;
  checks: number;
}

const MAX_CAS_TRIES = 20;

type CheckoutInvoiceStoreOptions = { invoiceTtlMs: number; reconciliation: { enabled: boolean } };

/** Invoices and the watch list; every change a compare-and-set, so no writer overwrites another's. */
@Injectable()
export class CheckoutInvoiceStore {
  private readonly writeOptions: { ttlMs: number };
  /** False when reconciliation is off: `unwatch` skips a delete (an old entry expires on its TTL). */
  private readonly watching: boolean;

  constructor(
    @Inject(CHECKOUT_STORE) private readonly store: HubtelStore,
    @Inject(CHECKOUT_RESOLVED_OPTIONS) options: CheckoutInvoiceStoreOptions,
  ) {
    this.writeOptions = { ttlMs: options.invoiceTtlMs };
    this.watching = options.reconciliation.enabled;
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
   * Applies `change` by compare-and-set, re-reading on conflict (undefined from `change`: no change).
   * `known`: an entry just read, tried first. Resolves to the stored invoice (undefined: none).
   */
  async update(
    clientReference: string,
    change: (invoice: CheckoutInvoice, updatedAt: string) => CheckoutInvoice | undefined,
    known?: StoreEntry<CheckoutInvoice>,
    at?: string,
  ): Promise<{ invoice: CheckoutInvoice; changed: boolean } | undefined> {
    const key = invoiceKey(clientReference);
    const updatedAt = at ?? new Date().toISOString();
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

  /**
   * Puts an invoice on the reconciler's watch list, first check at `firstCheckAt`; kept as long as the
   * invoice, so a reconciler down past `giveUpAfterMs` still finds a payment nobody called back for.
   */
  async watch(clientReference: string, createdAt: number, firstCheckAt: number): Promise<void> {
    const entry: CheckoutWatchEntry = { clientReference, createdAt, nextCheckAt: firstCheckAt, checks: 0 };
    await this.store.set(watchKey(clientReference), entry, this.writeOptions);
  }

  async unwatch(clientReference: string): Promise<void> {
    if (this.watching) await this.store.delete(watchKey(clientReference));
  }

  /** Every invoice still watched, with its store version (for `claim`). */
  watched(): AsyncIterable<[string, StoreEntry<CheckoutWatchEntry>]> {
    return this.store.scan<CheckoutWatchEntry>(CHECKOUT_WATCH_PREFIX);
  }

  /** Takes an invoice's next check by moving its schedule (CAS): two instances never both check it. */
  async claim(entry: StoreEntry<CheckoutWatchEntry>, next: CheckoutWatchEntry): Promise<boolean> {
    const key = watchKey(entry.value.clientReference);
    return (await this.store.compareAndSet(key, entry.version, next, this.writeOptions)) !== undefined;
  }
}

/** The account of an invoice (records written before accounts existed are the default's). */
export function invoiceAccount(invoice: Pick<CheckoutInvoice, 'account'>): string {
  return invoice.account ?? CHECKOUT_DEFAULT_ACCOUNT;
}

function invoiceKey(clientReference: string): string {
  return `${CHECKOUT_INVOICE_PREFIX}${clientReference}`;
}

function watchKey(clientReference: string): string {
  return `${CHECKOUT_WATCH_PREFIX}${clientReference}`;
}
