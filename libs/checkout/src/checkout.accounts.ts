import type { HttpService } from '@nestjs/axios';
import { Injectable } from '@nestjs/common';
import { HubtelLogger } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  AccountRegistry,
  createHttpTransport,
  InboundAccessPolicy,
  type HttpTransport,
  type InboundAccount,
  type StatusCheckBudget,
  type HttpTransportConfig,
  type HubtelDefaultAccount,
} from '#internal';
import { CheckoutApiClient } from './invoices/invoice.client.js';
import { invoiceAccount, type CheckoutInvoice } from './invoices/invoice.store.js';
import { CheckoutVerifier } from './callbacks/callback.verifier.js';
import { CHECKOUT_DEFAULT_ACCOUNT, checkoutLoggerContext } from './checkout.constants.js';
import { CheckoutUnknownAccountError } from './checkout.errors.js';
import {
  type CheckoutModuleOptions,
  type CheckoutRouteInfo,
  type ResolvedCheckoutOptions,
} from './checkout.options.js';
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
  /** A named account's own transport (the default account's is the module's provider). */
  readonly transport?: HttpTransport;
}

/** How the confirmation and the reconciler find the account of an invoice. */
export interface CheckoutAccountSource {
  get(name: string): Promise<CheckoutAccount>;
  forInvoice(invoice: Pick<CheckoutInvoice, 'account'>): Promise<CheckoutAccount>;
}

/**
 * What CheckoutService does for one account (`checkout.forAccount('north')`, `@InjectCheckout('north')`):
 * its invoices are confirmed, reconciled and called back on its own keys, POS Sales ID and path.
 * What concerns an existing invoice is on CheckoutService: an invoice knows its account.
 */
export interface CheckoutAccountService {
  /** The account's name (`default` for CheckoutService's own). */
  readonly account: string;
  /** As `CheckoutService.createInvoice`, with this account's keys, POS Sales ID and defaults. */
  createInvoice(input: CreateInvoiceInput): Promise<CheckoutInvoiceCreated>;
  /** As `CheckoutService.getStatus`, on this account's POS Sales ID, with its keys. */
  getStatus(clientReference: string): Promise<CheckoutTransactionStatus>;
}

/** What the bound services call: CheckoutService's work for a given account. */
export interface CheckoutAccountOperations {
  createInvoiceFor(account: CheckoutAccount, input: CreateInvoiceInput): Promise<CheckoutInvoiceCreated>;
  getStatusFor(account: CheckoutAccount, clientReference: string): Promise<CheckoutTransactionStatus>;
}

/** What `CheckoutModule.forRoot` hands over (named accounts inherit from it). */
export interface CheckoutDefaultAccount extends HubtelDefaultAccount<
  CheckoutModuleOptions,
  ResolvedCheckoutOptions
> {
  route: CheckoutRouteInfo;
  access: InboundAccessPolicy;
  transport: HttpTransport;
  http: HttpService;
  /** The instance's status-check budget: shared by every account. */
  budget: StatusCheckBudget;
}

/** forRoot's account, on the module's transport and access policy. */
export function defaultCheckoutAccount(d: CheckoutDefaultAccount): CheckoutAccount {
  const { resolved: options, access, budget } = d;
  // The instance's budget (shared with ServiceAppModule): this module's option only lowers it.
  budget.configure(options.statusCheckBudget.perMinute);
  const api = new CheckoutApiClient(d.transport, options.posSalesId, budget);
  return {
    name: CHECKOUT_DEFAULT_ACCOUNT,
    options,
    api,
    verifier: new CheckoutVerifier(options.verification),
    access,
  };
}

/** Account `name`: its own transport (its own Basic auth, never another account's) and POS Sales ID. */
export function namedCheckoutAccount(
  d: CheckoutDefaultAccount,
  name: string,
  options: ResolvedCheckoutOptions,
): CheckoutAccount {
  const access = new InboundAccessPolicy(options.access, `checkout[${name}].access.`);
  if (!d.route.disabled)
    d.access.warnUnguarded(
      access,
      name,
      `POST /${d.route.path}/${name}`,
      HUBTEL_ENV.checkoutPathSecret,
      new HubtelLogger(checkoutLoggerContext(name)),
    );
  const config = checkoutTransportConfig(options, checkoutLoggerContext(name));
  const transport = createHttpTransport(d.http, { ...config, telemetry: d.telemetry });
  return {
    name,
    options,
    api: new CheckoutApiClient(transport, options.posSalesId, d.budget, `checkout[${name}]`),
    verifier: new CheckoutVerifier(options.verification),
    access,
    transport,
  };
}

/** The application's checkout accounts (core's AccountRegistry). */
@Injectable()
export class CheckoutAccounts extends AccountRegistry<CheckoutAccount> implements CheckoutAccountSource {
  private operations?: CheckoutAccountOperations;

  constructor() {
    super(
      'checkout',
      'CheckoutModule.forRoot',
      (...args) => new CheckoutUnknownAccountError(...args),
      new HubtelLogger('HubtelCheckout'),
    );
  }

  /** Called by CheckoutService: the work the bound services do. */
  bind(operations: CheckoutAccountOperations): void {
    this.operations ??= operations;
  }

  /** A service bound to `name`; its calls find the account first (and reject when there is none). */
  service(name: string): CheckoutAccountService {
    // CheckoutService binds itself when it is made, before anything can call a bound service.
    return {
      account: name,
      createInvoice: async (input) => this.operations!.createInvoiceFor(await this.get(name), input),
      getStatus: async (reference) => this.operations!.getStatusFor(await this.get(name), reference),
    };
  }

  /** The account of an invoice (its `account`, or `default` for records older than accounts). */
  forInvoice(invoice: Pick<CheckoutInvoice, 'account'>): Promise<CheckoutAccount> {
    return this.get(invoiceAccount(invoice));
  }
}

/** The transport of one account: the checkout API and the status check share its API key pair. */
export function checkoutTransportConfig(
  { baseUrls: { checkout, status }, credentials, http }: ResolvedCheckoutOptions,
  loggerContext = 'HubtelCheckout',
): HttpTransportConfig {
  return {
    baseUrls: { checkout, status },
    credentials: { checkout: credentials, status: credentials },
    ...http,
    loggerContext,
  };
}
