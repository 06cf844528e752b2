import type { HttpService } from '@nestjs/axios';
import { Injectable } from '@nestjs/common';
import { HUBTEL_DEFAULT_ACCOUNT, HubtelConfigError, HubtelLogger } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  AccountRegistry,
  HttpTransport,
  InboundAccessPolicy,
  type HttpTransportConfig,
  type InboundAccount,
  type StatusCheckBudget,
  type HubtelDefaultAccount,
} from '#internal';
import {
  FulfillmentCallbackClient,
  PaymentStatusClient,
  type FulfillmentService,
} from './fulfillment/index.js';
import { ServiceAppUnknownAccountError } from './service-app.errors.js';
import { ServiceAppLogger } from './service-app.logger.js';
import { SERVICE_APP_SCOPE } from './service-app.constants.js';
import {
  SERVICE_APP_OPTIONS_RECIPE,
  type ResolvedServiceAppOptions,
  type ServiceAppModuleOptions,
} from './service-app.options.js';
import type { ServiceFlowService } from './flow/index.js';

/** One account, built once: its access policy, its transport (own keys, callback credentials), its flows. */
export interface ServiceAppAccount extends InboundAccount {
  readonly options: ResolvedServiceAppOptions;
  /** The account's status check (its key pair and POS Sales ID); undefined without `statusCheck`. */
  readonly status: PaymentStatusClient | undefined;
  /** Posts the fulfillment callback with the account's callback credentials. */
  readonly callback: FulfillmentCallbackClient;
  /** Whether its orders are confirmed with the status check before any handler runs. */
  readonly verifying: boolean;
  /** Answers the account's service-flow requests (its sessions record the account). */
  readonly flows: ServiceFlowService;
  /** A named account's own transport (the default account's is the module's provider). */
  readonly transport?: HttpTransport;
}

/** What `ServiceAppModule.forRoot` hands over: named accounts inherit from it. */
export interface ServiceAppDefaultAccount extends HubtelDefaultAccount<
  ServiceAppModuleOptions,
  ResolvedServiceAppOptions
> {
  access: InboundAccessPolicy;
  status: PaymentStatusClient | undefined;
  callback: FulfillmentCallbackClient;
  flows: ServiceFlowService;
  http: HttpService;
  budget: StatusCheckBudget;
}

/** The account's status check, when it has one (its key pair and POS Sales ID). */
export function paymentStatusClient(
  transport: HttpTransport,
  { statusCheck }: ResolvedServiceAppOptions,
  budget: StatusCheckBudget,
): PaymentStatusClient | undefined {
  return (
    statusCheck && new PaymentStatusClient(transport, statusCheck.posSalesId, statusCheck.timeoutMs, budget)
  );
}

/** The transport of one account: the callback receiver and the status check, with its own keys. */
export function serviceAppTransportConfig(
  options: ResolvedServiceAppOptions,
  loggerContext = 'HubtelServiceApp',
): HttpTransportConfig {
  const { statusCheck, callbackRetry: retry } = options;
  return {
    baseUrls: { fulfillment: options.callbackUrl, status: statusCheck?.url },
    credentials: { fulfillment: options.callbackCredentials, status: statusCheck?.credentials },
    timeoutMs: options.callbackTimeoutMs,
    // One attempt per call: the pipeline schedules the callback's retries up to its deadline.
    retry: { maxAttempts: 1, baseDelayMs: retry.baseDelayMs, maxDelayMs: retry.maxDelayMs },
    loggerContext,
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
      new ServiceAppLogger(),
    );
  }

  /** Called by forRoot's module; a second forRoot in one application does not replace the first. */
  attach(defaults: ServiceAppDefaultAccount): this {
    const { resolved: options, access, status, callback, flows } = defaults;
    flows.accountEngines ??= this;
    const verifying = options.verification.enabled && status !== undefined;
    return this.attachDefault({
      account: { name: HUBTEL_DEFAULT_ACCOUNT, access, options, status, callback, verifying, flows },
      build: (name, overrides) => buildAccount(defaults, name, overrides),
      ...(options.accounts ? { resolver: options.accounts } : {}),
    });
  }

  /** @internal Called by forRoot's FulfillmentService (what FulfillmentAccount calls). */
  attachFulfillment(service: FulfillmentService): void {
    this.service ??= service;
  }

  /** forRoot's FulfillmentService. */
  get fulfillment(): FulfillmentService {
    if (!this.service)
      throw new HubtelConfigError(
        SERVICE_APP_SCOPE,
        'needs ServiceAppModule.forRoot or ServiceAppModule.forRootAsync in the application',
      );
    return this.service;
  }
}

function buildAccount(
  defaults: ServiceAppDefaultAccount,
  name: string,
  overrides: unknown,
): ServiceAppAccount {
  const options = SERVICE_APP_OPTIONS_RECIPE.resolveAccount(name, defaults.options, overrides);
  const scope = `${SERVICE_APP_SCOPE}[${name}]`;
  const access = new InboundAccessPolicy(options.access, `${scope}.access.`);
  defaults.access.warnUnguarded(
    access,
    name,
    `its service-flow and fulfillment routes (/${name})`,
    HUBTEL_ENV.serviceAppPathSecret,
    new HubtelLogger(`HubtelServiceApp[${name}]`),
  );
  const config = serviceAppTransportConfig(options, `HubtelServiceApp[${name}]`);
  const transport = new HttpTransport(defaults.http, { ...config, telemetry: defaults.telemetry });
  const status = paymentStatusClient(transport, options, defaults.budget);
  return {
    name,
    access,
    options,
    status,
    callback: new FulfillmentCallbackClient(transport),
    verifying: options.verification.enabled && status !== undefined,
    flows: defaults.flows.forAccount(name, options, access),
    transport,
  };
}
