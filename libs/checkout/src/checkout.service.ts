import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { HubtelValidationError, MemoryStore, type DeadLetter, type HubtelStore } from 'nestjs-hubtel';
import type { InboundPipeline } from '#internal';
import { CheckoutCallbackHandler, type CheckoutCallbackResult } from './callbacks/callback.handler.js';
import { CheckoutSettlement } from './callbacks/payment.settlement.js';
import { statusOf, type CheckoutAccounts } from './checkout.accounts.js';
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
 * What CheckoutService does for one account (`checkout.forAccount('north')`, `@InjectCheckout('north')`):
 * its invoices are confirmed, reconciled and called back on its own keys, POS Sales ID and path.
 * What concerns an existing invoice is on CheckoutService: an invoice knows its account.
 */
export type CheckoutAccountService = Pick<CheckoutService, 'account' | 'createInvoice' | 'getStatus'>;

/** Online checkout. Outcomes arrive as events (`@OnCheckoutPaid()`...), once verified, exactly once. */
@Injectable()
export class CheckoutService implements OnApplicationShutdown {
  private readonly issuer: CheckoutInvoiceIssuer;
  private readonly callbacks: CheckoutCallbackHandler;
  /** The account's name: `default` (the one `forRoot` configures) for CheckoutService itself. */
  readonly account: string = CHECKOUT_DEFAULT_ACCOUNT;

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
    accounts.bind((account, input) => this.issuer.create(account, input));
  }

  /** The same methods, bound to account `name`; an unknown one rejects (CheckoutUnknownAccountError). */
  forAccount(name: string): CheckoutAccountService {
    return name === CHECKOUT_DEFAULT_ACCOUNT ? this : this.accounts.service(name);
  }

  /**
   * Creates an invoice (recorded pending, then sent): send the payer to the returned `checkoutUrl`.
   * @throws HubtelValidationError (nothing sent), `HUBTEL_STORE_CONFLICT` (reference taken),
   *   HubtelApiError (refused), CheckoutUnknownOutcomeError (no answer: not retried).
   */
  createInvoice(input: CreateInvoiceInput): Promise<CheckoutInvoiceCreated> {
    return this.issuer.create(this.accounts.default, input);
  }

  /** The platform's transaction status of an invoice (needs `posSalesId`); `HUBTEL_NOT_FOUND` if none. */
  getStatus(clientReference: string): Promise<CheckoutTransactionStatus> {
    return statusOf(this.accounts.default, clientReference);
  }

  /**
   * Checks one invoice now and settles what the status check says, exactly once however many race
   * (needs `posSalesId`). `known`: your record of an invoice the store lost, recorded again first.
   * @throws HubtelValidationError, `HUBTEL_NOT_FOUND`, CheckoutUnknownAccountError,
   *   `HUBTEL_CONFIG_INVALID` (no `posSalesId`), or the status check's errors (nothing changed).
   */
  async reconcile(clientReference: string, known?: CheckoutKnownInvoice): Promise<CheckoutReconcileResult> {
    assertClientReference(clientReference, 'reconcile');
    if (known !== undefined) await this.issuer.restore(clientReference, known);
    const result = await this.reconciler.checkInvoice(clientReference);
    // A copy: the caller may change it; the stored record must not change with it.
    return { ...result, invoice: structuredClone(result.invoice) };
  }

  /**
   * Resolves an invoice in `attention`: `deliver` accepts it (`paid` runs once), `refund` records that
   * you refunded it in Hubtel's dashboard (final). Resolving again the same way is a no-op.
   * @throws `HUBTEL_NOT_FOUND`; `HUBTEL_STORE_CONFLICT` when not in attention or resolved otherwise.
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

  /** What this app knows of an invoice (its status and record), for showing an order's state. */
  async getInvoice(clientReference: string): Promise<CheckoutInvoice | undefined> {
    if (typeof clientReference !== 'string' || clientReference === '') return undefined;
    const invoice = await this.invoices.get(clientReference);
    return invoice === undefined ? undefined : structuredClone(invoice);
  }

  /**
   * Handles one callback body (yours with `callback: { disabled: true }`): acknowledge once it
   * resolves. `context.account`: the route's account (another's invoice: `WRONG_ACCOUNT`).
   * @throws HubtelValidationError (invalid), HubtelShuttingDownError (answer 503): nothing recorded.
   */
  handleCallback(
    body: unknown,
    context: { sourceAddress?: string; account?: string } = {},
  ): Promise<CheckoutCallbackResult> {
    return this.callbacks.handle(body, context);
  }

  /** Jobs whose handlers (or confirmation) gave up after their retries, oldest first. */
  listDeadLetters(): Promise<DeadLetter[]> {
    return this.pipeline.listDeadLetters();
  }

  /**
   * Runs a dead letter again once its cause is fixed: only the handlers that failed run.
   * @throws HubtelDeadLetterNotFoundError (unknown or expired id), HubtelNotDeadLetterError (not dead).
   */
  replayDeadLetter(id: string): Promise<void> {
    return this.pipeline.replayDeadLetter(id);
  }

  /** Resolves when every event, confirmation and rejection started so far is handled (retries too). */
  async drain(): Promise<void> {
    // A confirmation job submits its event before it settles, so pipeline.drain() sees that too.
    await this.pipeline.drain();
    await this.pipeline.drainAlerts();
  }

  onApplicationShutdown(): void {
    // The default store is ours to close; a store the app provided is the app's.
    if (this.options.store === undefined && this.store.local) (this.store as MemoryStore).close();
  }
}
