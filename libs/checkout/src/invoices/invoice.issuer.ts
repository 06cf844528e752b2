import {
  HubtelError,
  HubtelLogger,
  HubtelUnknownOutcomeError,
  HubtelValidationError,
  type ValidationIssue,
} from 'nestjs-hubtel';
import { dropUndefined } from '#internal';
import type { CheckoutAccount, CheckoutAccountSource } from '../checkout.accounts.js';
import { CHECKOUT_DEFAULT_ACCOUNT } from '../checkout.constants.js';
import { CheckoutUnknownOutcomeError } from '../checkout.errors.js';
import type { ResolvedCheckoutOptions } from '../checkout.options.js';
import type { CheckoutInvoiceCreated, CreateInvoiceInput } from './invoice.dto.js';
import { buildInitiateBody } from './invoice.request.js';
import { changeInvoice, type CheckoutInvoice, type CheckoutInvoiceStore } from './invoice.store.js';

/** Your own record of an invoice, for `reconcile(ref, known)` when the store lost it. */
export interface CheckoutKnownInvoice {
  /** The amount invoiced (GHS): the payment is verified against it. */
  amount: number;
  /** The account that created it. Default `default`. */
  account?: string;
  /** Default `Restored order <clientReference>`. */
  description?: string;
  /** When it was created (default now): the reconciler's schedule counts from it. */
  createdAt?: Date;
}

/** Records invoices (created, or restored by `reconcile`) and puts them on the reconciler's watch list. */
export class CheckoutInvoiceIssuer {
  private readonly logger = new HubtelLogger('HubtelCheckout');

  constructor(
    private readonly options: ResolvedCheckoutOptions,
    private readonly invoices: CheckoutInvoiceStore,
    private readonly accounts: CheckoutAccountSource,
  ) {}

  async create(account: CheckoutAccount, input: CreateInvoiceInput): Promise<CheckoutInvoiceCreated> {
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
    // Recorded before sending: a callback is verified against it, and an unanswered one stays checkable.
    if (!(await this.invoices.create(invoice)))
      throw new HubtelError(
        'HUBTEL_STORE_CONFLICT',
        `An invoice with clientReference "${ref}" already exists; use a new reference for a new invoice`,
      );
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
    const { checkoutId, checkoutUrl, checkoutDirectUrl } = created;
    await this.invoices.update(ref, (current) =>
      changeInvoice(current, { creation: 'created', checkoutId, checkoutUrl, checkoutDirectUrl }),
    );
    await this.watch(account, ref, createdAt);
    this.logger.log(
      `Invoice ${ref} created (${body.totalAmount.toFixed(2)}, checkout ${created.checkoutId}${accountNote(account)})`,
    );
    return { ...created, clientReference: ref };
  }

  /** Records again, from the app's own records, an invoice the store no longer holds. */
  async restore(ref: string, known: CheckoutKnownInvoice): Promise<void> {
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
    if (issues.length > 0)
      throw new HubtelValidationError(
        `Invalid reconcile input: ${issues.map((i) => i.message).join('; ')}`,
        issues,
      );
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
      `Invoice ${ref} recorded again from the app's own records (${invoice.amount.toFixed(2)}${accountNote(account)}): the store no longer had it`,
    );
    await this.watch(account, ref, created);
  }

  private async watch(account: CheckoutAccount, ref: string, createdAt: number): Promise<void> {
    // An account without a POS Sales ID has no status check: nothing to reconcile it with.
    if (!this.options.reconciliation.enabled || account.options.posSalesId === undefined) return;
    await this.invoices.watch(ref, createdAt, createdAt + this.options.reconciliation.delayMs);
  }
}

function accountNote(account: CheckoutAccount): string {
  return account.name === CHECKOUT_DEFAULT_ACCOUNT ? '' : `, account ${account.name}`;
}
