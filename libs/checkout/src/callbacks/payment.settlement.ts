import type { EventEmitter2 } from '@nestjs/event-emitter';
import {
  HubtelError,
  HubtelLogger,
  maskPhoneNumbers,
  type HubtelTelemetry,
  type StoreEntry,
} from 'nestjs-hubtel';
import { dropUndefined, isLogLevelEnabled, type InboundPipeline } from '#internal';
import { CHECKOUT_DEFAULT_ACCOUNT } from '../checkout.constants.js';
import {
  CheckoutAttentionEvent,
  CheckoutEvents,
  CheckoutExpiredEvent,
  CheckoutFailedEvent,
  CheckoutPaidEvent,
  CheckoutRejectedEvent,
  type CheckoutAttention,
} from '../checkout.events.js';
import {
  changeInvoice,
  invoiceAccount,
  type CheckoutInvoice,
  type CheckoutInvoiceStore,
} from '../invoices/invoice.store.js';
import {
  paymentFromStatus,
  type AttentionEvidence,
  type FailedEvidence,
  type PaidEvidence,
  type RejectedClaim,
  type SettleResult,
} from './payment.evidence.js';

/**
 * Turns verified outcomes into recorded events, exactly once per invoice, whichever path (web
 * callback, status-check confirmation, reconciler, another instance) gets there first.
 *
 * Paid — the gate is the pipeline record `hubtel:checkout:job:hubtel.checkout.paid:<clientReference>`,
 * written with set-if-absent: of any number of concurrent callers exactly one creates it, and only
 * that record's handlers run. The invoice's compare-and-set `pending|failed|expired → paid` follows.
 * In that order a crash between the two steps loses nothing: the event is already recorded (and
 * re-run at bootstrap with a persistent store), and the next caller (the reconciler) finds the
 * record taken and just completes the invoice's transition.
 *
 * Failed and expired — the gate is the invoice's compare-and-set (`pending → failed`,
 * `pending|failed → expired`): a failure must never be recorded after the payment, so it is
 * refused once the invoice is paid, or once a paid record exists while the invoice is catching up.
 * A failed claim for a failed invoice submits its event again (its record keeps it to one run): the
 * try that failed the invoice may have stopped before its event's record or run was written.
 *
 * A confirmed paid callback is two jobs (the road: docs/architecture.md): `hubtel.checkout.confirm`
 * keyed `<ref>:paid:<round>`, then `hubtel.checkout.paid` keyed `<ref>`. They answer different
 * questions and are keyed differently.
 * - The confirmation is a claim not yet believed, one per callback round: it may wait (deferred
 *   status checks), be woken by a duplicate, end rejected, or give up on a status API outage —
 *   none of which may reach the merchant's handlers or count against their retries.
 * - The paid job is the exactly-once gate of the payment itself, keyed by the invoice alone: it is
 *   reached by the confirmation, but also by the reconciler, a direct callback and other instances
 *   (and after a failed → paid). Folding it into the confirmation would need a second gate anyway,
 *   and a handler retry would re-run the status check.
 * The cost is one more record per paid invoice (compacted once done).
 */
export class CheckoutSettlement {
  private readonly logger = new HubtelLogger('HubtelCheckout');
  private readonly emitting = new Set<Promise<unknown>>();

  constructor(
    private readonly invoices: CheckoutInvoiceStore,
    private readonly pipeline: InboundPipeline,
    private readonly emitter: EventEmitter2,
    private readonly now: () => number = Date.now,
    private readonly telemetry?: HubtelTelemetry,
  ) {}

  /**
   * `known`: the invoice entry the caller just read (the callback path verified against it), so it
   * is not read again; its version is tried first by the compare-and-set, and a stale one costs
   * only a re-read. The exactly-once gate is the pipeline record either way.
   */
  async paid(evidence: PaidEvidence, known?: StoreEntry<CheckoutInvoice>): Promise<SettleResult> {
    const ref = evidence.clientReference;
    const entry = known ?? (await this.invoices.getEntry(ref));
    if (!entry) return 'unknown';
    const invoice = entry.value;
    if (invoice.status === 'paid') return 'duplicate';
    // Given back by the merchant: final, whatever is verified later.
    if (invoice.status === 'refunded') return 'superseded';
    // One time for the event and the invoice (its paidAt and updatedAt).
    const paidAt = new Date(this.now()).toISOString();
    const event = new CheckoutPaidEvent({
      clientReference: ref,
      account: invoiceAccount(invoice),
      checkoutId: invoice.checkoutId ?? evidence.checkoutId,
      amount: invoice.amount,
      amountPaid: evidence.amountPaid,
      description: invoice.description,
      source: evidence.source,
      confirmedByStatusCheck: evidence.confirmedByStatusCheck,
      payment: evidence.payment,
      payee: invoice.payee,
      metadata: invoice.metadata,
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
    if (!duplicate && isLogLevelEnabled('log', this.logger)) {
      this.logger.log(
        `Invoice ${ref} paid (${evidence.amountPaid.toFixed(2)}, via ${evidence.source}${evidence.confirmedByStatusCheck ? ', confirmed by status check' : ''})`,
      );
    }
    return duplicate ? 'duplicate' : 'settled';
  }

  /**
   * The status check verified a payment that matches the invoice on neither count: the invoice is
   * kept `attention` (never lost, never delivered by itself, no longer reconciled) and its
   * `attention` event recorded, exactly once whichever replica or path finds it first; the
   * `rejected` alert is emitted as for every answer that fails verification.
   */
  async attention(invoice: CheckoutInvoice, evidence: AttentionEvidence): Promise<SettleResult> {
    const ref = invoice.clientReference;
    const at = new Date(this.now()).toISOString();
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
    // The alert every answer that fails verification raises, once the invoice shows why.
    this.reject({ ...evidence, clientReference: ref, invoice });
    if (!result) return 'unknown';
    if (!result.changed) return result.invoice.status === 'paid' ? 'superseded' : 'duplicate';
    const stored = result.invoice;
    const event = new CheckoutAttentionEvent({
      clientReference: ref,
      account: invoiceAccount(stored),
      checkoutId: stored.checkoutId,
      amount: stored.amount,
      description: stored.description,
      reason: attention.reason,
      message: attention.message,
      amounts: attention.amounts,
      payment: attention.payment ?? {},
      payee: stored.payee,
      metadata: stored.metadata,
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
    const at = new Date(this.now()).toISOString();
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
    const at = new Date(this.now()).toISOString();
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
    // Failed before: its event is submitted again all the same (a duplicate of a job that ran is
    // nothing; one whose record or run the earlier try could not write, after the invoice, is
    // written or asked for now), with the failure the invoice keeps.
    if (!result.changed && result.invoice.status !== 'failed')
      return result.invoice.status === 'paid' ? 'superseded' : 'duplicate';
    const failure = result.invoice.failure ?? { ...evidence, at };
    const event = new CheckoutFailedEvent({
      clientReference: ref,
      account: invoiceAccount(result.invoice),
      checkoutId: result.invoice.checkoutId,
      amount: invoice.amount,
      description: invoice.description,
      source: evidence.source,
      responseCode: failure.responseCode,
      status: failure.status,
      reason: failure.reason,
      payment: evidence.payment,
      metadata: invoice.metadata,
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
   * The reconciler gives up on an invoice that was never paid. An invoice expired before has its
   * event submitted again (its record keeps it to one run): the try that expired it may have
   * stopped before the event was recorded. The invoice is unwatched only once the event is, so a
   * failure leaves it to the reconciler's next pass.
   */
  async expired(clientReference: string): Promise<SettleResult> {
    const at = new Date(this.now()).toISOString();
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
    const event = new CheckoutExpiredEvent({
      clientReference,
      account: invoiceAccount(invoice),
      checkoutId: invoice.checkoutId,
      amount: invoice.amount,
      description: invoice.description,
      lastStatus: lastFailed ? 'failed' : 'pending',
      createdAt: invoice.createdAt,
      metadata: invoice.metadata,
      expiredAt: at,
    });
    const { duplicate } = await this.pipeline.submit(CheckoutEvents.Expired, clientReference, event);
    await this.invoices.unwatch(clientReference);
    if (duplicate) return 'duplicate';
    this.logger.log(`Invoice ${clientReference} expired unpaid; the reconciler stopped checking it`);
    return 'settled';
  }

  /**
   * Emits a rejection. Rejections are alerts, not recorded jobs (recording every forged callback
   * would let anyone fill the store): the event is emitted once, a throwing handler is logged.
   */
  reject(claim: RejectedClaim): void {
    const { callback, status, invoice } = claim;
    const event = new CheckoutRejectedEvent({
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
      // The validated callback is already a fresh plain object (the compiled validator builds one).
      callback: callback as unknown as Record<string, unknown> | undefined,
      rejectedAt: new Date(this.now()).toISOString(),
    });
    const from = event.sourceAddress ? ` (from ${event.sourceAddress})` : '';
    if (event.reason === 'FORGOTTEN_REFERENCE') {
      // Not the forgery line: the store lost the invoice, and the money may well be real.
      this.logger.error(
        `The store forgot this order: a checkout callback for "${event.clientReference}" (${event.status ?? 'no status'}) names an invoice lost with the store's data (${event.reason}) — ${maskPhoneNumbers(event.message)}${from}`,
      );
    } else {
      this.logger.warn(
        `Rejected a ${event.source === 'callback' ? 'checkout callback' : 'status-check answer'} for "${event.clientReference}": ${event.reason} — ${maskPhoneNumbers(event.message)}${from}`,
      );
    }
    const emitting = this.emitter
      .emitAsync(CheckoutEvents.Rejected, event)
      .catch((error: unknown) =>
        this.logger.error(
          `A ${CheckoutEvents.Rejected} handler failed: ${maskPhoneNumbers(error instanceof Error ? error.message : String(error))}`,
        ),
      );
    this.emitting.add(emitting);
    void emitting.finally(() => this.emitting.delete(emitting));
  }

  private attentionSignal(
    outcome: 'opened' | 'delivered' | 'refunded',
    reason: string,
    invoice: CheckoutInvoice,
  ): void {
    const account = invoiceAccount(invoice);
    this.telemetry?.record({ kind: 'payment-attention', source: 'checkout', outcome, reason, account });
  }

  /** Resolves when the rejections emitted so far have been handled. */
  async drain(): Promise<void> {
    while (this.emitting.size > 0) await Promise.allSettled([...this.emitting]);
  }
}
