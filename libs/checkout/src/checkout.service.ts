import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { HubtelValidationError, MemoryStore, type DeadLetter, type HubtelStore } from 'nestjs-hubtel';
import type { InboundPipeline } from '#internal';
import { CheckoutCallbackHandler, type CheckoutCallbackResult } from './callbacks/callback.handler.js';
import { CheckoutSettlement } from './callbacks/payment.settlement.js';
import type {
  CheckoutAccount,
  CheckoutAccountOperations,
  CheckoutAccounts,
  CheckoutAccountService,
} from './checkout.accounts.js';
import {
  CHECKOUT_ACCOUNTS,
  CHECKOUT_DEFAULT_ACCOUNT,
  CHECKOUT_PIPELINE,
  CHECKOUT_RESOLVED_OPTIONS,
  CHECKOUT_STORE,
} from './checkout.constants.js';
import type { ResolvedCheckoutOptions } from './checkout.options.js';
import type {
  CheckoutInvoiceCreated,
  CheckoutTransactionStatus,
  CreateInvoiceInput,
} from './invoices/invoice.dto.js';
import { CheckoutInvoiceIssuer, type CheckoutKnownInvoice } from './invoices/invoice.issuer.js';
import { assertClientReference } from './invoices/invoice.request.js';
import { CheckoutInvoiceStore, type CheckoutInvoice } from './invoices/invoice.store.js';
import { CheckoutReconciler, type CheckoutReconcileResult } from './reconciliation/invoice.reconciler.js';

/** How an invoice that needs attention is resolved (`CheckoutService.resolveAttention`). */
export type CheckoutAttentionResolution = 'deliver' | 'refund';

/**
 * Online checkout: create invoices, look up payment status, read what the module knows of an
 * invoice. Outcomes arrive as events (`@OnCheckoutPaid()` ...), never as return values: a payment
 * is only believed once verified, and its event runs exactly once.
 */
@Injectable()
export class CheckoutService implements OnApplicationShutdown, CheckoutAccountService {
  private readonly issuer: CheckoutInvoiceIssuer;
  private readonly callbacks: CheckoutCallbackHandler;
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
    this.issuer = new CheckoutInvoiceIssuer(options, invoices, accounts);
    this.callbacks = new CheckoutCallbackHandler(options, pipeline, store, invoices, accounts, settlement);
    const operations: CheckoutAccountOperations = {
      createInvoiceFor: (account, input) => this.issuer.create(account, input),
      getStatusFor: (account, ref) => this.getStatusFor(account, ref),
    };
    accounts.bind(operations);
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
    return this.issuer.create(this.accounts.default, input);
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
    if (known !== undefined) await this.issuer.restore(clientReference, known);
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
  handleCallback(
    body: unknown,
    context: { sourceAddress?: string; account?: string } = {},
  ): Promise<CheckoutCallbackResult> {
    return this.callbacks.handle(body, context);
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
}
