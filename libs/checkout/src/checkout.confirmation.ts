/**
 * The confirmation of a verified callback through the transaction status check, when
 * `verification.confirmWithStatusCheck` is on: the callback is recorded as a pipeline job (one
 * per claim and round), and that job settles it (`paid` / `failed`, through CheckoutSettlement) or
 * rejects it. The whole road of a confirmed payment, callback → job → settlement, reads here;
 * CheckoutService only submits to it.
 */
import { HubtelLogger } from 'nestjs-hubtel';
import { type InboundPipeline, type JobDeferral, type JobRunContext } from '#internal';
import type { CheckoutApiClient } from './checkout-api.client.js';
import { changeInvoice, type CheckoutInvoice, type CheckoutInvoiceStore } from './checkout-invoice.store.js';
import { paymentFromStatus, type CheckoutSettlement } from './checkout-settlement.js';
import type { CallbackClaim, CheckoutVerifier } from './checkout-verifier.js';
import { failedFromCallback, paidFromCallback, paymentFromCallback } from './checkout.callback-evidence.js';
import { CHECKOUT_CONFIRM_JOB } from './checkout.constants.js';
import { recheckDelays, type ResolvedCheckoutOptions } from './checkout.options.js';
import type { CheckoutCallbackDto } from './dto/checkout-callback.dto.js';
import type { CheckoutTransactionStatus } from './dto/transaction-status.dto.js';

/** A callback recorded for confirmation through the status check. */
interface ConfirmJob {
  claim: Exclude<CallbackClaim, 'pending'>;
  callback: CheckoutCallbackDto;
  sourceAddress?: string;
  /** The invoice's confirmation round it belongs to (absent: 0). */
  round?: number;
}

/**
 * Where a paid claim's confirmation is in its schedule of status checks (the job's state, kept
 * between its deferred runs): when its first check was, and how many scheduled checks were made.
 */
interface RecheckState {
  start: number;
  checks: number;
  /**
   * The job's deferral count its scheduled run carries: that run is the scheduled check even when
   * it comes a little early by this clock (a delayed job of another instance's clock, a timer); a
   * wake carries a higher count. Absent in records written before it: the due time decides.
   */
  deferral?: number;
}

/** When the scheduled check after the first `checks` is due: the first, plus the delays so far. */
function dueAt(state: RecheckState, delays: readonly number[]): number {
  return state.start + delays.slice(0, state.checks).reduce((sum, ms) => sum + ms, 0);
}

/**
 * The confirmation job's key. A paid claim's key names the invoice's round: a round that ended
 * unconfirmed moves the invoice to the next one, so it never makes a later callback a duplicate.
 * Round 0 keeps the key `<ref>:paid` (records written before rounds existed stay recognised).
 */
function confirmKey(ref: string, claim: ConfirmJob['claim'], round: number): string {
  return claim === 'paid' && round > 0 ? `${ref}:paid:${round}` : `${ref}:${claim}`;
}

export class CheckoutConfirmation {
  private readonly logger = new HubtelLogger('HubtelCheckout');

  constructor(
    private readonly options: ResolvedCheckoutOptions,
    private readonly pipeline: InboundPipeline,
    private readonly invoices: CheckoutInvoiceStore,
    private readonly api: CheckoutApiClient,
    private readonly settlement: CheckoutSettlement,
    private readonly verifier: CheckoutVerifier,
  ) {
    pipeline.define<ConfirmJob>(CHECKOUT_CONFIRM_JOB, {
      run: (job, context) => this.confirm(job, context),
      // Another callback of the round (the genuine one after a forged one, say) while the
      // confirmation waits for its next status check: checked now, on whichever instance, and its
      // details are the ones reported (see confirm).
      wakeOnDuplicate: true,
      // Once confirmed, the record only needs to recognise a re-sent callback: the body goes.
      compactWhenDone: () => undefined,
      onSettled: async (record, outcome) => {
        // Gave up (the status check kept failing): its round must not hold back the next callback.
        if (outcome === 'dead' && record.payload.claim === 'paid') await this.endRound(record.payload);
      },
    });
  }

  /**
   * Records a verified callback for confirmation: `accepted` when it was recorded now,
   * `duplicate` when its claim (of this round) was already recorded (a waiting paid confirmation
   * is then woken for one more check).
   */
  async submit(
    claim: ConfirmJob['claim'],
    callback: CheckoutCallbackDto,
    invoice: CheckoutInvoice,
    sourceAddress: string | undefined,
  ): Promise<'accepted' | 'duplicate'> {
    const ref = callback.Data.ClientReference;
    // The validated callback is already a fresh plain object (the compiled validator builds one): recorded as is.
    const job: ConfirmJob = { claim, callback };
    if (sourceAddress !== undefined) job.sourceAddress = sourceAddress;
    const round = claim === 'paid' ? (invoice.confirmRound ?? 0) : 0;
    if (round > 0) job.round = round;
    const key = confirmKey(ref, claim, round);
    const submitted = await this.pipeline.submit(CHECKOUT_CONFIRM_JOB, key, job);
    if (!submitted.duplicate) return 'accepted';
    // A woken confirmation says so when it makes its check (confirm): many copies share one
    // check, so a line here per copy would announce checks that are never made.
    if (!submitted.woken)
      this.logger.debug?.(
        `Duplicate ${claim} callback for ${ref} ignored: its confirmation is already ${submitted.record.status}`,
      );
    return 'duplicate';
  }

  /**
   * Confirms a recorded callback through the status check (a pipeline job: throwing retries it).
   * A paid claim the status check does not show yet is checked again on a schedule fixed from its
   * first check (the platform's check can lag behind its callback): each time the job defers
   * itself, durably, until the next check is due (a delayed job of the runner, not a wait in this
   * process). Another callback of the round wakes it for one check now, without moving the
   * schedule (so copies of a callback cannot end the round early and start new rounds one after
   * another). After the last check it is rejected (`NOT_CONFIRMED`) and left to the reconciler,
   * and its round ends so that it holds nothing a later callback needs.
   */
  private async confirm(job: ConfirmJob, context: JobRunContext<ConfirmJob>): Promise<void | JobDeferral> {
    const ref = job.callback.Data.ClientReference;
    const invoice = await this.invoices.get(ref);
    if (!invoice || invoice.status === 'paid') return;
    const { sourceAddress } = job;
    if (job.claim === 'failed') {
      // Undefined: the platform knows no such transaction, nothing was paid. Errors are retried.
      const status = await this.api.findStatus(ref);
      if (status?.paid) return this.settleConfirmed(job, status, invoice);
      await this.settlement.failed({
        ...failedFromCallback(job.callback),
        ...(status
          ? { payment: { ...paymentFromCallback(job.callback), ...paymentFromStatus(status) } }
          : {}),
      });
      return;
    }

    const delays = recheckDelays(this.options.verification.recheck);
    const now = Date.now();
    const previous = context.record.state as RecheckState | undefined;
    const state: RecheckState = previous ? { ...previous } : { start: now, checks: 0 };
    // The first check, or the scheduled one (its own run, or a wake once its time has come); a
    // wake before it adds a check.
    const scheduled = previous?.deferral !== undefined && context.record.deferrals === previous.deferral;
    if (state.checks === 0 || scheduled || now >= dueAt(state, delays)) state.checks++;
    // One line per check a wake makes (not per copy that woke it: copies share the run).
    if (previous && !scheduled)
      this.logger.debug?.(
        `Another paid callback for ${ref} while its confirmation waited: checking its status again now`,
      );
    let status = await this.api.findStatus(ref);
    // The payload is the latest callback of the round (a wake brings its own); one that came
    // during this check is later still: its details (the payer's) are the ones reported.
    if (status?.paid) return this.settleConfirmed((await context.takeWake()) ?? job, status, invoice);
    if (state.checks <= delays.length)
      return context.defer(dueAt(state, delays), { ...state, deferral: (context.record.deferrals ?? 0) + 1 });
    await this.endRound(job);
    // A callback of this round that came during the last check: one more check for it.
    const late = await context.takeWake();
    if (late) {
      this.logger.debug?.(
        `Another paid callback for ${ref} during its last check: checking its status again now`,
      );
      status = await this.api.findStatus(ref);
      if (status?.paid) return this.settleConfirmed(late, status, invoice);
    }
    this.settlement.reject({
      reason: 'NOT_CONFIRMED',
      message: `The callback says ${ref} was paid, but the status check says ${status ? `"${status.status}"` : 'it has no such transaction'} (checked ${delays.length + 1} times)`,
      clientReference: ref,
      invoice,
      callback: job.callback,
      status,
      sourceAddress,
    });
  }

  /** Moves the invoice past the job's confirmation round (unless another ending did already). */
  private async endRound(job: ConfirmJob): Promise<void> {
    const round = job.round ?? 0;
    await this.invoices.update(job.callback.Data.ClientReference, (current) =>
      (current.confirmRound ?? 0) === round ? changeInvoice(current, { confirmRound: round + 1 }) : undefined,
    );
  }

  /** The status check says Paid: verified against the invoice, then settled once. */
  private async settleConfirmed(
    job: Pick<ConfirmJob, 'callback' | 'sourceAddress'>,
    status: CheckoutTransactionStatus,
    invoice: CheckoutInvoice,
  ): Promise<void> {
    const ref = invoice.clientReference;
    const verdict = this.verifier.verifyPaidStatus(status, invoice);
    if (!verdict.ok) {
      this.settlement.reject({
        ...verdict,
        clientReference: ref,
        invoice,
        status,
        sourceAddress: job.sourceAddress,
      });
      return;
    }
    await this.settlement.paid({
      ...paidFromCallback(job.callback, true),
      amountPaid: status.amount!,
      payment: { ...paymentFromCallback(job.callback), ...paymentFromStatus(status) },
    });
  }
}
