import { HubtelLogger, maskPhoneNumbers, type HubtelStore } from 'nestjs-hubtel';
import { parseInbound, type InboundPipeline } from '#internal';
import type { CheckoutAccountSource } from '../checkout.accounts.js';
import { CHECKOUT_DEFAULT_ACCOUNT } from '../checkout.constants.js';
import type { CheckoutRejectionReason } from '../checkout.events.js';
import type { ResolvedCheckoutOptions } from '../checkout.options.js';
import { invoiceAccount, type CheckoutInvoiceStore } from '../invoices/invoice.store.js';
import { CheckoutConfirmation } from './callback.confirmation.js';
import { failedFromCallback, paidFromCallback } from './payment.evidence.js';
import { validateCheckoutCallback } from './callback.dto.js';
import { classifyCallback, type CallbackClaim, type Verdict } from './callback.verifier.js';
import type { CheckoutSettlement } from './payment.settlement.js';

/** What became of a callback. The HTTP answer does not reveal it (see the callback controller). */
export interface CheckoutCallbackResult {
  /**
   * `accepted`: recorded, its event runs once; `duplicate`: already recorded; `rejected`: failed
   * verification (a `rejected` event, except `WRONG_ACCOUNT`); `ignored`: a non-final status.
   */
  outcome: 'accepted' | 'duplicate' | 'rejected' | 'ignored';
  clientReference: string;
  claim: CallbackClaim;
  reason?: CheckoutRejectionReason;
}

/** A callback validated, verified against its invoice, then settled or recorded for confirmation. */
export class CheckoutCallbackHandler {
  private readonly logger = new HubtelLogger('HubtelCheckout');
  private readonly confirmation: CheckoutConfirmation;

  constructor(
    private readonly options: ResolvedCheckoutOptions,
    private readonly pipeline: InboundPipeline,
    private readonly store: HubtelStore,
    private readonly invoices: CheckoutInvoiceStore,
    private readonly accounts: CheckoutAccountSource,
    private readonly settlement: CheckoutSettlement,
  ) {
    this.confirmation = new CheckoutConfirmation(options, pipeline, invoices, accounts, settlement);
  }

  async handle(
    body: unknown,
    context: { sourceAddress?: string; account?: string },
  ): Promise<CheckoutCallbackResult> {
    this.pipeline.assertAcceptingInbound('checkout callback');
    const callback = parseInbound(validateCheckoutCallback, body, 'checkout callback');
    const claim = classifyCallback(callback);
    const ref = callback.Data.ClientReference;
    if (claim === 'pending') {
      this.logger.debug?.(
        `Callback for ${ref} reports a non-final status (${callback.Data.Status}); ignored`,
      );
      return { outcome: 'ignored', clientReference: ref, claim };
    }

    // Read once: verified here, and handed on (with its version) to the settlement.
    const entry = await this.invoices.getEntry(ref);
    const invoice = entry?.value;
    const routed = context.account ?? CHECKOUT_DEFAULT_ACCOUNT;
    if (invoice && invoiceAccount(invoice) !== routed) {
      // Another account's invoice: its own access was not the one checked. Nothing emitted.
      this.logger.warn(
        maskPhoneNumbers(
          `Refused a checkout callback for invoice ${ref} of account "${invoiceAccount(invoice)}": it came on account "${routed}"'s path (WRONG_ACCOUNT)` +
            (context.sourceAddress ? ` (from ${context.sourceAddress})` : ''),
        ),
      );
      return { outcome: 'rejected', clientReference: ref, claim, reason: 'WRONG_ACCOUNT' };
    }
    const account = await this.accounts.get(routed);
    const verdict =
      (invoice ? undefined : await this.forgotten(ref)) ??
      account.verifier.verifyCallback(callback, claim, invoice);
    if (!verdict.ok) {
      this.settlement.reject({
        ...verdict,
        clientReference: ref,
        invoice,
        account: routed,
        callback,
        sourceAddress: context.sourceAddress,
      });
      return { outcome: 'rejected', clientReference: ref, claim, reason: verdict.reason };
    }
    // A failed claim for a failed invoice goes on: an earlier copy may have stopped before its job.
    const status = invoice!.status;
    if (status === 'paid' || (claim === 'failed' && status !== 'pending' && status !== 'failed')) {
      this.logger.debug?.(`Duplicate ${claim} callback for ${ref} ignored: the invoice is already ${status}`);
      return { outcome: 'duplicate', clientReference: ref, claim };
    }

    if (account.options.verification.confirmWithStatusCheck) {
      const outcome = await this.confirmation.submit(claim, callback, invoice!, context.sourceAddress);
      return { outcome, clientReference: ref, claim };
    }
    const result =
      claim === 'paid'
        ? await this.settlement.paid(paidFromCallback(callback, false), entry)
        : await this.settlement.failed(failedFromCallback(callback), entry);
    return { outcome: result === 'settled' ? 'accepted' : 'duplicate', clientReference: ref, claim };
  }

  /** A reference missing from a store known to have lost its data (lately): forgotten, not unknown. */
  private async forgotten(ref: string): Promise<Verdict | undefined> {
    const loss = await this.store.lostData?.().catch(() => undefined);
    if (!loss || Date.now() - Date.parse(loss.detectedAt) > this.options.reconciliation.giveUpAfterMs)
      return undefined;
    return {
      ok: false,
      reason: 'FORGOTTEN_REFERENCE',
      message:
        `No invoice with clientReference "${ref}" is kept: the store lost its data (noticed at ${loss.detectedAt} on ${loss.where.join(', ')}), ` +
        `so this may be a genuine payment for an invoice created before. Nothing was delivered: if your own records hold this order, ` +
        `reconcile it: reconcile("${ref}", { amount })`,
    };
  }
}
