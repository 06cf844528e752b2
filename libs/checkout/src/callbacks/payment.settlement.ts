import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  HUBTEL_TELEMETRY,
  HubtelError,
  HubtelLogger,
  maskPhoneNumbers,
  type HubtelTelemetry,
  type StoreEntry,
} from 'nestjs-hubtel';
import { dropUndefined, type InboundPipeline } from '#internal';
import { CHECKOUT_DEFAULT_ACCOUNT, CHECKOUT_PIPELINE } from '../checkout.constants.js';
import {
  CheckoutEvents,
  type CheckoutAttention,
  type CheckoutAttentionEvent,
  type CheckoutExpiredEvent,
  type CheckoutFailedEvent,
  type CheckoutInvoiceEvent,
  type CheckoutPaidEvent,
  type CheckoutRejectedEvent,
} from '../checkout.events.js';
import {
  changeInvoice,
  invoiceAccount,
  type CheckoutInvoice,
  CheckoutInvoiceStore,
} from '../invoices/invoice.store.js';
import {
  paymentFromStatus,
  type AttentionEvidence,
  type FailedEvidence,
  type PaidEvidence,
  type RejectedClaim,
  type SettleResult,
} from './payment.evidence.js';
import type { CheckoutVerifier } from './callback.verifier.js';
import type { CheckoutTransactionStatus } from '../invoices/invoice.dto.js';

/**
 * Verified outcomes become recorded events, exactly once per invoice, whichever path comes first.
 * Paid: the pipeline record (set-if-absent) then the invoice's compare-and-set, so a crash between
 * them loses nothing. Failed and expired: the invoice's compare-and-set, refused once paid; a repeat
 * submits the event again. A confirmed callback's two jobs: docs/architecture.md.
 */
@Injectable()
export class CheckoutSettlement {
  private readonly logger = new HubtelLogger('HubtelCheckout');

  constructor(
    @Inject(CheckoutInvoiceStore) private readonly invoices: CheckoutInvoiceStore,
    @Inject(CHECKOUT_PIPELINE) private readonly pipeline: InboundPipeline,
    @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
  ) {}

  /** `known`: the invoice entry the caller just read, tried first (the gate is the pipeline record). */
  async paid(evidence: PaidEvidence, known?: StoreEntry<CheckoutInvoice>): Promise<SettleResult> {
    const ref = evidence.clientReference;
    const entry = known ?? (await this.invoices.getEntry(ref));
    if (!entry) return 'unknown';
    const invoice = entry.value;
    if (invoice.status === 'paid') return 'duplicate';
    // Given back by the merchant: final, whatever is verified later.
    if (invoice.status === 'refunded') return 'superseded';
    const paidAt = new Date().toISOString();
    const event = invoiceEvent<CheckoutPaidEvent>(invoice, {
      checkoutId: invoice.checkoutId ?? evidence.checkoutId,
      amountPaid: evidence.amountPaid,
      source: evidence.source,
      confirmedByStatusCheck: evidence.confirmedByStatusCheck,
      payment: evidence.payment,
      payee: invoice.payee,
      paidAt,
      amounts: evidence.amounts,
      attention: evidence.attention,
    });
    const { duplicate } = await this.pipeline.submit(CheckoutEvents.Paid, ref, event);
    await this.invoices.update(
      ref,
      (current, updatedAt) =>
        current.status === 'paid' || current.status === 'refunded'
          ? undefined
          : changeInvoice(current, {
              status: 'paid',
              paidAt,
              amountPaid: evidence.amountPaid,
              paidVia: evidence.source,
              checkoutId: current.checkoutId ?? evidence.checkoutId,
              updatedAt,
              ...(evidence.amounts ? { amounts: evidence.amounts } : {}),
              ...(evidence.attention ? { attention: evidence.attention } : {}),
            }),
      entry,
      paidAt,
    );
    await this.invoices.unwatch(ref);
    // The line is only built when it would be printed (one per payment, on the hot path).
    if (!duplicate && this.logger.isLevelEnabled('log'))
      this.logger.log(
        `Invoice ${ref} paid (${evidence.amountPaid.toFixed(2)}, via ${evidence.source}${evidence.confirmedByStatusCheck ? ', confirmed by status check' : ''})`,
      );
    return duplicate ? 'duplicate' : 'settled';
  }

  /**
   * A Paid status answer verified, then settled with its details only (a callback's are claims);
   * another reference's answer is an alert only; one matching on neither count is kept `attention`.
   */
  async paidByStatus(
    invoice: CheckoutInvoice,
    status: CheckoutTransactionStatus,
    verifier: CheckoutVerifier,
    evidence: Omit<PaidEvidence, 'amountPaid' | 'payment'>,
    sourceAddress?: string,
  ): Promise<SettleResult | 'not-confirmed' | 'attention'> {
    const verdict = verifier.verifyPaidStatus(status, invoice);
    if (verdict.ok) {
      const payment = paymentFromStatus(status);
      return this.paid({ ...evidence, amountPaid: status.amount!, payment, amounts: verdict.amounts });
    }
    if (verdict.reason !== 'NOT_CONFIRMED') {
      await this.attention(invoice, { ...verdict, status, sourceAddress });
      return 'attention';
    }
    this.reject({ ...verdict, clientReference: invoice.clientReference, invoice, status, sourceAddress });
    return 'not-confirmed';
  }

  /**
   * A verified payment that fits on neither count: the invoice is kept `attention` (never lost, never
   * delivered by itself) and its event recorded exactly once; the `rejected` alert goes out too.
   */
  async attention(invoice: CheckoutInvoice, evidence: AttentionEvidence): Promise<SettleResult> {
    const ref = invoice.clientReference;
    const at = new Date().toISOString();
    const attention: CheckoutAttention = {
      reason: evidence.reason,
      message: evidence.message,
      at,
      payment: paymentFromStatus(evidence.status),
    };
    if (evidence.amounts) attention.amounts = evidence.amounts;
    const result = await this.invoices.update(ref, (current, updatedAt) =>
      current.status === 'paid' || current.status === 'attention' || current.status === 'refunded'
        ? undefined
        : changeInvoice(current, { status: 'attention', attention, updatedAt }),
    );
    await this.invoices.unwatch(ref);
    this.reject({ ...evidence, clientReference: ref, invoice });
    if (!result) return 'unknown';
    if (!result.changed) return result.invoice.status === 'paid' ? 'superseded' : 'duplicate';
    const stored = result.invoice;
    const event = invoiceEvent<CheckoutAttentionEvent>(stored, {
      reason: attention.reason,
      message: attention.message,
      amounts: attention.amounts,
      payment: attention.payment ?? {},
      payee: stored.payee,
      at,
    });
    const { duplicate } = await this.pipeline.submit(CheckoutEvents.Attention, ref, event);
    if (!duplicate) {
      this.attentionSignal('opened', attention.reason, stored);
      this.logger.error(
        `Invoice ${ref} was paid but needs attention (${attention.reason}): ${maskPhoneNumbers(attention.message)}. Resolve it with resolveAttention(): deliver anyway, or record the refund`,
      );
    }
    return duplicate ? 'duplicate' : 'settled';
  }

  /** `CheckoutService.resolveAttention`: `deliver` settles it paid (once), `refund` records `refunded`. */
  async resolve(
    ref: string,
    action: 'deliver' | 'refund',
    note: string | undefined,
  ): Promise<CheckoutInvoice> {
    const invoice = await this.invoices.get(ref);
    if (!invoice) throw new HubtelError('HUBTEL_NOT_FOUND', `No invoice with clientReference "${ref}"`);
    const resolution = { action: action === 'deliver' ? ('delivered' as const) : ('refunded' as const) };
    const already = invoice.attention?.resolution;
    if (already) {
      if (already.action === resolution.action) return invoice;
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `Invoice ${ref} was already resolved as ${already.action}; it cannot be ${resolution.action} too`,
      );
    }
    if (invoice.status !== 'attention' || !invoice.attention)
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `Invoice ${ref} is ${invoice.status}: only an invoice that needs attention can be resolved`,
      );
    const at = new Date().toISOString();
    const attention: CheckoutAttention = {
      ...invoice.attention,
      resolution: { ...resolution, at, ...(note === undefined ? {} : { note }) },
    };
    if (action === 'deliver') {
      await this.paid({
        clientReference: ref,
        checkoutId: invoice.checkoutId,
        amountPaid: attention.amounts?.gross ?? invoice.amount,
        source: 'status-check',
        confirmedByStatusCheck: true,
        payment: attention.payment ?? {},
        ...(attention.amounts ? { amounts: attention.amounts } : {}),
        attention,
      });
    } else {
      await this.invoices.update(ref, (current, updatedAt) =>
        current.status === 'attention'
          ? changeInvoice(current, { status: 'refunded', attention, updatedAt })
          : undefined,
      );
    }
    const after = (await this.invoices.get(ref))!;
    if (after.attention?.resolution?.action !== resolution.action)
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `Invoice ${ref} changed while it was resolved (now ${after.status}); look at it again`,
      );
    this.attentionSignal(resolution.action, attention.reason, after);
    this.logger.log(`Invoice ${ref} that needed attention was resolved: ${resolution.action}`);
    return after;
  }

  /** `known`: as for `paid`. */
  async failed(evidence: FailedEvidence, known?: StoreEntry<CheckoutInvoice>): Promise<SettleResult> {
    const ref = evidence.clientReference;
    const entry = known ?? (await this.invoices.getEntry(ref));
    if (!entry) return 'unknown';
    const invoice = entry.value;
    if (invoice.status === 'paid' || (await this.pipeline.get(CheckoutEvents.Paid, ref))) return 'superseded';
    const at = new Date().toISOString();
    const result = await this.invoices.update(
      ref,
      (current, updatedAt) =>
        current.status === 'pending'
          ? changeInvoice(current, {
              status: 'failed',
              checkoutId: current.checkoutId ?? evidence.checkoutId,
              failure: {
                status: evidence.status,
                at,
                ...dropUndefined({ responseCode: evidence.responseCode, reason: evidence.reason }),
              },
              updatedAt,
            })
          : undefined,
      entry,
      at,
    );
    if (!result) return 'unknown';
    // Failed before: submitted again (the earlier try may have stopped before recording it).
    if (!result.changed && result.invoice.status !== 'failed')
      return result.invoice.status === 'paid' ? 'superseded' : 'duplicate';
    const failure = result.invoice.failure ?? { ...evidence, at };
    const event = invoiceEvent<CheckoutFailedEvent>(result.invoice, {
      source: evidence.source,
      responseCode: failure.responseCode,
      status: failure.status,
      reason: failure.reason,
      payment: evidence.payment,
      failedAt: failure.at,
    });
    const { duplicate } = await this.pipeline.submit(CheckoutEvents.Failed, ref, event);
    if (!duplicate)
      this.logger.log(
        `Invoice ${ref}: payment attempt failed (${failure.responseCode ?? '-'} ${maskPhoneNumbers(failure.status)}, via ${evidence.source})`,
      );
    return duplicate ? 'duplicate' : 'settled';
  }

  /**
   * The reconciler gives up on an unpaid invoice. Expired before: submitted again, as for `failed`.
   * Unwatched only once the event is recorded, so a failure leaves it to the next pass.
   */
  async expired(clientReference: string): Promise<SettleResult> {
    const at = new Date().toISOString();
    let before: CheckoutInvoice | undefined;
    const result = await this.invoices.update(clientReference, (current) => {
      before = current;
      return current.status === 'pending' || current.status === 'failed'
        ? changeInvoice(current, { status: 'expired' })
        : undefined;
    });
    if (!result || !before || result.invoice.status !== 'expired') {
      await this.invoices.unwatch(clientReference);
      if (!result || !before) return 'unknown';
      return result.invoice.status === 'paid' ? 'superseded' : 'duplicate';
    }
    const invoice = result.invoice;
    // A failed invoice keeps its failure when it expires.
    const lastFailed = result.changed ? before.status === 'failed' : invoice.failure !== undefined;
    const event = invoiceEvent<CheckoutExpiredEvent>(invoice, {
      lastStatus: lastFailed ? 'failed' : 'pending',
      createdAt: invoice.createdAt,
      expiredAt: at,
    });
    const { duplicate } = await this.pipeline.submit(CheckoutEvents.Expired, clientReference, event);
    await this.invoices.unwatch(clientReference);
    if (duplicate) return 'duplicate';
    this.logger.log(`Invoice ${clientReference} expired unpaid; the reconciler stopped checking it`);
    return 'settled';
  }

  /** Emits a rejection: an alert, not a recorded job (forged callbacks must not fill the store). */
  reject(claim: RejectedClaim): void {
    const { callback, status, invoice } = claim;
    const event = dropUndefined<CheckoutRejectedEvent>({
      reason: claim.reason,
      message: claim.message,
      source: callback ? 'callback' : 'status-check',
      clientReference: claim.clientReference,
      account: invoice ? invoiceAccount(invoice) : (claim.account ?? CHECKOUT_DEFAULT_ACCOUNT),
      checkoutId: callback?.Data.CheckoutId ?? invoice?.checkoutId,
      amountClaimed: callback ? (callback.Data.Amount ?? undefined) : status?.amount,
      amountExpected: invoice?.amount,
      status: callback?.Data.Status ?? status?.status,
      sourceAddress: claim.sourceAddress,
      callback: callback as unknown as Record<string, unknown> | undefined,
      rejectedAt: new Date().toISOString(),
    });
    const from = event.sourceAddress ? ` (from ${event.sourceAddress})` : '';
    // A forgotten reference is not the forgery line: the store lost the invoice; the money may be real.
    if (event.reason === 'FORGOTTEN_REFERENCE')
      this.logger.error(
        `The store forgot this order: a checkout callback for "${event.clientReference}" (${event.status ?? 'no status'}) names an invoice lost with the store's data (${event.reason}) — ${maskPhoneNumbers(event.message)}${from}`,
      );
    else
      this.logger.warn(
        `Rejected a ${event.source === 'callback' ? 'checkout callback' : 'status-check answer'} for "${event.clientReference}": ${event.reason} — ${maskPhoneNumbers(event.message)}${from}`,
      );
    this.pipeline.alert(CheckoutEvents.Rejected, event);
  }

  private attentionSignal(
    outcome: 'opened' | 'delivered' | 'refunded',
    reason: string,
    invoice: CheckoutInvoice,
  ): void {
    const account = invoiceAccount(invoice);
    this.telemetry?.record({ kind: 'payment-attention', source: 'checkout', outcome, reason, account });
  }
}

/**
 * A recorded event: what every one says of its invoice, then its own `fields` (undefined ones left
 * out). Assigned onto the invoice's fields, not spread: on Node 20, V8 builds an object literal that
 * spreads and then adds keys on a slow path, and this runs for every payment.
 */
function invoiceEvent<T extends CheckoutInvoiceEvent>(
  invoice: CheckoutInvoice,
  fields: Omit<T, keyof CheckoutInvoiceEvent> & Partial<CheckoutInvoiceEvent>,
): T {
  const { clientReference, checkoutId, amount, description, metadata } = invoice;
  const base = {
    clientReference,
    account: invoiceAccount(invoice),
    checkoutId,
    amount,
    description,
    metadata,
  };
  return dropUndefined(Object.assign(base, fields) as T);
}
