/**
 * The confirmation of a verified callback through the transaction status check, when
 * `verification.confirmWithStatusCheck` is on: the callback is recorded as a pipeline job (one
 * per claim and round), and that job settles it (`paid` / `failed`, through CheckoutSettlement) or
 * rejects it. The whole road of a confirmed payment, callback → job → settlement, reads here;
 * the callback handler only submits to it.
 */
import { HubtelLogger, HubtelStatusCheckBudgetError } from 'nestjs-hubtel';
import { type InboundPipeline, type JobDeferral, type JobRunContext } from '#internal';
import type { CheckoutAccount, CheckoutAccountSource } from '../checkout.accounts.js';
import { changeInvoice, type CheckoutInvoice, type CheckoutInvoiceStore } from '../invoices/invoice.store.js';
import type { CheckoutSettlement } from './payment.settlement.js';
import type { CallbackClaim } from './callback.verifier.js';
import {
  failedFromCallback,
  paidFromCallback,
  paymentFromCallback,
  paymentFromStatus,
} from './payment.evidence.js';
import { CHECKOUT_CONFIRM_JOB, CHECKOUT_DEFAULTS } from '../checkout.constants.js';
import { recheckDelays } from '../checkout.option-sections.js';
import type { ResolvedCheckoutOptions } from '../checkout.options.js';
import type { CheckoutCallbackDto } from './callback.dto.js';
import type { CheckoutTransactionStatus } from '../invoices/invoice.dto.js';

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
 * Where a paid claim's confirmation is (the job's state, kept between its deferred runs): its
 * round checks the latest callback at once and again after its re-check delays, never two checks
 * of the invoice closer than `minIntervalMs`.
 */
interface RecheckState {
  /** When the round's latest paid callback came (its first run, or the last run a copy woke). */
  claimAt: number;
  /** Checks made since that callback: it gets `recheck.attempts + 1` of them. */
  checks: number;
  /** When the invoice's last status check was answered (absent: none yet): the next is spaced from it. */
  checkedAt?: number;
  /** Status checks made in the round (for the rejection's message). */
  calls: number;
  /** The last status check's `status` (for the rejection's message). */
  last?: string;
  /** A copy came since the last check (the next check says so in a debug line). */
  renewed?: true;
}

/**
 * When the next check is due (undefined: the round is over). The latest callback is checked when
 * it came and after each re-check delay, each check at least `minIntervalMs` after the one before
 * was answered (copies share checks, and a callback never waits much longer than that for one).
 */
function nextCheckAt(
  state: RecheckState,
  delays: readonly number[],
  minIntervalMs: number,
): number | undefined {
  if (state.checks > delays.length) return undefined;
  const at = state.claimAt + delays.slice(0, state.checks).reduce((sum, ms) => sum + ms, 0);
  return state.checkedAt === undefined ? at : Math.max(at, state.checkedAt + minIntervalMs);
}

/**
 * The confirmation job's key. A paid claim's key names the invoice's round: a round that ended
 * unconfirmed moves the invoice to the next one, so it never makes a later callback a duplicate.
 * Round 0 keeps the key `<ref>:paid` (records written before rounds existed stay recognised).
 */
function confirmKey(ref: string, claim: ConfirmJob['claim'], round: number): string {
  return claim === 'paid' && round > 0 ? `${ref}:paid:${round}` : `${ref}:${claim}`;
}

/** A callback that found its round ending tries the next one, this many times at most. */
const SUBMIT_TRIES = 3;

export class CheckoutConfirmation {
  private readonly logger = new HubtelLogger('HubtelCheckout');

  constructor(
    /** The module's options (the default account's): its handlers' record TTL. */
    options: ResolvedCheckoutOptions,
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
        if (outcome === 'dead' && record.payload.claim === 'paid')
          await this.endRound(record.payload, (record.state as Partial<RecheckState> | undefined)?.checkedAt);
      },
    });
  }

  /**
   * Records a verified callback for confirmation: `accepted` when it was recorded now,
   * `duplicate` when its claim (of this round) was already recorded (a waiting paid confirmation
   * is then woken to check it, within the invoice's spacing of checks).
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
    if (invoice.account !== undefined) job.account = invoice.account;
    for (let tries = 1; ; tries++) {
      const round = claim === 'paid' ? (invoice.confirmRound ?? 0) : 0;
      if (round > 0) job.round = round;
      const submitted = await this.pipeline.submit(CHECKOUT_CONFIRM_JOB, confirmKey(ref, claim, round), job);
      if (!submitted.duplicate) return 'accepted';
      // Its round was ending as it came (settled, or past the wake it would read): the next round
      // checks it. A genuine callback must never be taken for a duplicate of a forged round.
      const current = claim === 'paid' && tries < SUBMIT_TRIES ? await this.invoices.get(ref) : undefined;
      if (current?.status === 'pending' && (current.confirmRound ?? 0) > round) {
        invoice = current;
        continue;
      }
      // A woken confirmation says so when it makes its check (confirm): many copies share one
      // check, so a line here per copy would announce checks that are never made.
      if (!submitted.woken)
        this.logger.debug?.(
          `Duplicate ${claim} callback for ${ref} ignored: its confirmation is already ${submitted.record.status}`,
        );
      return 'duplicate';
    }
  }

  /**
   * Confirms a recorded callback through the status check (a pipeline job: throwing retries it).
   * A paid claim the status check does not show yet is checked again after its re-check delays
   * (the platform's check can lag behind its callback): each time the job defers itself, durably,
   * until the next check is due (a delayed job of the runner, not a wait in this process). Another
   * callback of the round wakes it: the schedule starts again from that callback, so the genuine
   * one after forged copies is checked too. Checks of the invoice are never closer than
   * `minIntervalMs`, however many copies come: a flood costs at most one check that often, and no
   * callback waits longer than that for its check. Once the latest callback's checks are made
   * and none said paid, it is rejected (`NOT_CONFIRMED`) and left to the reconciler, and its
   * round ends so that it holds nothing a later callback needs. A check the instance's budget
   * refuses is not made, and made once the budget allows.
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

    const { recheck } = account.options.verification;
    const delays = recheckDelays(recheck);
    const now = Date.now();
    const previous = context.record.state as Partial<RecheckState> | undefined;
    // A round's first run spaces its first check from the last round's last one.
    const state: RecheckState =
      previous?.claimAt === undefined
        ? {
            claimAt: now,
            checks: 0,
            calls: previous?.calls ?? 0,
            ...defined('checkedAt', invoice.confirmCheckedAt),
          }
        : { ...(previous as RecheckState) };
    if (context.woken) {
      [state.claimAt, state.checks] = [now, 0];
      if (previous) state.renewed = true;
    }
    const due = nextCheckAt(state, delays, recheck.minIntervalMs);
    // The run of its own deferral is due even a little early by this clock (another instance's
    // delayed job, a timer): deferring again would make the two clocks play ping-pong.
    const scheduled = previous !== undefined && !context.woken;
    if (due !== undefined && due > now && !scheduled) return context.defer(due, state);

    let status: CheckoutTransactionStatus | undefined;
    if (due !== undefined) {
      // One line per check made for copies (not per copy: copies share checks).
      if (state.renewed) {
        this.logger.debug?.(
          `Another paid callback for ${ref} while its confirmation waited: checking its status again now`,
        );
        delete state.renewed;
      }
      try {
        status = await account.api.findStatus(ref);
      } catch (error) {
        // Over the instance's budget: nothing was sent, so nothing is counted; the check is made
        // when the budget allows.
        if (!(error instanceof HubtelStatusCheckBudgetError)) throw error;
        return context.defer(now + (error.retryAfterMs ?? 1_000), state);
      }
      // A scheduled run early by this clock still makes the check it was due for.
      state.checkedAt = Math.max(Date.now(), due);
      state.checks++;
      state.calls++;
      state.last = status ? status.status : 'no such transaction';
      // What is reported comes from the status check and the invoice, never from whichever
      // callback of the round came last (a forged copy may carry another phone number).
      if (status?.paid) {
        // A copy that came during the check is answered by this settlement: its wake mark goes.
        await context.takeWake();
        return this.settleConfirmed(job, status, invoice, account);
      }
      const next = nextCheckAt(state, delays, recheck.minIntervalMs);
      if (next !== undefined) return context.defer(next, state);
    }

    const ended = await this.endRound(job, state.checkedAt);
    this.settlement.reject({
      reason: 'NOT_CONFIRMED',
      message: `The callback says ${ref} was paid, but the status check says ${state.last === undefined ? 'nothing' : `"${state.last}"`} (checked ${state.calls} times)`,
      clientReference: ref,
      invoice,
      callback: job.callback,
      status,
      sourceAddress,
    });
    // A callback that came during the last check gets the next round (spaced from that check).
    const late = await context.takeWake();
    if (late && ended) await this.submit('paid', late.callback, ended, late.sourceAddress);
  }

  /**
   * Moves the invoice past the job's confirmation round (unless another ending did already), and
   * notes its last check (the next round's first is spaced from it). Returns the invoice as it
   * now is (undefined: gone).
   */
  private async endRound(
    job: ConfirmJob,
    lastCheckAt: number | undefined,
  ): Promise<CheckoutInvoice | undefined> {
    const round = job.round ?? 0;
    const result = await this.invoices.update(job.callback.Data.ClientReference, (current) =>
      (current.confirmRound ?? 0) === round
        ? changeInvoice(current, {
            confirmRound: round + 1,
            ...defined('confirmCheckedAt', lastCheckAt ?? current.confirmCheckedAt),
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

/** `{ [key]: at }` when known, else nothing (a stored field is never written undefined). */
function defined<K extends string>(key: K, at: number | undefined): { [P in K]?: number } {
  return (at === undefined ? {} : { [key]: at }) as { [P in K]?: number };
}
