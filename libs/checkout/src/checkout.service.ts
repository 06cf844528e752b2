import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import {
  HubtelLogger,
  HubtelError,
  HubtelUnknownOutcomeError,
  HubtelValidationError,
  MemoryStore,
  maskPhoneNumbers,
  type HubtelStore,
  type DeadLetter,
  type ValidationIssue,
} from 'nestjs-hubtel';
import { dropUndefined, type InboundPipeline } from '#internal';
import type {
  CheckoutAccount,
  CheckoutAccountOperations,
  CheckoutAccounts,
  CheckoutAccountService,
} from './checkout.accounts.js';
import { checkoutCallbackValidator, validateCheckoutCallback } from './callbacks/callback.validation.js';
import {
  CheckoutInvoiceStore,
  changeInvoice,
  invoiceAccount,
  type CheckoutInvoice,
} from './invoices/invoice.store.js';
import {
  CheckoutReconciler,
  type CheckoutKnownInvoice,
  type CheckoutReconcileResult,
} from './reconciliation/invoice.reconciler.js';
import { CheckoutSettlement } from './callbacks/payment.settlement.js';
import { classifyCallback, type CallbackClaim, type Verdict } from './callbacks/callback.verifier.js';
import { failedFromCallback, paidFromCallback } from './callbacks/callback.evidence.js';
import { CheckoutConfirmation } from './callbacks/callback.confirmation.js';
import { CheckoutUnknownOutcomeError } from './checkout.errors.js';
import { assertClientReference, buildInitiateBody } from './invoices/invoice.request.js';
import {
  CHECKOUT_ACCOUNTS,
  CHECKOUT_DEFAULT_ACCOUNT,
  CHECKOUT_PIPELINE,
  CHECKOUT_RESOLVED_OPTIONS,
  CHECKOUT_STORE,
} from './checkout.constants.js';
import type { CheckoutRejectionReason } from './checkout.events.js';
import type { ResolvedCheckoutOptions } from './checkout.options.js';
import type {
  CheckoutInvoiceCreated,
  CheckoutTransactionStatus,
  CreateInvoiceInput,
} from './invoices/invoice.dto.js';

/** What became of a callback. The HTTP answer does not reveal it (see the callback controller). */
export interface CheckoutCallbackResult {
  /**
   * `accepted`: recorded; its event (or its status-check confirmation) runs once.
   * `duplicate`: this outcome was already recorded; nothing new runs.
   * `rejected`: it failed verification; a `rejected` event was emitted (none for `WRONG_ACCOUNT`:
   *   a callback for another account's invoice, refused before anything else is looked at).
   * `ignored`: a non-final status (`Pending`); nothing to do.
   */
  outcome: 'accepted' | 'duplicate' | 'rejected' | 'ignored';
  clientReference: string;
  claim: CallbackClaim;
  reason?: CheckoutRejectionReason;
}

/** How an invoice that needs attention is resolved (`CheckoutService.resolveAttention`). */
export type CheckoutAttentionResolution = 'deliver' | 'refund';

/**
 * Online checkout: create invoices, look up payment status, read what the module knows of an
 * invoice. Outcomes arrive as events (`@OnCheckoutPaid()` ...), never as return values: a payment
 * is only believed once verified, and its event runs exactly once.
 */
@Injectable()
export class CheckoutService implements OnApplicationShutdown, CheckoutAccountService {
  private readonly logger = new HubtelLogger('HubtelCheckout');
  private readonly confirmation: CheckoutConfirmation;
  /** The default account's name: CheckoutService acts for the account `forRoot` configures. */
  readonly account = CHECKOUT_DEFAULT_ACCOUNT;

  constructor(
    @Inject(CHECKOUT_RESOLVED_OPTIONS) private readonly options: ResolvedCheckoutOptions,
    @Inject(CHECKOUT_PIPELINE) private readonly pipeline: InboundPipeline,
    @Inject(CHECKOUT_STORE) private readonly store: HubtelStore,
    @Inject(CheckoutInvoiceStore) private readonly invoices: CheckoutInvoiceStore,
    @Inject(CHECKOUT_ACCOUNTS) private readonly accounts: CheckoutAccounts,
    @Inject(CheckoutSettlement) private readonly settlement: CheckoutSettlement,
    @Inject(CheckoutReconciler) private readonly reconciler: CheckoutReconciler,
  ) {
    this.confirmation = new CheckoutConfirmation(options, pipeline, invoices, accounts, settlement);
    const operations: CheckoutAccountOperations = {
      createInvoiceFor: (account, input) => this.createInvoiceFor(account, input),
      getStatusFor: (account, ref) => this.getStatusFor(account, ref),
    };
    accounts.bind(operations);
    checkoutCallbackValidator(); // compiled now: a broken DTO fails at bootstrap, not on the first callback
  }

  /**
   * The same invoice methods, bound to account `name`: `default` (this service), one registered
   * with `CheckoutModule.registerAccount`, or one `accounts.resolve` finds. Each account creates
   * and checks invoices with its own keys and POS Sales ID; its invoices' callbacks come on its own
   * path (`<callback path>/<name>`). A call for a name no one knows rejects with
   * CheckoutUnknownAccountError (`HUBTEL_UNKNOWN_ACCOUNT`) before anything is sent.
   *
   * ```ts
   * const invoice = await checkout.forAccount('north').createInvoice({ totalAmount: 20, description: 'Order 12' });
   * ```
   */
  forAccount(name: string): CheckoutAccountService {
    return name === CHECKOUT_DEFAULT_ACCOUNT ? this : this.accounts.service(name);
  }

  /**
   * Creates an invoice: checks the input, records the invoice (pending), then calls
   * `POST {checkout_url}/items/initiate`. Send the payer to the returned `checkoutUrl`.
   *
   * @throws HubtelValidationError listing every bad field; nothing was sent.
   * @throws HubtelError `HUBTEL_STORE_CONFLICT` when an invoice with this clientReference exists.
   * @throws HubtelApiError (with `responseCode`) when the platform refused it.
   * @throws CheckoutUnknownOutcomeError when no answer came: it was not retried.
   */
  createInvoice(input: CreateInvoiceInput): Promise<CheckoutInvoiceCreated> {
    return this.createInvoiceFor(this.accounts.default, input);
  }

  /** createInvoice for `account` (the bound services' way in). */
  private async createInvoiceFor(
    account: CheckoutAccount,
    input: CreateInvoiceInput,
  ): Promise<CheckoutInvoiceCreated> {
    const body = buildInitiateBody(input, account.options);
    const ref = body.clientReference;
    const createdAt = Date.now();
    const invoice: CheckoutInvoice = {
      clientReference: ref,
      amount: body.totalAmount,
      description: body.description,
      status: 'pending',
      creation: 'creating',
      createdAt: new Date(createdAt).toISOString(),
      updatedAt: new Date(createdAt).toISOString(),
      // The reference stays unique across the app's accounts (one key): a callback names no account.
      account: account.name,
      ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
    };
    // What the merchant said of the payer: the one record of who pays that no callback can change.
    const payee = dropUndefined({
      name: body.PayeeName,
      mobileNumber: body.PayeeMobileNumber,
      email: body.PayeeEmail,
    });
    if (Object.keys(payee).length > 0) invoice.payee = payee;
    // Recorded before sending: a callback can only be verified against what we know, and an
    // unanswered request stays checkable.
    if (!(await this.invoices.create(invoice))) {
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `An invoice with clientReference "${ref}" already exists; use a new reference for a new invoice`,
      );
    }
    let created: CheckoutInvoiceCreated;
    try {
      created = await account.api.initiate(body);
    } catch (error) {
      if (error instanceof HubtelUnknownOutcomeError) {
        await this.invoices.update(ref, (current) => changeInvoice(current, { creation: 'unknown' }));
        await this.watch(account, ref, createdAt);
        throw new CheckoutUnknownOutcomeError(ref, error);
      }
      // The platform did not create it (refused, or never reached): forget it so the reference can be reused.
      await this.invoices.delete(ref);
      throw error;
    }
    await this.invoices.update(ref, (current) =>
      changeInvoice(current, {
        creation: 'created',
        checkoutId: created.checkoutId,
        checkoutUrl: created.checkoutUrl,
        checkoutDirectUrl: created.checkoutDirectUrl,
      }),
    );
    await this.watch(account, ref, createdAt);
    this.logger.log(
      `Invoice ${ref} created (${body.totalAmount.toFixed(2)}, checkout ${created.checkoutId}${account.name === CHECKOUT_DEFAULT_ACCOUNT ? '' : `, account ${account.name}`})`,
    );
    return { ...created, clientReference: ref };
  }

  /**
   * The platform's transaction status of an invoice (`GET /transactions/{posSalesId}/status`).
   * Needs the `posSalesId` option.
   *
   * @throws HubtelError `HUBTEL_NOT_FOUND` when the platform knows no such transaction.
   */
  getStatus(clientReference: string): Promise<CheckoutTransactionStatus> {
    return this.getStatusFor(this.accounts.default, clientReference);
  }

  private async getStatusFor(
    account: CheckoutAccount,
    clientReference: string,
  ): Promise<CheckoutTransactionStatus> {
    assertClientReference(clientReference, 'getStatus');
    return account.api.status(clientReference);
  }

  /**
   * Checks one invoice now through the transaction status check (of the invoice's account) and settles what it says through
   * the same exactly-once path as callbacks and the reconciler: a verified payment emits `paid`
   * once, however many of this call, callbacks and reconciliation passes race. For when you cannot
   * wait for the callback or the reconciler, e.g. when the buyer comes back to your return page.
   * Needs `posSalesId` (not reconciliation: it works with the reconciler off).
   *
   * `known`: what your own records hold of the invoice (its amount, its account), for when the
   * store no longer has it (it lost its data: `FORGOTTEN_REFERENCE`): the invoice is recorded
   * again from it, as pending and watched by the reconciler, then checked. A payment is verified
   * against that amount. Ignored when the store has the invoice.
   *
   * @throws HubtelValidationError for a malformed reference or `known`.
   * @throws HubtelError `HUBTEL_NOT_FOUND` when this app created no invoice with that reference
   *   (and no `known` was given).
   * @throws CheckoutUnknownAccountError for a `known.account` no one knows.
   * @throws HubtelError `HUBTEL_CONFIG_INVALID` without `posSalesId`; the status check's own errors
   *   (API errors, time-outs) when it could not answer. Nothing changed then: call again later.
   */
  async reconcile(clientReference: string, known?: CheckoutKnownInvoice): Promise<CheckoutReconcileResult> {
    assertClientReference(clientReference, 'reconcile');
    if (known !== undefined) await this.restore(clientReference, known);
    const result = await this.reconciler.checkInvoice(clientReference);
    // A copy: the caller may change it; the stored record must not change with it.
    return { ...result, invoice: structuredClone(result.invoice) };
  }

  /**
   * Resolves an invoice whose verified payment matched on neither count (status `attention`, its
   * `attention` event): `deliver` accepts the payment as it is (the `paid` event runs once, with
   * the verified figures and `attention`), `refund` records that you gave the money back
   * (`refunded`: final, nothing delivered; the refund itself is made in Hubtel's merchant
   * dashboard). Resolving again the same way is a no-op.
   *
   * @throws HubtelError `HUBTEL_NOT_FOUND` for an unknown invoice; `HUBTEL_STORE_CONFLICT` when
   *   it does not need attention, or was already resolved the other way.
   */
  async resolveAttention(
    clientReference: string,
    action: CheckoutAttentionResolution,
    note?: string,
  ): Promise<CheckoutInvoice> {
    assertClientReference(clientReference, 'resolveAttention');
    if (action !== 'deliver' && action !== 'refund')
      throw new HubtelValidationError(`resolveAttention(): action must be "deliver" or "refund"`, [
        { field: 'action', message: 'must be "deliver" or "refund"', value: action },
      ]);
    if (note !== undefined && typeof note !== 'string')
      throw new HubtelValidationError('resolveAttention(): note must be a string', [
        { field: 'note', message: 'must be a string' },
      ]);
    return structuredClone(await this.settlement.resolve(clientReference, action, note?.slice(0, 500)));
  }

  /** What this app knows of an invoice (status `pending`, `paid`, `failed`, `expired`, `attention`, `refunded`), for showing an order's state. */
  async getInvoice(clientReference: string): Promise<CheckoutInvoice | undefined> {
    if (typeof clientReference !== 'string' || clientReference === '') return undefined;
    const invoice = await this.invoices.get(clientReference);
    // A copy: the caller may change it; the stored record must not change with it.
    return invoice === undefined ? undefined : structuredClone(invoice);
  }

  /**
   * Handles one web callback body: validates it, verifies it against the invoice, records it and
   * schedules its event. Used by the module's controller; call it yourself when you mount the
   * route on your own (`callback: { disabled: true }`). Resolves once the callback is recorded:
   * acknowledge the platform only after that. `context.account`: the account whose route the
   * callback came on (default `default`); a callback for another account's invoice is refused
   * (`rejected`, reason `WRONG_ACCOUNT`, nothing emitted).
   *
   * @throws HubtelValidationError when the body is not a valid callback (nothing was recorded or emitted).
   * @throws HubtelShuttingDownError once the app shuts down (nothing was recorded or emitted): answer 503.
   */
  async handleCallback(
    body: unknown,
    context: { sourceAddress?: string; account?: string } = {},
  ): Promise<CheckoutCallbackResult> {
    this.pipeline.assertAcceptingInbound('checkout callback');
    const validation = validateCheckoutCallback(body);
    if (!validation.ok) {
      throw new HubtelValidationError(
        `Invalid checkout callback: ${validation.issues.map((i) => `${i.field} ${i.message}`).join('; ')}`,
        validation.issues,
      );
    }
    const callback = validation.value;
    const claim = classifyCallback(callback);
    const ref = callback.Data.ClientReference;
    if (claim === 'pending') {
      this.logger.debug?.(
        `Callback for ${ref} reports a non-final status (${callback.Data.Status}); ignored`,
      );
      return { outcome: 'ignored', clientReference: ref, claim };
    }

    // Read once: verified against here, and handed on (value and version) to the settlement.
    const entry = await this.invoices.getEntry(ref);
    const invoice = entry?.value;
    const routed = context.account ?? CHECKOUT_DEFAULT_ACCOUNT;
    if (invoice && invoiceAccount(invoice) !== routed) {
      // Another account's invoice: its path secret and allow-list were not the ones checked, and
      // its keys are not this route's. Nothing emitted (the answer stays the same 200).
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
    // A failed claim for an invoice already failed goes on: its event's job may never have been
    // queued (the earlier copy answered 503 after the invoice changed), and the submit asks again.
    if (
      invoice!.status === 'paid' ||
      (claim === 'failed' && invoice!.status !== 'pending' && invoice!.status !== 'failed')
    ) {
      this.logger.debug?.(
        `Duplicate ${claim} callback for ${ref} ignored: the invoice is already ${invoice!.status}`,
      );
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

  /**
   * Callbacks whose event handlers (or status-check confirmation) gave up after their retries,
   * oldest first. Each names the handlers that succeeded; see `replayDeadLetter`.
   */
  listDeadLetters(): Promise<DeadLetter[]> {
    return this.pipeline.listDeadLetters();
  }

  /**
   * Runs a dead letter again (by its `id` from `listDeadLetters`), now, once its cause is fixed:
   * only the handlers that failed run; those that succeeded do not run twice. Resolves once it is
   * queued. Should it fail again it is dead-lettered again.
   *
   * @throws HubtelDeadLetterNotFoundError (`HUBTEL_NOT_FOUND`) for an unknown or expired id.
   * @throws HubtelNotDeadLetterError (`HUBTEL_STORE_CONFLICT`) for a job that is not dead.
   */
  replayDeadLetter(id: string): Promise<void> {
    return this.pipeline.replayDeadLetter(id);
  }

  /**
   * Resolves when every event, confirmation and rejection started so far has been handled
   * (handlers included, retries too). For tests and orderly shutdown.
   */
  async drain(): Promise<void> {
    // A confirmation job submits its event before it settles, so pipeline.drain() sees that too.
    await this.pipeline.drain();
    await this.settlement.drain();
  }

  onApplicationShutdown(): void {
    // The default store is ours to close; a store the app provided is the app's.
    if (this.options.store === undefined && this.store.local) (this.store as MemoryStore).close();
  }

  /** Records again, from the app's own records, an invoice the store no longer holds. */
  private async restore(ref: string, known: CheckoutKnownInvoice): Promise<void> {
    const issues: ValidationIssue[] = [];
    const { amount, account: name, description, createdAt } = (known ?? {}) as Partial<CheckoutKnownInvoice>;
    if (typeof amount !== 'number' || !(amount > 0) || !Number.isSafeInteger(Math.round(amount * 100)))
      issues.push({
        field: 'known.amount',
        message: 'known.amount must be a positive number',
        value: amount,
      });
    if (name !== undefined && (typeof name !== 'string' || name === ''))
      issues.push({ field: 'known.account', message: 'known.account must be an account name' });
    if (description !== undefined && (typeof description !== 'string' || description.trim() === ''))
      issues.push({ field: 'known.description', message: 'known.description must be a non-empty string' });
    if (createdAt !== undefined && !(createdAt instanceof Date && Number.isFinite(createdAt.getTime())))
      issues.push({ field: 'known.createdAt', message: 'known.createdAt must be a valid Date' });
    if (issues.length > 0) {
      throw new HubtelValidationError(
        `Invalid reconcile input: ${issues.map((i) => i.message).join('; ')}`,
        issues,
      );
    }
    const account = await this.accounts.get(name ?? CHECKOUT_DEFAULT_ACCOUNT);
    if (await this.invoices.get(ref)) return; // the store's own record wins
    const created = createdAt?.getTime() ?? Date.now();
    const invoice: CheckoutInvoice = {
      clientReference: ref,
      amount: Math.round(amount! * 100) / 100,
      description: description?.trim() ?? `Restored order ${ref}`,
      status: 'pending',
      // The platform's checkout id was lost with the record: the status check finds out.
      creation: 'unknown',
      createdAt: new Date(created).toISOString(),
      updatedAt: new Date().toISOString(),
      account: account.name,
    };
    if (!(await this.invoices.create(invoice))) return;
    this.logger.log(
      `Invoice ${ref} recorded again from the app's own records (${invoice.amount.toFixed(2)}${account.name === CHECKOUT_DEFAULT_ACCOUNT ? '' : `, account ${account.name}`}): the store no longer had it`,
    );
    await this.watch(account, ref, created);
  }

  /**
   * The verdict on a reference the store does not hold while it is known to have lost its data
   * (within the time an invoice is watched): forgotten, not unknown. Undefined otherwise.
   */
  private async forgotten(ref: string): Promise<Verdict | undefined> {
    const loss = await this.store.lostData?.().catch(() => undefined);
    if (!loss || Date.now() - Date.parse(loss.detectedAt) > this.options.reconciliation.giveUpAfterMs) {
      return undefined;
    }
    return {
      ok: false,
      reason: 'FORGOTTEN_REFERENCE',
      message:
        `No invoice with clientReference "${ref}" is kept: the store lost its data (noticed at ${loss.detectedAt} on ${loss.where.join(', ')}), ` +
        `so this may be a genuine payment for an invoice created before. Nothing was delivered: if your own records hold this order, ` +
        `reconcile it: reconcile("${ref}", { amount })`,
    };
  }

  private async watch(account: CheckoutAccount, ref: string, createdAt: number): Promise<void> {
    // An account without a POS Sales ID has no status check: nothing to reconcile it with.
    if (!this.options.reconciliation.enabled || account.options.posSalesId === undefined) return;
    await this.invoices.watch(ref, createdAt, createdAt + this.options.reconciliation.delayMs);
  }
}
