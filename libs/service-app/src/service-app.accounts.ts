import { Injectable } from '@nestjs/common';
import { HUBTEL_DEFAULT_ACCOUNT, HubtelConfigError, HubtelLogger } from 'nestjs-hubtel';
import {
  AccountRegistry,
  requestTransactionStatus,
  type HttpTransportConfig,
  type HubtelAccountParts,
  type HubtelDefaultAccount,
  type InboundAccount,
} from '#internal';
import type { FulfillmentAccountView, FulfillmentService } from './fulfillment/index.js';
import { ServiceAppUnknownAccountError } from './service-app.errors.js';
import { SERVICE_APP_SCOPE } from './service-app.constants.js';
import type { ResolvedServiceAppOptions } from './service-app.options.js';
import type { ServiceFlowService } from './flow/index.js';

/** One account, built once: its access policy, its transport (own keys, callback credentials), its flows. */
export interface ServiceAppAccount extends InboundAccount, FulfillmentAccountView {
  /** Answers the account's service-flow requests (its sessions record the account). */
  readonly flows: ServiceFlowService;
}

/** What `ServiceAppModule.forRoot` hands over (named accounts inherit from it). */
export interface ServiceAppDefaultAccount extends HubtelDefaultAccount<ResolvedServiceAppOptions> {
  flows: ServiceFlowService;
}

/** The transport of one account: the callback receiver and the status check, with its own keys. */
export function serviceAppTransportConfig(options: ResolvedServiceAppOptions): HttpTransportConfig {
  const { statusCheck, callbackRetry: retry } = options;
  return {
    baseUrls: { fulfillment: options.callbackUrl, status: statusCheck?.url },
    credentials: { fulfillment: options.callbackCredentials, status: statusCheck?.credentials },
    timeoutMs: options.callbackTimeoutMs,
    // One attempt per call: the pipeline schedules the callback's retries up to its deadline.
    retry: { maxAttempts: 1, baseDelayMs: retry.baseDelayMs, maxDelayMs: retry.maxDelayMs },
  };
}

/** The application's service-app accounts (core's AccountRegistry), read by routing (`routeInbound`). */
@Injectable()
export class ServiceAppAccounts extends AccountRegistry<ServiceAppAccount> {
  private service?: FulfillmentService;

  constructor() {
    super(
      SERVICE_APP_SCOPE,
      'ServiceAppModule.forRoot',
      (...args) => new ServiceAppUnknownAccountError(...args),
      new HubtelLogger('HubtelServiceApp'),
    );
  }

  /** @internal Called by forRoot's FulfillmentService (what FulfillmentAccount calls). */
  attachFulfillment(service: FulfillmentService): void {
    this.service ??= service;
  }

  get fulfillment(): FulfillmentService {
    if (!this.service)
      throw new HubtelConfigError(
        SERVICE_APP_SCOPE,
        'needs ServiceAppModule.forRoot or ServiceAppModule.forRootAsync in the application',
      );
    return this.service;
  }
}

/** Account `name`: its status check, callback credentials and flows (forRoot's flows: the module's). */
export function serviceAppAccount(
  d: ServiceAppDefaultAccount,
  name: string,
  options: ResolvedServiceAppOptions,
  own: HubtelAccountParts,
): ServiceAppAccount {
  // The instance's budget (shared with CheckoutModule), set even without a status check here.
  own.budget.configure(options.statusCheckBudget.perMinute);
  const { access, transport, budget } = own;
  const check = options.statusCheck;
  // A programmable-services order's payment: its `clientReference` is the SessionId.
  const checkPayment =
    check &&
    ((sessionId: string) =>
      requestTransactionStatus(transport, {
        posSalesId: check.posSalesId,
        clientReference: sessionId,
        operation: 'serviceApp.paymentStatus',
        timeoutMs: check.timeoutMs,
        budget,
      }));
  const flows = name === HUBTEL_DEFAULT_ACCOUNT ? d.flows : d.flows.forAccount(name, options, access);
  const verifying = options.verification.enabled && checkPayment !== undefined;
  return { name, options, checkPayment, verifying, flows, access, transport };
}
