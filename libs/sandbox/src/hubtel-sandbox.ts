import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HubtelConfigError } from 'nestjs-hubtel';
import { registerAdminApi } from './sandbox-admin.api.js';
import { registerSandboxDashboard, SANDBOX_DASHBOARD_PATH } from './dashboard/sandbox-dashboard.js';
import { registerCheckoutApi } from './sandbox-checkout.api.js';
import {
  apiErrorReply,
  forbiddenHtmlPage,
  SandboxHttpError,
  SandboxNotFoundError,
} from './sandbox.errors.js';
import type { CallbackFaultSpec, FaultHandle, InboundFaultSpec, SandboxFaults } from './sandbox-faults.js';
import {
  basicAuthHeader,
  hostNameOf,
  isAllowedHost,
  isoNow,
  parseBasicAuth,
  platformMsisdn,
  platformTime,
  writeReply,
} from './sandbox-http.js';
import {
  cancelInvoice,
  findInvoice,
  payInvoice,
  refundInvoice,
  requireInvoice,
  type PayOptions,
  type PaymentResult,
} from './sandbox-payments.js';
import { RequestContext, SandboxRouter } from './sandbox.router.js';
import {
  recordServicePayment,
  registerFulfillmentCallbackApi,
  SandboxServiceSession,
  type RecordServicePaymentOptions,
  type ServiceAppDriverOptions,
} from './sandbox-service-app.js';
import { registerSmsApi, settleMessage } from './sandbox-sms.api.js';
import { resolveSandboxOptions, SandboxState, type ResolvedSandboxOptions } from './sandbox.state.js';
import type {
  HubtelSandboxOptions,
  SandboxApi,
  SandboxBaseUrls,
  SandboxCredentialPair,
  SandboxDelivery,
  SandboxEventMap,
  SandboxFulfillmentCallback,
  SandboxInvoice,
  SandboxRecordKind,
  SandboxRecordMap,
  SandboxReply,
  SandboxRequestContext,
  SandboxRequestLog,
  SandboxRouteHandler,
  SandboxSession,
  SandboxSmsMessage,
  SandboxSmsStatus,
  SandboxStats,
} from './sandbox.types.js';

export interface WaitOptions {
  /** Give up (HubtelTimeoutError) after this long. Default 10 s. */
  timeoutMs?: number;
}

/**
 * A local stand-in for the Hubtel platform, on its own port: the SMS API, online checkout with a
 * hosted payment page and web callbacks, the transaction status check, the programmable-services
 * fulfillment-callback receiver and a driver playing the platform's client app, plus fault
 * injection and a record of everything it saw.
 *
 * ```ts
 * const sandbox = await HubtelSandbox.start();          // 127.0.0.1, random port
 * SmsModule.forRoot({ baseUrl: sandbox.baseUrls().sms, ...sandbox.credentials.sms });
 * // ...
 * await sandbox.stop();
 * ```
 *
 * Events (`sandbox.on(...)`): `message`, `invoice`, `delivery`, `session`,
 * `fulfillment-callback`, `request`, `reset`. A record is emitted when created and again on
 * every change (an invoice paid, a delivery answered). Listener errors are logged, never thrown
 * into the request that caused them.
 */
export class HubtelSandbox extends EventEmitter<SandboxEventMap> {
  /** Creates a sandbox and starts listening. */
  static async start(options: HubtelSandboxOptions = {}): Promise<HubtelSandbox> {
    return new HubtelSandbox(options).listen();
  }

  /** Fault injection on requests it receives (`add`) and callbacks it sends (`addCallback`). */
  readonly faults: SandboxFaults;

  private readonly state: SandboxState;
  private readonly options: ResolvedSandboxOptions;
  private readonly router = new SandboxRouter();
  private readonly authHeaders: { sms: string; api: string };
  private httpServer: Server | undefined;
  private listening: Promise<this> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: HubtelSandboxOptions = {}) {
    super();
    this.options = resolveSandboxOptions(options);
    this.state = new SandboxState(this.options, this);
    this.faults = this.state.faults;
    this.authHeaders = {
      sms: basicAuthHeader(this.options.credentials.sms),
      api: basicAuthHeader(this.options.credentials.api),
    };
    const authorized = (ctx: SandboxRequestContext, pair: 'sms' | 'api') => this.isAuthorized(ctx.req, pair);
    registerSmsApi(this.router, this.state, authorized);
    registerCheckoutApi(this.router, this.state, authorized);
    registerFulfillmentCallbackApi(this.router, this.state);
    registerAdminApi(this.router, this);
    if (this.options.dashboard) registerSandboxDashboard(this);
  }

  /* ================================ lifecycle ================================ */

  /** Starts listening (once; later calls return the same promise). */
  listen(): Promise<this> {
    this.listening ??= new Promise<this>((resolve, reject) => {
      const server = http.createServer((req, res) => {
        void this.handle(req, res);
      });
      server.keepAliveTimeout = 5_000;
      const onError = (err: NodeJS.ErrnoException) => {
        this.listening = undefined;
        reject(
          err.code === 'EADDRINUSE'
            ? new HubtelConfigError('port', `${this.options.port} is already in use on ${this.options.host}`)
            : new HubtelConfigError(
                'host',
                `cannot listen on ${this.options.host}:${this.options.port}: ${err.message}`,
              ),
        );
      };
      server.once('error', onError);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', onError);
        this.httpServer = server;
        const { port } = server.address() as AddressInfo;
        this.state.baseUrl = this.options.publicUrl ?? `http://${hostForUrl(this.options.host)}:${port}`;
        this.options.logger?.log(`Hubtel sandbox listening on ${this.state.baseUrl}`);
        resolve(this);
      });
    });
    return this.listening;
  }

  /**
   * Stops: delayed callbacks are not sent, pending `waitFor`s reject, open connections (a
   * request hung by a `timeout` fault, say) are closed.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.state.shutdown();
      const server = this.httpServer;
      if (!server) return;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
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

  /* ================================ addresses ================================ */

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

  /**
   * The dashboard page (`<url>/_dashboard`: messages, invoices, callbacks, sessions, live), or
   * undefined when the sandbox runs without it (`dashboard: false`). Throws before `listen()`.
   */
  get dashboardUrl(): string | undefined {
    return this.options.dashboard ? `${this.url}${SANDBOX_DASHBOARD_PATH}` : undefined;
  }

  /** The credential pairs it accepts (copies). */
  get credentials(): { sms: SandboxCredentialPair; api: SandboxCredentialPair } {
    return { sms: { ...this.options.credentials.sms }, api: { ...this.options.credentials.api } };
  }

  get posSalesId(): string {
    return this.options.posSalesId;
  }

  /* ================================ records ================================ */

  /** Messages sent (oldest first; the newest `recordLimit` are kept). */
  messages(): SandboxSmsMessage[] {
    const now = Date.now();
    return this.state.messages.values().map((m) => settleMessage(m, now));
  }

  /** Messages sent to one number, in any accepted form (`0241234567`, `+233 24 123 4567`). */
  messagesTo(msisdn: string): SandboxSmsMessage[] {
    const wanted = platformMsisdn(msisdn) ?? msisdn;
    const now = Date.now();
    return this.state.messages.filter((m) => m.msisdn === wanted).map((m) => settleMessage(m, now));
  }

  message(messageId: string): SandboxSmsMessage | undefined {
    const m = this.state.messages.get(messageId);
    return m && settleMessage(m);
  }

  /** Sets a message's delivery status (`Failed`, `Undelivered`, ...) as a telco report would. */
  setMessageStatus(messageId: string, status: SandboxSmsStatus): SandboxSmsMessage {
    const m = this.state.messages.get(messageId);
    if (!m) throw new SandboxNotFoundError('message', messageId);
    m.status = status;
    m.deliverAt = 0;
    m.updateTime = platformTime(Date.now());
    this.state.emit('message', m);
    return m;
  }

  invoices(): SandboxInvoice[] {
    return this.state.invoices.values();
  }

  /** An invoice by checkout id or client reference. */
  invoice(checkoutIdOrReference: string): SandboxInvoice | undefined {
    return findInvoice(this.state, checkoutIdOrReference);
  }

  /** Callback deliveries (checkout web callbacks and fulfillment requests), oldest first. */
  deliveries(
    filter?: Partial<
      Pick<SandboxDelivery, 'kind' | 'checkoutId' | 'clientReference' | 'sessionId' | 'orderId' | 'state'>
    >,
  ): SandboxDelivery[] {
    if (!filter) return this.state.deliveries.values();
    const entries = Object.entries(filter).filter(([, v]) => v !== undefined) as [
      keyof SandboxDelivery,
      unknown,
    ][];
    return this.state.deliveries.filter((d) => entries.every(([k, v]) => d[k] === v));
  }

  delivery(id: string): SandboxDelivery | undefined {
    return this.state.deliveries.get(id);
  }

  /** Programmable-services sessions played by `serviceApp()` drivers. */
  sessions(): SandboxSession[] {
    return this.state.sessions.values();
  }

  session(sessionId: string): SandboxSession | undefined {
    return this.state.sessions.get(sessionId);
  }

  /** Fulfillment callbacks received on `POST /callback`. */
  fulfillmentCallbacks(): SandboxFulfillmentCallback[] {
    return this.state.fulfillmentCallbacks.values();
  }

  /** Inbound requests (method, path, status, duration; no bodies, no credentials). */
  requests(): SandboxRequestLog[] {
    return this.state.requests.values();
  }

  /** Exact counts since start or the last reset (records beyond `recordLimit` are dropped; counts are not). */
  stats(): SandboxStats {
    const s = this.state;
    return {
      requests: s.requests.total,
      messages: s.messages.total,
      batches: s.batches.total,
      invoices: s.invoices.total,
      payments: s.payments,
      deliveries: s.deliveries.total,
      sessions: s.sessions.total,
      fulfillmentCallbacks: s.fulfillmentCallbacks.total,
    };
  }

  /* ================================ actions ================================ */

  /**
   * Pays (or fails) an invoice as the hosted page would, and sends its web callback. Resolves
   * once the callback was answered (unless a fault delayed it).
   */
  async pay(checkoutIdOrReference: string, options: PayOptions = {}): Promise<PaymentResult> {
    return payInvoice(this.state, requireInvoice(this.state, checkoutIdOrReference), options);
  }

  /** Cancels an invoice as the payer would: no callback. */
  cancel(checkoutIdOrReference: string): SandboxInvoice {
    return cancelInvoice(this.state, requireInvoice(this.state, checkoutIdOrReference));
  }

  /** Marks a paid invoice refunded (the status check answers `Refunded`). */
  refund(checkoutIdOrReference: string): SandboxInvoice {
    return refundInvoice(this.state, requireInvoice(this.state, checkoutIdOrReference));
  }

  /** Sends a recorded delivery again, unchanged and without faults; resolves with the new delivery once answered. */
  async redeliver(deliveryId: string): Promise<SandboxDelivery> {
    const original = this.state.deliveries.get(deliveryId);
    if (!original) throw new SandboxNotFoundError('delivery', deliveryId);
    return this.state.redeliver(original);
  }

  /**
   * Records a programmable-services payment for a SessionId without sending anything, so the
   * status check confirms it (for a fulfillment request sent by a tool or a test itself).
   */
  recordServicePayment(sessionId: string, options: RecordServicePaymentOptions = {}): SandboxSession {
    return recordServicePayment(this.state, sessionId, options);
  }

  /** A driver playing the platform's client app against a service application. */
  serviceApp(serviceAppUrl: string, options: ServiceAppDriverOptions = {}): SandboxServiceSession {
    return new SandboxServiceSession(this.state, serviceAppUrl, options);
  }

  /* ================================ waiting ================================ */

  /**
   * The newest record of `kind` that matches, or the first to come. Records are re-tested on
   * every change, so `d => d.state === 'delivered'` waits for completion.
   */
  waitFor<K extends SandboxRecordKind>(
    kind: K,
    predicate?: (record: SandboxRecordMap[K]) => boolean,
    options: WaitOptions = {},
  ): Promise<SandboxRecordMap[K]> {
    return this.state.waitFor(kind, predicate, options.timeoutMs);
  }

  /** A message to a number (any accepted form), or matching a predicate. */
  waitForMessage(
    match: string | ((m: SandboxSmsMessage) => boolean),
    options?: WaitOptions,
  ): Promise<SandboxSmsMessage> {
    const wanted = typeof match === 'string' ? (platformMsisdn(match) ?? match) : undefined;
    return this.waitFor('message', typeof match === 'string' ? (m) => m.msisdn === wanted : match, options);
  }

  /** A delivery that finished (delivered, failed or dropped) and matches. */
  waitForDelivery(
    predicate: (d: SandboxDelivery) => boolean = () => true,
    options?: WaitOptions,
  ): Promise<SandboxDelivery> {
    return this.waitFor('delivery', (d) => this.state.isSettled(d) && predicate(d), options);
  }

  /** A fulfillment callback received on `/callback` that matches. */
  waitForFulfillmentCallback(
    predicate: (cb: SandboxFulfillmentCallback) => boolean = () => true,
    options?: WaitOptions,
  ): Promise<SandboxFulfillmentCallback> {
    return this.waitFor('fulfillment-callback', predicate, options);
  }

  /* ================================ extension ================================ */

  /**
   * Adds a route to the sandbox's server (the dashboard's pages and event stream). Built-in
   * routes match first; `api` decides the error shape and which faults apply (default `admin`,
   * which faults only hit when they name it).
   */
  addRoute(
    method: string,
    path: string,
    handler: SandboxRouteHandler,
    options: { api?: SandboxApi } = {},
  ): void {
    this.router.add(method, path, options.api ?? 'admin', handler);
  }

  /* ================================ internals ================================ */

  private isAuthorized(req: IncomingMessage, pair: 'sms' | 'api'): boolean {
    const header = req.headers.authorization;
    if (header === this.authHeaders[pair]) return true;
    const given = parseBasicAuth(header);
    const expected = this.options.credentials[pair];
    return !!given && given.clientId === expected.clientId && given.clientSecret === expected.clientSecret;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1));
    const match = this.router.match(method, path);
    const api: SandboxApi =
      match.kind === 'found'
        ? match.route.api
        : match.kind === 'method-not-allowed'
          ? match.api
          : SandboxRouter.apiOf(path);

    const log: SandboxRequestLog = {
      id: this.state.nextRequestId(),
      at: isoNow(),
      method,
      path,
      api,
      statusCode: null,
      durationMs: null,
      faultId: null,
    };
    this.state.requests.push(log);
    res.once('close', () => {
      log.statusCode ??= res.headersSent ? res.statusCode : null;
      log.durationMs = Math.round((performance.now() - started) * 100) / 100;
      this.state.emit('request', log);
    });

    const ctx = new RequestContext(
      req,
      res,
      method,
      path,
      query,
      match.kind === 'found' ? match.params : {},
      api,
      this.options.maxBodyBytes,
    );
    const run = async (): Promise<SandboxReply | void> => {
      // The admin API and the dashboard answer only their own names (DNS rebinding).
      if (api === 'admin' && !isAllowedHost(req.headers.host, this.options.allowedHosts)) {
        return apiErrorReply('admin', 403, {
          message: `Host "${hostNameOf(req.headers.host)?.slice(0, 100)}" is not allowed; add it to the sandbox's allowedHosts`,
          responseCode: 'HUBTEL_HOST_NOT_ALLOWED',
        });
      }
      if (match.kind === 'found') return match.route.handler(ctx);
      if (match.kind === 'method-not-allowed') {
        return apiErrorReply(api, 405, {
          message: `${method} is not allowed on ${path}`,
          headers: { Allow: match.allowed.join(', ') },
        });
      }
      return apiErrorReply(api, 404, { message: `No route for ${method} ${path}` });
    };

    try {
      const fault = this.state.faults.takeInbound({ method, path, api });
      let reply: SandboxReply | void;
      if (!fault) {
        reply = await run();
      } else {
        log.faultId = fault.id;
        reply = await this.applyInboundFault(fault, ctx, run);
        if (reply === undefined) return;
      }
      if (reply) {
        // Answering before the body was read would leave the client writing into a closed request.
        await ctx.body().catch(() => undefined);
        this.write(res, reply, log);
      }
    } catch (err) {
      if (err instanceof SandboxHttpError) {
        this.write(res, err.reply, log);
        return;
      }
      this.options.logger?.error(
        `Sandbox error on ${method} ${path}: ${(err as Error)?.stack ?? String(err)}`,
      );
      this.write(
        res,
        apiErrorReply(api, 500, {
          message: `Sandbox internal error: ${(err as Error)?.message ?? String(err)}`,
        }),
        log,
      );
    }
  }

  /** Writes a reply and notes its status at once (the client may read it before the response's 'close'). */
  private write(res: ServerResponse, reply: SandboxReply, log: SandboxRequestLog): void {
    writeReply(res, reply);
    if (res.headersSent) log.statusCode = res.statusCode;
  }

  /** Returns the reply to write, or undefined when the fault left nothing to write (hang, drop). */
  private async applyInboundFault(
    fault: FaultHandle<InboundFaultSpec>,
    ctx: RequestContext,
    run: () => Promise<SandboxReply | void>,
  ): Promise<SandboxReply | undefined> {
    const spec = fault.spec;
    const effect = spec.timeout || spec.dropConnection || spec.html || spec.status !== undefined;
    let reply: SandboxReply | void = undefined;
    if (spec.processRequest) reply = await run();
    if (spec.delayMs) await this.state.sleep(spec.delayMs);
    if (!effect) {
      // Delay only: the normal answer, late. A client that gave up meanwhile is not served.
      if (!spec.processRequest) {
        if (ctx.req.socket.destroyed) return undefined;
        reply = await run();
      }
      return reply ?? undefined;
    }
    await ctx.body().catch(() => undefined);
    if (spec.timeout) return undefined; // never answered; stop() closes the connection
    if (spec.dropConnection) {
      ctx.req.socket.destroy();
      return undefined;
    }
    if (spec.html)
      return { status: spec.status ?? 403, headers: { ...spec.headers }, html: forbiddenHtmlPage() };
    const status = spec.status!;
    if (spec.body === undefined) {
      const base = apiErrorReply(ctx.api, status, { message: faultMessage(status) });
      return { ...base, headers: { ...base.headers, ...spec.headers } };
    }
    if (typeof spec.body === 'string') return { status, headers: { ...spec.headers }, text: spec.body };
    return { status, headers: { ...spec.headers }, json: spec.body };
  }
}

function faultMessage(status: number): string {
  if (status >= 500) return 'The request failed on the server.';
  if (status === 402) return 'Your account does not have enough messaging credit to send the message.';
  if (status === 403) return 'Forbidden.';
  if (status === 429) return 'Too many requests.';
  return http.STATUS_CODES[status] ?? 'Error';
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

// Re-exported for the index: the fault spec types are part of the sandbox's public API.
export type { CallbackFaultSpec, InboundFaultSpec };
