/**
 * The confirmation of a verified callback through the transaction status check, when
 * `verification.confirmWithStatusCheck` is on: the callback is recorded as a pipeline job (one
 * per claim and round), and that job settles it (`paid` / `failed`, through CheckoutSettlement) or
 * rejects it. The whole road of a confirmed payment, callback → job → settlement, reads here;
 * CheckoutService only submits to it.
 */
import { HubtelLogger, HubtelStatusCheckBudgetError } from 'nestjs-hubtel';
import { type InboundPipeline, type JobDeferral, type JobRunContext } from '#internal';
import type { CheckoutAccount, CheckoutAccountSource } from './checkout.accounts.js';
import {
  changeInvoice,
  invoiceAccount,
  type CheckoutInvoice,
  type CheckoutInvoiceStore,
} from './checkout-invoice.store.js';
import { paymentFromStatus, type CheckoutSettlement } from './checkout-settlement.js';
import type { CallbackClaim } from './checkout-verifier.js';
import { failedFromCallback, paidFromCallback, paymentFromCallback } from './checkout.callback-evidence.js';
import { CHECKOUT_CONFIRM_JOB, CHECKOUT_DEFAULTS } from './checkout.constants.js';
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
  /**
   * The invoice's account (absent: `default`): the confirmation reads it from the invoice, this
   * copy is for a dead letter's `account` (handler filters).
   */
  account?: string;
}

/**
 * Where a paid claim's confirmation is in its schedule of status checks (the job's state, kept
 * between its deferred runs): when its first check was, and how many scheduled checks were made.
 */
interface RecheckState {
  start: number;
  checks: number;
  /**
   * Status checks made in the round, wakes included: at most one more than the scheduled
   * re-checks, however many copies of the callback come. Absent in records written before it.
   */
  calls?: number;
  /** The last status check's `status` (for the rejection's message). */
  last?: string;
  /** A callback of the round came when its checks were spent: it gets the next round. */
  unchecked?: true;
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

const HOUR_MS = 3600_000;

export class CheckoutConfirmation {
  private readonly logger = new HubtelLogger('HubtelCheckout');

  constructor(
    /** The module's options (the default account's): its handlers' record TTL. */
    private readonly options: ResolvedCheckoutOptions,
    private readonly pipeline: InboundPipeline,
    private readonly invoices: CheckoutInvoiceStore,
    /** Each invoice is confirmed with its own account's keys, POS Sales ID and verification. */
    private readonly accounts: CheckoutAccountSource,
    private readonly settlement: CheckoutSettlement,
  ) {
    pipeline.define<ConfirmJob>(CHECKOUT_CONFIRM_JOB, {
      run: (job, context) => this.confirm(job, context),
      // Another callback of the round (the genuine one after a forged one, say) while the
      // confirmation waits for its next status check: checked now, on whichever instance, and its
      // details are the ones reported (see confirm).
      wakeOnDuplicate: true,
      // Once confirmed, the record only needs to recognise a re-sent callback: the body goes.
      compactWhenDone: () => undefined,
      // Hours, not the pipeline's days: a finished round's key is never submitted again (the
      // invoice moved past it, or is paid), and forged rounds must not hold keys for a week.
      doneTtlMs: () =>
        Math.min(
          CHECKOUT_DEFAULTS.confirmRecordTtlMs,
          options.handlers.recordTtlMs ?? CHECKOUT_DEFAULTS.confirmRecordTtlMs,
        ),
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
  ): Promise<'accepted' | 'duplicate' | 'ignored'> {
    const ref = callback.Data.ClientReference;
    const { roundsPerHour } = (await this.accounts.forInvoice(invoice)).options.verification.recheck;
    if (claim === 'paid' && this.roundsSpent(invoice, roundsPerHour)) {
      // Rounds this hour are spent: no new one (each costs status checks of the merchant's
      // rate-limited budget). A genuine payment is still found by the reconciler.
      this.logger.debug?.(
        `Paid callback for ${ref} ignored: ${roundsPerHour} confirmation rounds ended unconfirmed within the hour`,
      );
      return 'ignored';
    }
    // The validated callback is already a fresh plain object (the compiled validator builds one): recorded as is.
    const job: ConfirmJob = { claim, callback };
    if (sourceAddress !== undefined) job.sourceAddress = sourceAddress;
    const round = claim === 'paid' ? (invoice.confirmRound ?? 0) : 0;
    if (round > 0) job.round = round;
    if (invoice.account !== undefined) job.account = invoice.account;
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

  /** True when `roundsPerHour` rounds of the invoice ended unconfirmed within the last hour. */
  private roundsSpent(invoice: CheckoutInvoice, roundsPerHour: number): boolean {
    const since = Date.now() - HOUR_MS;
    const recent = (invoice.roundEndedAt ?? []).filter((at) => at > since).length;
    return recent >= roundsPerHour;
  }

  /**
   * Confirms a recorded callback through the status check (a pipeline job: throwing retries it).
   * A paid claim the status check does not show yet is checked again on a schedule fixed from its
   * first check (the platform's check can lag behind its callback): each time the job defers
   * itself, durably, until the next check is due (a delayed job of the runner, not a wait in this
   * process). Another callback of the round wakes it for one check now (the genuine callback
   * after a forged one is not kept waiting), within the round's cap of `attempts + 1` checks,
   * wakes included. After the last check it is rejected (`NOT_CONFIRMED`) and left to the
   * reconciler, and its round ends so that it holds nothing a later callback needs; at most
   * `roundsPerHour` rounds start in an hour (see submit). A check the instance's budget refuses
   * is not counted, and made once the budget allows.
   */
  private async confirm(job: ConfirmJob, context: JobRunContext<ConfirmJob>): Promise<void | JobDeferral> {
    const ref = job.callback.Data.ClientReference;
    const invoice = await this.invoices.get(ref);
    if (!invoice || invoice.status === 'paid') return;
    // The invoice's account, whichever replica and route this runs on (an unknown one throws: retried).
    const account = await this.accounts.forInvoice(invoice);
    const { sourceAddress } = job;
    if (job.claim === 'failed') {
      // Undefined: the platform knows no such transaction, nothing was paid. Errors are retried.
      let status: CheckoutTransactionStatus | undefined;
      try {
        status = await account.api.findStatus(ref);
      } catch (error) {
        if (!(error instanceof HubtelStatusCheckBudgetError)) throw error;
        return context.defer(Date.now() + (error.retryAfterMs ?? 1_000));
      }
      if (status?.paid) return this.settleConfirmed(job, status, invoice, account);
      await this.settlement.failed({
        ...failedFromCallback(job.callback),
        ...(status
          ? { payment: { ...paymentFromCallback(job.callback), ...paymentFromStatus(status) } }
          : {}),
      });
      return;
    }

    const delays = recheckDelays(account.options.verification.recheck);
    // At most this many checks a round, wakes included: copies of a callback cannot make more.
    const cap = delays.length + 1;
    const now = Date.now();
    const previous = context.record.state as RecheckState | undefined;
    const state: RecheckState = previous ? { ...previous } : { start: now, checks: 0, calls: 0 };
    state.calls ??= state.checks;
    const wait = () => context.defer(dueAt(state, delays), state);
    // The first check, or the scheduled one (its own run, even a little early by this clock, or a
    // wake once its time has come); a wake before it is one check more, within the cap.
    const scheduled = previous !== undefined && !context.woken;
    const due = state.checks === 0 || scheduled || now >= dueAt(state, delays);
    let status: CheckoutTransactionStatus | undefined;
    if (state.calls < cap) {
      // One line per check a wake makes (not per copy that woke it: copies share the run).
      if (previous && !scheduled)
        this.logger.debug?.(
          `Another paid callback for ${ref} while its confirmation waited: checking its status again now`,
        );
      try {
        status = await account.api.findStatus(ref);
      } catch (error) {
        // Over the instance's budget: nothing was sent, so nothing is counted; the check is made
        // when the budget allows (that run counts as the scheduled one).
        if (!(error instanceof HubtelStatusCheckBudgetError)) throw error;
        return context.defer(now + (error.retryAfterMs ?? 1_000), state);
      }
      state.calls++;
      state.last = status ? status.status : 'no such transaction';
      // What is reported comes from the status check and the invoice, never from whichever
      // callback of the round came last (a forged copy may carry another phone number).
      if (status?.paid) {
        // A copy that came during the check is answered by this settlement: its wake mark goes.
        await context.takeWake();
        return this.settleConfirmed(job, status, invoice, account);
      }
    } else if (!due) {
      // A wake with the round's checks spent (copies came first): no check now, but the round
      // does not end early either; this callback gets a round of its own when this one ends.
      state.unchecked = true;
      return wait();
    }
    if (due) state.checks++;
    if (state.checks <= delays.length) return wait();

    const ended = await this.endRound(job, account);
    this.settlement.reject({
      reason: 'NOT_CONFIRMED',
      message: `The callback says ${ref} was paid, but the status check says ${state.last === undefined ? 'nothing' : `"${state.last}"`} (checked ${state.calls} times)`,
      clientReference: ref,
      invoice,
      callback: job.callback,
      status,
      sourceAddress,
    });
    // A callback of this round that got no check (it came during the last one, or after the
    // round's checks were spent) starts the next round, if the hour allows one: the genuine
    // callback after forged copies is still checked, on a budget.
    const late = await context.takeWake();
    if ((late || state.unchecked) && ended)
      await this.submit('paid', (late ?? job).callback, ended, (late ?? job).sourceAddress);
  }

  /**
   * Moves the invoice past the job's confirmation round (unless another ending did already), and
   * notes when, for `roundsPerHour`. Returns the invoice as it now is (undefined: gone).
   */
  private async endRound(job: ConfirmJob, known?: CheckoutAccount): Promise<CheckoutInvoice | undefined> {
    const round = job.round ?? 0;
    // A job that gave up because its account is gone still ends its round (on the module's setting).
    const account = known ?? (await this.accounts.get(invoiceAccount(job)).catch(() => undefined));
    const keep = (account?.options ?? this.options).verification.recheck.roundsPerHour;
    const result = await this.invoices.update(job.callback.Data.ClientReference, (current) =>
      (current.confirmRound ?? 0) === round
        ? changeInvoice(current, {
            confirmRound: round + 1,
            roundEndedAt: [...(current.roundEndedAt ?? []), Date.now()].slice(-keep),
          })
        : undefined,
    );
    return result?.invoice;
  }

  /** The status check says Paid: verified against the invoice, then settled once. */
  private async settleConfirmed(
    job: Pick<ConfirmJob, 'callback' | 'sourceAddress'>,
    status: CheckoutTransactionStatus,
    invoice: CheckoutInvoice,
    account: CheckoutAccount,
  ): Promise<void> {
    const ref = invoice.clientReference;
    const verdict = account.verifier.verifyPaidStatus(status, invoice);
    if (!verdict.ok) {
      // Another reference's answer is no payment of this invoice: an alert only.
      if (verdict.reason === 'NOT_CONFIRMED')
        this.settlement.reject({
          ...verdict,
          clientReference: ref,
          invoice,
          status,
          sourceAddress: job.sourceAddress,
        });
      // Paid, but matching on neither count: kept for a person, never lost.
      else await this.settlement.attention(invoice, { ...verdict, status, sourceAddress: job.sourceAddress });
      return;
    }
    await this.settlement.paid({
      ...paidFromCallback(job.callback, true),
      amountPaid: status.amount!,
      // The status check's details only: the callback's are a claim anyone could have made.
      payment: paymentFromStatus(status),
      amounts: verdict.amounts,
    });
  }
}
