// With `verification.confirmWithStatusCheck`: a verified callback becomes a pipeline job (one per
// claim and round) that settles it through the status check or rejects it.
import { HubtelLogger, HubtelStatusCheckBudgetError } from 'nestjs-hubtel';
import { dropUndefined, type InboundPipeline, type JobDeferral, type JobRunContext } from '#internal';
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
  /** The invoice's confirmation round (absent: 0). */
  round?: number;
  /** The invoice's account (absent: `default`), for a dead letter's `account`. */
  account?: string;
}

/** A paid claim's confirmation state, kept between its deferred runs. */
interface RecheckState {
  /** When the round's latest paid callback came, and the checks made since. */
  claimAt: number;
  checks: number;
  /** When the last status check was answered: the next is spaced from it. */
  checkedAt?: number;
  /** Checks made in the round and the last one's `status` (for the rejection's message). */
  calls: number;
  last?: string;
  /** A copy came since the last check. */
  renewed?: true;
}

/**
 * When the next check is due (undefined: the round is over): when the latest callback came and after
 * each re-check delay, never within `minIntervalMs` of the last answer (copies share checks).
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

/** A callback that found its round ending tries the next one, this many times at most. */
const SUBMIT_TRIES = 3;

export class CheckoutConfirmation {
  private readonly logger = new HubtelLogger('HubtelCheckout');

  constructor(
    options: ResolvedCheckoutOptions,
    private readonly pipeline: InboundPipeline,
    private readonly invoices: CheckoutInvoiceStore,
    private readonly accounts: CheckoutAccountSource,
    private readonly settlement: CheckoutSettlement,
  ) {
    const ttlMs = CHECKOUT_DEFAULTS.confirmRecordTtlMs;
    const doneTtlMs = Math.min(ttlMs, options.handlers.recordTtlMs ?? ttlMs);
    pipeline.define<ConfirmJob>(CHECKOUT_CONFIRM_JOB, {
      run: (job, context) => this.confirm(job, context),
      // Another callback of the round (the genuine one after a forged one) is checked now.
      wakeOnDuplicate: true,
      compactWhenDone: () => undefined,
      // Hours, not days: a finished round's key is never submitted again; forged ones go soon.
      doneTtlMs: () => doneTtlMs,
      onSettled: async (record, outcome) => {
        // Gave up (the status check kept failing): its round must not hold back the next callback.
        if (outcome === 'dead' && record.payload.claim === 'paid')
          await this.endRound(record.payload, (record.state as Partial<RecheckState> | undefined)?.checkedAt);
      },
    });
  }

  /** Records a verified callback: `duplicate` when its claim of this round was (a waiting one is woken). */
  async submit(
    claim: ConfirmJob['claim'],
    callback: CheckoutCallbackDto,
    invoice: CheckoutInvoice,
    sourceAddress: string | undefined,
  ): Promise<'accepted' | 'duplicate'> {
    const ref = callback.Data.ClientReference;
    const job: ConfirmJob = dropUndefined({ claim, callback, sourceAddress, account: invoice.account });
    for (let tries = 1; ; tries++) {
      // A paid claim's key names the invoice's round, so an ended round never makes a later callback
      // a duplicate; round 0 keeps `<ref>:paid` (older records stay recognised).
      const round = claim === 'paid' ? (invoice.confirmRound ?? 0) : 0;
      if (round > 0) job.round = round;
      const key = round > 0 ? `${ref}:paid:${round}` : `${ref}:${claim}`;
      const submitted = await this.pipeline.submit(CHECKOUT_CONFIRM_JOB, key, job);
      if (!submitted.duplicate) return 'accepted';
      // Its round was ending as it came: the next round checks it (never a duplicate of a forged round).
      const current = claim === 'paid' && tries < SUBMIT_TRIES ? await this.invoices.get(ref) : undefined;
      if (current?.status === 'pending' && (current.confirmRound ?? 0) > round) {
        invoice = current;
        continue;
      }
      // A woken confirmation logs its check; many copies share one, so no line per copy here.
      if (!submitted.woken)
        this.logger.debug?.(
          `Duplicate ${claim} callback for ${ref} ignored: its confirmation is already ${submitted.record.status}`,
        );
      return 'duplicate';
    }
  }

  /**
   * Confirms a recorded callback (a job: a throw retries it). A paid claim the check does not show yet
   * (it can lag) is re-checked after its delays, the job deferring itself durably; another callback of
   * the round restarts the schedule (the genuine one after forged copies is checked too), checks
   * `minIntervalMs` apart. None said paid: rejected (`NOT_CONFIRMED`), left to the reconciler, round over.
   */
  private async confirm(job: ConfirmJob, context: JobRunContext<ConfirmJob>): Promise<void | JobDeferral> {
    const ref = job.callback.Data.ClientReference;
    const invoice = await this.invoices.get(ref);
    if (!invoice || invoice.status === 'paid') return;
    // An unknown account throws: retried.
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
      if (status?.paid) return this.paidByStatus(job, status, invoice, account);
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
            ...dropUndefined({ checkedAt: invoice.confirmCheckedAt }),
          }
        : { ...(previous as RecheckState) };
    if (context.woken) {
      [state.claimAt, state.checks] = [now, 0];
      if (previous) state.renewed = true;
    }
    const due = nextCheckAt(state, delays, recheck.minIntervalMs);
    // Its own deferral's run is due even if early by this clock (no ping-pong between clocks).
    const scheduled = previous !== undefined && !context.woken;
    if (due !== undefined && due > now && !scheduled) return context.defer(due, state);

    let status: CheckoutTransactionStatus | undefined;
    if (due !== undefined) {
      if (state.renewed) {
        this.logger.debug?.(
          `Another paid callback for ${ref} while its confirmation waited: checking its status again now`,
        );
        delete state.renewed;
      }
      try {
        status = await account.api.findStatus(ref);
      } catch (error) {
        // Over the instance's budget: nothing was sent; checked when the budget allows.
        if (!(error instanceof HubtelStatusCheckBudgetError)) throw error;
        return context.defer(now + (error.retryAfterMs ?? 1_000), state);
      }
      // A scheduled run early by this clock still makes the check it was due for.
      state.checkedAt = Math.max(Date.now(), due);
      state.checks++;
      state.calls++;
      state.last = status ? status.status : 'no such transaction';
      // Reported from the status check and invoice, never the last callback (maybe a forged copy).
      if (status?.paid) {
        // A copy that came during the check is answered by this settlement: its wake mark goes.
        await context.takeWake();
        return this.paidByStatus(job, status, invoice, account);
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

  /** Moves the invoice past the job's round (once) noting its last check; the invoice as it now is. */
  private async endRound(
    job: ConfirmJob,
    lastCheckAt: number | undefined,
  ): Promise<CheckoutInvoice | undefined> {
    const round = job.round ?? 0;
    const result = await this.invoices.update(job.callback.Data.ClientReference, (current) =>
      (current.confirmRound ?? 0) === round
        ? changeInvoice(current, { confirmRound: round + 1, confirmCheckedAt: lastCheckAt })
        : undefined,
    );
    return result?.invoice;
  }

  /** The status check says Paid: verified against the invoice, then settled once. */
  private async paidByStatus(
    job: ConfirmJob,
    status: CheckoutTransactionStatus,
    invoice: CheckoutInvoice,
    account: CheckoutAccount,
  ): Promise<void> {
    const evidence = paidFromCallback(job.callback, true);
    await this.settlement.paidByStatus(invoice, status, account.verifier, evidence, job.sourceAddress);
  }
}
