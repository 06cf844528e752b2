import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HubtelLogger, HubtelError, HubtelStatusCheckBudgetError, type StoreEntry } from 'nestjs-hubtel';
import { describeError, type InboundPipeline } from '#internal';
import type { CheckoutAccount, CheckoutAccountSource } from '../checkout.accounts.js';
import { CHECKOUT_ACCOUNTS, CHECKOUT_PIPELINE, CHECKOUT_RESOLVED_OPTIONS } from '../checkout.constants.js';
import {
  CheckoutInvoiceStore,
  type CheckoutInvoice,
  type CheckoutWatchEntry,
} from '../invoices/invoice.store.js';
import { paymentFromStatus } from '../callbacks/payment.evidence.js';
import { CheckoutSettlement } from '../callbacks/payment.settlement.js';
import type { ResolvedCheckoutOptions } from '../checkout.options.js';
import type { CheckoutTransactionStatus } from '../invoices/invoice.dto.js';

/** What one reconciliation pass did. */
export interface CheckoutReconcileReport {
  checked: number;
  paid: number;
  /** Refunds found (a `failed` event each, unless the invoice had already failed). */
  failed: number;
  expired: number;
  /** Status answers that failed verification (a `rejected` event each). */
  rejected: number;
  /** Status checks that failed (retried at the next due time). */
  errors: number;
}

/**
 * `paid`: recorded by this check; `already-paid` / `unpaid`: nothing new; `refunded`: the money came
 * and went back (`failed`); `rejected`: failed verification (an alert, or kept `attention`).
 */
export type CheckoutReconcileOutcome = 'paid' | 'already-paid' | 'unpaid' | 'refunded' | 'rejected';

/** The result of `CheckoutService.reconcile(clientReference)`. */
export interface CheckoutReconcileResult {
  clientReference: string;
  outcome: CheckoutReconcileOutcome;
  /** The platform's answer; absent when not asked or no such transaction. */
  status?: CheckoutTransactionStatus;
  /** The invoice as stored after the check. */
  invoice: CheckoutInvoice;
}

/**
 * Callbacks are not guaranteed: every `intervalMs` the reconciler asks the status check of the
 * watched invoices that are due (backing off to `maxIntervalMs`) and settles them exactly once, as a
 * callback would. An unpaid invoice costs at most `maxChecks` checks, the last at `giveUpAfterMs`,
 * then it expires. Each check is claimed by compare-and-set: instances never check one invoice at once.
 */
@Injectable()
export class CheckoutReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new HubtelLogger('HubtelCheckout');
  private pass?: Promise<CheckoutReconcileReport>;
  private started = false;

  constructor(
    @Inject(CHECKOUT_RESOLVED_OPTIONS) private readonly options: ResolvedCheckoutOptions,
    @Inject(CheckoutInvoiceStore) private readonly invoices: CheckoutInvoiceStore,
    @Inject(CHECKOUT_ACCOUNTS) private readonly accounts: CheckoutAccountSource,
    @Inject(CheckoutSettlement) private readonly settlement: CheckoutSettlement,
    // Its runner: BullMQ's job scheduler (one pass per interval across instances), or this process's timer.
    @Inject(CHECKOUT_PIPELINE) private readonly pipeline: InboundPipeline,
  ) {}

  get running(): boolean {
    return this.started;
  }

  onApplicationBootstrap(): void {
    if (this.options.reconciliation.enabled) this.start();
  }

  // The first shutdown hook: a pass in flight records what it found before the pipeline drains.
  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  /** Starts the periodic passes (done at bootstrap when `reconciliation.enabled`). */
  start(): void {
    if (this.started) return;
    if (this.options.posSalesId === undefined)
      throw new HubtelError(
        'HUBTEL_CONFIG_INVALID',
        'The checkout reconciler needs the checkout.posSalesId option (it uses the status check)',
      );
    this.started = true;
    this.pipeline.runner
      .repeat(RECONCILE_TASK, this.options.reconciliation.intervalMs, async () => {
        if (!this.started) return;
        await this.runOnce().catch((error: unknown) =>
          this.logger.error(`Reconciliation pass failed: ${describeError(error)}`),
        );
      })
      .catch((error: unknown) =>
        this.logger.error(`Scheduling reconciliation on the job runner failed: ${describeError(error)}`),
      );
  }

  /** Stops the periodic passes and waits for a running pass to finish. No timer is left behind. */
  async stop(): Promise<void> {
    this.started = false;
    await this.pipeline.runner.stop(RECONCILE_TASK).catch(() => undefined);
    await this.pass?.catch(() => undefined);
  }

  /** Checks every watched invoice due now, once (a call during a pass returns that pass). */
  runOnce(): Promise<CheckoutReconcileReport> {
    this.pass ??= this.reconcile().finally(() => {
      this.pass = undefined;
    });
    return this.pass;
  }

  private async reconcile(): Promise<CheckoutReconcileReport> {
    const report = { checked: 0, paid: 0, failed: 0, expired: 0, rejected: 0, errors: 0 };
    const now = Date.now();
    const due: StoreEntry<CheckoutWatchEntry>[] = [];
    for await (const [, entry] of this.invoices.watched())
      if (entry.value.nextCheckAt <= now) due.push(entry);
    let index = 0;
    const worker = async () => {
      while (index < due.length) {
        const entry = due[index++]!;
        try {
          await this.check(entry, now, report);
        } catch (error) {
          report.errors++;
          // The minute's status checks are spent (warned once): the rest waits for the next pass.
          if (error instanceof HubtelStatusCheckBudgetError) {
            index = due.length;
            return;
          }
          this.logger.warn(
            `Status check of invoice ${entry.value.clientReference} failed: ${describeError(error)}; retrying later`,
          );
        }
      }
    };
    const workers = Math.min(this.options.reconciliation.concurrency, due.length);
    await Promise.all(Array.from({ length: workers }, worker));
    return report;
  }

  /** `CheckoutService.reconcile`: checks one invoice now, whatever its schedule; throws HUBTEL_NOT_FOUND. */
  async checkInvoice(clientReference: string): Promise<CheckoutReconcileResult> {
    const invoice = await this.invoices.get(clientReference);
    if (!invoice)
      throw new HubtelError(
        'HUBTEL_NOT_FOUND',
        `No invoice with clientReference "${clientReference}" was created by this app (or it is no longer kept)`,
      );
    if (invoice.status === 'paid') return { clientReference, outcome: 'already-paid', invoice };
    // Kept for a person: another check would only repeat what was found.
    if (invoice.status === 'attention' || invoice.status === 'refunded')
      return { clientReference, outcome: 'rejected', invoice };
    const account = await this.accounts.forInvoice(invoice);
    const status = await account.api.findStatus(clientReference);
    const outcome = await this.apply(invoice, status, account);
    return {
      clientReference,
      outcome,
      ...(status === undefined ? {} : { status }),
      invoice: (await this.invoices.get(clientReference)) ?? invoice,
    };
  }

  private async check(
    entry: StoreEntry<CheckoutWatchEntry>,
    now: number,
    report: CheckoutReconcileReport,
  ): Promise<void> {
    const { intervalMs, maxIntervalMs, giveUpAfterMs, maxChecks } = this.options.reconciliation;
    const watch = entry.value;
    const ref = watch.clientReference;
    const checks = watch.checks + 1;
    const spacing = Math.min(maxIntervalMs, intervalMs * 2 ** Math.min(watch.checks, 30));
    let nextCheckAt = now + spacing;
    // The last check waits for the give-up time: a slow payment (bank pay) is still found.
    if (checks === maxChecks - 1) nextCheckAt = Math.max(nextCheckAt, watch.createdAt + giveUpAfterMs);
    if (!(await this.invoices.claim(entry, { ...watch, checks, nextCheckAt }))) return;

    const invoice = await this.invoices.get(ref);
    // Expired but still watched: its event may not be recorded yet (expired() unwatches after it).
    if (invoice?.status === 'expired') return void (await this.settlement.expired(ref));
    if (!invoice || (invoice.status !== 'pending' && invoice.status !== 'failed') || invoice.attention)
      return this.invoices.unwatch(ref);
    const givingUp = now - watch.createdAt >= giveUpAfterMs || checks >= maxChecks;
    let status: CheckoutTransactionStatus | undefined;
    let account: CheckoutAccount | undefined;
    try {
      account = await this.accounts.forInvoice(invoice);
      status = await account.api.findStatus(ref);
    } catch (error) {
      // A check the budget refused was never made: no reason to give up on the invoice.
      if (!givingUp || error instanceof HubtelStatusCheckBudgetError) throw error;
      this.logger.warn(
        `Last status check of invoice ${ref} failed (${describeError(error)}); giving up on it`,
      );
    }
    report.checked++;

    const outcome = await this.apply(invoice, status, account);
    if (outcome === 'paid') report.paid++;
    else if (outcome === 'rejected') report.rejected++;
    else if (outcome === 'refunded') report.failed++;
    else if (outcome === 'unpaid' && givingUp && (await this.settlement.expired(ref)) === 'settled')
      report.expired++;
  }

  /** Settles what a status answer says of an invoice not yet paid. */
  private async apply(
    invoice: CheckoutInvoice,
    status: CheckoutTransactionStatus | undefined,
    account: CheckoutAccount | undefined,
  ): Promise<CheckoutReconcileOutcome> {
    const ref = invoice.clientReference;
    if (status?.paid && account) {
      const result = await this.settlement.paidByStatus(invoice, status, account.verifier, {
        clientReference: ref,
        source: 'status-check',
        confirmedByStatusCheck: true,
      });
      // Kept for a person and no longer checked: re-checking would only repeat the alert.
      if (result === 'not-confirmed') await this.invoices.unwatch(ref);
      if (result === 'not-confirmed' || result === 'attention') return 'rejected';
      return result === 'settled' ? 'paid' : result === 'duplicate' ? 'already-paid' : 'unpaid';
    }
    if (status && status.status.trim().toLowerCase() === 'refunded') {
      // Money came and went back: final, and not a payment.
      await this.settlement.failed({
        clientReference: ref,
        source: 'status-check',
        status: status.status,
        payment: paymentFromStatus(status),
      });
      await this.invoices.unwatch(ref);
      return 'refunded';
    }
    return 'unpaid';
  }
}

/** The reconciliation pass as a repeated task of the job runner (a BullMQ job scheduler). */
export const RECONCILE_TASK = 'checkout-reconcile';
