import { Injectable } from '@nestjs/common';
import { HubtelLogger } from 'nestjs-hubtel';
import {
  AccountRegistry,
  type HttpTransport,
  type HttpTransportConfig,
  type HubtelAccountParts,
  type InboundAccount,
} from '#internal';
import { CheckoutApiClient } from './invoices/invoice.client.js';
import { invoiceAccount, type CheckoutInvoice } from './invoices/invoice.store.js';
import { CheckoutVerifier } from './callbacks/callback.verifier.js';
import { CHECKOUT_DEFAULT_ACCOUNT } from './checkout.constants.js';
import { CheckoutUnknownAccountError } from './checkout.errors.js';
import { assertClientReference } from './invoices/invoice.request.js';
import type { ResolvedCheckoutOptions } from './checkout.options.js';
import type {
  CheckoutInvoiceCreated,
  CheckoutTransactionStatus,
  CreateInvoiceInput,
} from './invoices/invoice.dto.js';

/** One checkout account, built once: its transport (keys), API client (POS Sales ID), verifier, access. */
export interface CheckoutAccount extends InboundAccount {
  readonly options: ResolvedCheckoutOptions;
  readonly api: CheckoutApiClient;
  readonly verifier: CheckoutVerifier;
  readonly transport: HttpTransport;
}

/** How the confirmation and the reconciler find the account of an invoice. */
export type CheckoutAccountSource = Pick<CheckoutAccounts, 'get' | 'forInvoice'>;

/** An invoice's transaction status, on its account's POS Sales ID (`getStatus`). */
export async function statusOf(account: CheckoutAccount, ref: string): Promise<CheckoutTransactionStatus> {
  assertClientReference(ref, 'getStatus');
  return account.api.status(ref);
}

/** Account `name` (forRoot's is `default`): its API client on its own keys and POS Sales ID. */
export function checkoutAccount(
  _: unknown,
  name: string,
  options: ResolvedCheckoutOptions,
  own: HubtelAccountParts,
): CheckoutAccount {
  // The instance's budget (shared with ServiceAppModule): this module's option only lowers it.
  own.budget.configure(options.statusCheckBudget.perMinute);
  const scope = name === CHECKOUT_DEFAULT_ACCOUNT ? 'checkout' : `checkout[${name}]`;
  const api = new CheckoutApiClient(own.transport, options.posSalesId, own.budget, scope);
  const { access, transport } = own;
  return { name, options, api, verifier: new CheckoutVerifier(options.verification), access, transport };
}

@Injectable()
export class CheckoutAccounts extends AccountRegistry<CheckoutAccount> {
  private createInvoiceFor?: (
    account: CheckoutAccount,
    input: CreateInvoiceInput,
  ) => Promise<CheckoutInvoiceCreated>;

  constructor() {
    super(
      'checkout',
      'CheckoutModule.forRoot',
      (...args) => new CheckoutUnknownAccountError(...args),
      new HubtelLogger('HubtelCheckout'),
    );
  }

  /** Called by CheckoutService: how the bound services create invoices (its issuer). */
  bind(createInvoiceFor: CheckoutAccounts['createInvoiceFor']): void {
    this.createInvoiceFor ??= createInvoiceFor;
  }

  /** A service bound to `name`; its calls find the account first (and reject when there is none). */
  service(name: string) {
    // CheckoutService binds itself when it is made, before anything can call a bound service.
    return {
      account: name,
      createInvoice: async (input: CreateInvoiceInput) => this.createInvoiceFor!(await this.get(name), input),
      getStatus: async (reference: string) => statusOf(await this.get(name), reference),
    };
  }

  /** The account of an invoice (its `account`, or `default` for records older than accounts). */
  forInvoice(invoice: Pick<CheckoutInvoice, 'account'>): Promise<CheckoutAccount> {
    return this.get(invoiceAccount(invoice));
  }
}

/** The transport of one account: the checkout API and the status check share its API key pair. */
export function checkoutTransportConfig(options: ResolvedCheckoutOptions): HttpTransportConfig {
  const { baseUrls, credentials, http } = options;
  return { baseUrls, credentials: { checkout: credentials, status: credentials }, ...http };
}
