import type { RequestListener, Server } from 'node:http';
import { HubtelConfigError } from 'nestjs-hubtel';
import { checkPayment, SandboxPaymentMoneyDto } from './admin.dto.js';
import { registerAdminApi } from './admin.api.js';
import { registerSandboxDashboard, SANDBOX_DASHBOARD_PATH } from './dashboard/dashboard.stream.js';
import { registerCheckoutApi } from './checkout.api.js';
import { SandboxNotFoundError } from './sandbox.errors.js';
import type { SandboxFaults } from './sandbox.faults.js';
import { accountView } from './sandbox.accounts.js';
import {
  cancelInvoice,
  payInvoice,
  refundInvoice,
  requireInvoice,
  type PayOptions,
  type PaymentResult,
} from './checkout.payments.js';
import { closeHttp, listenHttp, serverOrigin } from './sandbox.listener.js';
import { handleRequest } from './sandbox.request-handler.js';
import { SandboxRouter } from './sandbox.router.js';
import { registerFulfillmentCallbackApi } from './fulfillment-callback.api.js';
import { SandboxServiceSession } from './service-app.driver.js';
import type { ServiceAppDriverOptions } from './service-app.driver-types.js';
import { recordServicePayment, type RecordServicePaymentOptions } from './service-app.payments.js';
import { registerSmsApi } from './sms.api.js';
import { resolveSandboxOptions, type ResolvedSandboxOptions } from './sandbox.options.js';
import { SandboxRecords } from './sandbox.records.js';
import type { SandboxDelivery, SandboxInvoice, SandboxSession } from './sandbox.types.js';
import type { SandboxApi, SandboxRouteHandler } from './sandbox.route-types.js';
import type {
  HubtelSandboxOptions,
  SandboxAccount,
  SandboxBaseUrls,
  SandboxChargeBearer,
  SandboxCredentialPair,
} from './sandbox.option-types.js';

/**
 * A local stand-in for the Hubtel platform on its own port (SMS, checkout with a payment page and
 * callbacks, the status check, programmable services), with fault injection and records.
 *
 * ```ts
 * const sandbox = await HubtelSandbox.start();          // 127.0.0.1, random port
 * SmsModule.forRoot({ baseUrl: sandbox.baseUrls().sms, ...sandbox.credentials.sms });
 * // ...
 * await sandbox.stop();
 * ```
 *
 * Events (`sandbox.on(...)`): a record is emitted when created and on every change; listener
 * errors are logged, never thrown into the request that caused them.
 */
export class HubtelSandbox extends SandboxRecords {
  static async start(options: HubtelSandboxOptions = {}): Promise<HubtelSandbox> {
    return new HubtelSandbox(options).listen();
  }

  /** Fault injection on requests it receives (`add`) and callbacks it sends (`addCallback`). */
  readonly faults: SandboxFaults;

  private readonly options: ResolvedSandboxOptions;
  private readonly router = new SandboxRouter();
  private httpServer: Server | undefined;
  private listening: Promise<this> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: HubtelSandboxOptions = {}) {
    const resolved = resolveSandboxOptions(options);
    super(resolved);
    this.options = resolved;
    this.faults = this.state.faults;
    registerSmsApi(this.router, this.state);
    registerCheckoutApi(this.router, this.state);
    registerFulfillmentCallbackApi(this.router, this.state);
    registerAdminApi(this.router, this);
    if (this.options.dashboard) registerSandboxDashboard(this);
  }

  /** Starts listening (once; later calls return the same promise). */
  listen(): Promise<this> {
    const { host, port, publicUrl, logger } = this.options;
    const onRequest: RequestListener = (req, res) => void handleRequest(this.state, this.router, req, res);
    this.listening ??= listenHttp(host, port, onRequest).then(
      (server) => {
        this.httpServer = server;
        this.state.baseUrl = publicUrl ?? serverOrigin(server, host);
        logger?.log(`Hubtel sandbox listening on ${this.state.baseUrl}`);
        return this;
      },
      (err: unknown) => {
        this.listening = undefined;
        throw err;
      },
    );
    return this.listening;
  }

  /** Stops: delayed callbacks are not sent, pending `waitFor`s reject, open connections close. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.state.shutdown();
      if (this.httpServer) await closeHttp(this.httpServer);
      this.httpServer = undefined;
    })();
    return this.stopping;
  }

  /** Forgets every record and fault and zeroes the counters; delayed callbacks are not sent. */
  reset(): void {
    this.state.cancelPending();
    this.state.faults.clear();
    this.state.clearRecords();
    this.state.emit('reset');
  }

  /** Resolves once no callback is in flight or waiting for a delay. */
  settled(): Promise<void> {
    return this.state.settled();
  }

  /** The sandbox's origin (`http://127.0.0.1:4010`, or `publicUrl`). Throws before `listen()`. */
  get url(): string {
    if (!this.state.baseUrl)
      throw new HubtelConfigError(
        'url',
        'the sandbox is not listening yet; await listen() or HubtelSandbox.start()',
      );
    return this.state.baseUrl;
  }

  /** The port it listens on (0 before `listen()`). */
  get port(): number {
    const address = this.httpServer?.address();
    return address && typeof address === 'object' ? address.port : 0;
  }

  /** The underlying node:http server (undefined until listening). */
  get server(): Server | undefined {
    return this.httpServer;
  }

  /** The base URLs to give the modules: every one is the sandbox's origin. */
  baseUrls(): SandboxBaseUrls {
    const url = this.url;
    return { sms: url, checkout: url, status: url, fulfillmentCallback: url };
  }

  /** The dashboard page (`<url>/_dashboard`), unless `dashboard: false`. Throws before `listen()`. */
  get dashboardUrl(): string | undefined {
    return this.options.dashboard ? `${this.url}${SANDBOX_DASHBOARD_PATH}` : undefined;
  }

  /** The credential pairs it accepts (copies): the default account's (`account(name)` for another's). */
  get credentials(): { sms: SandboxCredentialPair; api: SandboxCredentialPair } {
    const { sms, api } = this.state.accounts.default.credentials;
    return { sms: { ...sms }, api: { ...api } };
  }

  /** The default account's POS Sales ID. */
  get posSalesId(): string {
    return this.options.posSalesId;
  }

  /** Every account it serves (copies), the default one (`default`) first. */
  accounts(): SandboxAccount[] {
    return this.state.accounts.all.map(accountView);
  }

  /** One account (a copy), default the default one; an unknown name throws SandboxNotFoundError. */
  account(name: string = this.state.accounts.default.name): SandboxAccount {
    return accountView(this.state.accounts.require(name));
  }

  /** Who bears the charge on the account's payments from now on (a payment may still say otherwise). */
  setChargeBearer(
    chargeBearer: SandboxChargeBearer,
    account: string = this.state.accounts.default.name,
  ): void {
    checkPayment(SandboxPaymentMoneyDto, { chargeBearer });
    this.state.accounts.require(account).chargeBearer = chargeBearer;
  }

  /** Pays (or fails) an invoice as the hosted page would; resolves once its callback was answered. */
  async pay(checkoutIdOrReference: string, options: PayOptions = {}): Promise<PaymentResult> {
    return payInvoice(this.state, requireInvoice(this.state, checkoutIdOrReference), options);
  }

  /** Cancels an invoice as the payer would on the hosted page: no callback (the platform sends none). */
  cancel(checkoutIdOrReference: string): SandboxInvoice {
    return cancelInvoice(this.state, requireInvoice(this.state, checkoutIdOrReference));
  }

  /** Marks a paid invoice refunded (the status check answers `Refunded`). */
  refund(checkoutIdOrReference: string): SandboxInvoice {
    return refundInvoice(this.state, requireInvoice(this.state, checkoutIdOrReference));
  }

  /** Sends a recorded delivery again, unchanged and without faults; resolves once answered. */
  async redeliver(deliveryId: string): Promise<SandboxDelivery> {
    const original = this.state.deliveries.get(deliveryId);
    if (!original) throw new SandboxNotFoundError('delivery', deliveryId);
    return this.state.redeliver(original);
  }

  /** Records a session's payment, sending nothing: the status check (by SessionId) then answers Paid. */
  recordServicePayment(sessionId: string, options: RecordServicePaymentOptions = {}): SandboxSession {
    return recordServicePayment(this.state, sessionId, options);
  }

  /** A driver playing the platform's client app against a service application. */
  serviceApp(serviceAppUrl: string, options: ServiceAppDriverOptions = {}): SandboxServiceSession {
    return new SandboxServiceSession(this.state, serviceAppUrl, options);
  }

  /**
   * Adds a route (built-in ones match first); `api` decides the error shape and which faults apply
   * (default `admin`: only faults that name it).
   */
  addRoute(
    method: string,
    path: string,
    handler: SandboxRouteHandler,
    options: { api?: SandboxApi } = {},
  ): void {
    this.router.add(method, path, options.api ?? 'admin', handler);
  }
}
