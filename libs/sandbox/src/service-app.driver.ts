import { HubtelValidationError, type ValidationIssue } from 'nestjs-hubtel';
import { serviceAppChannel, type ServiceAppChannel, type UssdScreenLimits } from '#internal';
import { invalidArgument, SandboxStateError } from './sandbox.errors.js';
import type { CallbackFaultSpec } from './sandbox.faults.js';
import { checkPayment, SandboxPaymentOutcomeDto } from './admin.dto.js';
import { hexId, isHttpUrl, isoNow, platformMsisdn, round2 } from './sandbox.http.js';
import { postServiceFlow } from './service-app.exchange.js';
import { fulfillmentOrderInfo, newSessionRecord, recordServiceOrder } from './service-app.payments.js';
import { ussdKeyFor, ussdLimits } from './service-app.ussd.js';
import type { SandboxState } from './sandbox.state.js';
import type {
  CartItem,
  FulfillmentRequestBody,
  SandboxDelivery,
  SandboxFulfillmentCallback,
  SandboxServiceOrder,
  SandboxSession,
  ServiceFlowOption,
  ServiceFlowRequest,
  ServiceFlowResponse,
} from './sandbox.types.js';
import type {
  ForgedFulfillmentOptions,
  ServiceAppDriverOptions,
  ServicePayOptions,
  ServicePayResult,
} from './service-app.driver-types.js';

/**
 * One session of the platform's client app against a service application. Each call returns
 * the application's parsed answer; the whole exchange is recorded (`sandbox.sessions()`).
 */
export class SandboxServiceSession {
  readonly sessionId: string;
  readonly record: SandboxSession;
  /** The application's last answer. */
  last: ServiceFlowResponse | undefined;
  private readonly base: string;
  private readonly screenLimits: UssdScreenLimits;
  /** `Platform: 'USSD'` when the channel was chosen as USSD for an operator the rule calls app. */
  private readonly channelFields: Record<string, unknown>;

  constructor(
    private readonly state: SandboxState,
    serviceAppUrl: string,
    private readonly options: ServiceAppDriverOptions = {},
  ) {
    if (!isHttpUrl(serviceAppUrl)) throw invalidArgument('serviceAppUrl', 'must be an absolute http(s) URL');
    const mobile = options.mobile ?? '233241234567';
    if (!platformMsisdn(mobile))
      throw invalidArgument('mobile', 'must be a phone number with its country code');
    const operator = options.operator ?? 'mtn';
    const detected = serviceAppChannel({ Operator: operator, Platform: options.extraFields?.Platform });
    const channel = options.channel ?? detected;
    this.channelFields = channel === 'ussd' && detected !== 'ussd' ? { Platform: 'USSD' } : {};
    if (channel !== 'ussd' && channel !== 'app')
      throw invalidArgument('channel', 'must be "ussd" or "app"', channel);
    this.screenLimits = ussdLimits(options.ussd);
    this.base = serviceAppUrl.replace(/\/+$/, '');
    this.sessionId = options.sessionId ?? hexId();
    this.record = newSessionRecord({
      sessionId: this.sessionId,
      account: state.accounts.require(options.account ?? state.accounts.default.name).name,
      serviceAppUrl: this.base,
      serviceCode: options.serviceCode ?? 'sandbox-service',
      mobile,
      operator,
      channel,
      state: 'new',
    });
  }

  /** `ussd` or `app`: how this session plays the phone. */
  get channel(): ServiceAppChannel {
    return this.record.channel ?? 'app';
  }

  /** The cart item of the AddToCart answer (on USSD: of the Release carrying an Item), once there was one. */
  get cart(): CartItem | null {
    return this.record.cart;
  }

  get order(): SandboxServiceOrder | null {
    return this.record.order;
  }

  /** The user selects the service: `Type: 'initiation'`, empty `Message`, `Sequence` set. */
  async start(): Promise<ServiceFlowResponse> {
    if (this.record.state !== 'new')
      throw new SandboxStateError('The session was already started', this.record.state);
    return this.send('initiation') as Promise<ServiceFlowResponse>;
  }

  /**
   * A request of a rarer type: `favorite` (starts the session, `Sequence` set, saved data in `fields`),
   * `query` (data, not a screen), `timeout` (the platform gave up; the session is over), anything else as
   * given. The answer is checked against the contract unless no user sees it (`timeout`, `query`).
   */
  async send(
    type: string,
    options: { message?: string; fields?: Record<string, unknown> } = {},
  ): Promise<ServiceFlowResponse | undefined> {
    if (typeof type !== 'string' || type.trim() === '')
      throw invalidArgument('type', 'must be a non-empty string', undefined, 'send(type) needs a Type');
    const kind = type.toLowerCase();
    if (this.record.state === 'new') {
      this.state.sessions.push(this.record, [this.sessionId]);
      this.record.state = 'active';
    } else if (kind === 'favorite') {
      throw new SandboxStateError(
        'A favorite starts a session: this one was already started',
        this.record.state,
      );
    }
    // A session's first request (initiation, favorite) carries `Sequence`.
    const fields = {
      ...(kind === 'initiation' || kind === 'favorite' ? { Sequence: '1' } : {}),
      Type: type,
      Message: options.message ?? '',
    };
    const unchecked = kind === 'timeout' || kind === 'query';
    try {
      return await this.call(fields, !unchecked, options.fields);
    } finally {
      if (kind === 'timeout' && this.record.state !== 'cart') {
        this.record.state = 'ended';
        this.touch();
      }
    }
  }

  /** The user submits input (or an option's `Value`): `Type: 'Response'`, no `Sequence`. */
  async reply(input: string): Promise<ServiceFlowResponse> {
    this.requireOpen();
    if (typeof input !== 'string')
      throw invalidArgument('input', 'must be a string', undefined, 'reply(input) needs a string');
    return this.call({ Type: 'Response', Message: input });
  }

  /**
   * Picks an option of the last select prompt by `Value`, `Display` (any case) or 1-based position.
   * On USSD it types what a phone user types: a number as is, or the number of the menu line
   * showing the option (one not on this screen is an error); without a numbered menu, and on the
   * app channel, it replies with the option's `Value`.
   */
  async choose(option: string | number): Promise<ServiceFlowResponse> {
    const options = (this.last?.Data ?? []) as ServiceFlowOption[];
    const menu = this.channel === 'ussd' ? (this.record.exchanges.at(-1)?.screen?.menu ?? []) : [];
    if (menu.length > 0) return this.reply(ussdKeyFor(option, menu, Array.isArray(options) ? options : []));
    if (!Array.isArray(options) || options.length === 0) {
      const summary = 'The last answer offered no options to choose from';
      throw invalidArgument('option', 'no select prompt', undefined, summary);
    }
    const wanted = String(option);
    const found =
      options.find((o) => o.Value === wanted) ??
      options.find((o) => o.Display.toLowerCase() === wanted.toLowerCase()) ??
      (typeof option === 'number' || /^\d+$/.test(wanted) ? options[Number(wanted) - 1] : undefined);
    const offered = () => options.map((o) => `${o.Display} (${o.Value})`).join(', ');
    if (!found)
      throw invalidArgument('option', 'not offered', option, `No option "${wanted}"; offered: ${offered()}`);
    return this.reply(found.Value);
  }

  /** The user leaves: `Type: 'Release'`. Returns the answer, if the application gave a JSON one. */
  async release(): Promise<ServiceFlowResponse | undefined> {
    this.requireOpen();
    const before = this.record.state;
    try {
      return await this.call({ Type: 'Release', Message: '' }, false);
    } finally {
      this.record.state = before === 'paid' || before === 'fulfilled' ? before : 'released';
      this.touch();
    }
  }

  /**
   * The user pays the cart; on success the fulfillment request is POSTed to the Service
   * Fulfillment URL (resolves once answered, unless a fault delayed it).
   */
  async pay(options: ServicePayOptions = {}): Promise<ServicePayResult> {
    const cart = this.record.cart;
    if (this.record.state !== 'cart' || !cart)
      throw new SandboxStateError(
        `Nothing to pay: the session is ${this.record.state}, not at its cart (AddToCart; on USSD, Release with an Item)`,
        this.record.state,
      );
    checkPayment(SandboxPaymentOutcomeDto, options);
    const outcome = options.outcome === 'failed' ? 'failed' : 'paid';
    const order = recordServiceOrder(this.state, this.record, {
      orderId: options.orderId ?? hexId(),
      price: round2(options.amount ?? cart.Qty * cart.Price),
      outcome,
      paidAt: isoNow(),
      recorded: options.recordPayment !== false,
      chargeBearer: options.chargeBearer,
      currency: options.currency,
    });
    this.record.state = outcome === 'paid' ? 'paid' : 'payment-failed';
    this.touch();
    if (outcome === 'failed') return { order, deliveries: [] };

    const orderInfo =
      options.orderInfo === true ? fulfillmentOrderInfo(this.record.mobile, cart, order) : options.orderInfo;
    const deliveries = await this.sendFulfillment({ ...options, orderId: order.orderId, orderInfo });
    return { order, deliveries };
  }

  /** Records the payment of `pay({ recordPayment: false })` late: the status check now confirms it. */
  recordPayment(): SandboxServiceOrder {
    const order = this.record.order;
    if (!order || order.outcome !== 'paid')
      throw new SandboxStateError('Nothing to record: the session has no paid order', this.record.state);
    order.recorded = true;
    this.touch();
    return order;
  }

  /** Sends a fulfillment request nobody paid for (a forgery); the session stays at its cart. */
  async forgeFulfillment(options: ForgedFulfillmentOptions = {}): Promise<SandboxDelivery[]> {
    if (!this.record.cart)
      throw new SandboxStateError('Nothing to forge: the session has no cart yet', this.record.state);
    return this.sendFulfillment({ ...options, orderId: options.orderId ?? hexId(), fault: undefined });
  }

  private async sendFulfillment(options: {
    orderId: string;
    orderInfo?: unknown;
    extraData?: Record<string, unknown>;
    fault?: CallbackFaultSpec;
  }): Promise<SandboxDelivery[]> {
    const body: FulfillmentRequestBody = {
      OrderId: options.orderId,
      SessionId: this.sessionId,
      ExtraData: options.extraData ?? {},
      OrderInfo: options.orderInfo || null,
    };
    const { deliveries, sent } = this.state.dispatch({
      kind: 'fulfillment-request',
      account: this.record.account,
      url: `${this.base}${this.options.fulfillmentPath ?? '/api/fulfillment'}`,
      headers: { 'Content-Type': 'application/json', ...this.options.headers },
      body: body as unknown as Record<string, unknown>,
      sessionId: this.sessionId,
      orderId: body.OrderId,
      fault: options.fault,
    });
    await sent;
    return deliveries;
  }

  /** Resolves with the fulfillment callback of this session's order, once the sandbox received it. */
  waitForCallback(timeoutMs?: number): Promise<SandboxFulfillmentCallback> {
    const orderId = this.record.order?.orderId;
    return this.state.waitFor(
      'fulfillment-callback',
      (cb) => cb.sessionId === this.sessionId && (orderId === undefined || cb.orderId === orderId),
      timeoutMs,
    );
  }

  private requireOpen(): void {
    if (this.record.state === 'new') throw new SandboxStateError('Call start() first', this.record.state);
    if (this.record.state === 'released' || this.record.state === 'ended')
      throw new SandboxStateError(`The session is ${this.record.state}`, this.record.state);
  }

  private touch(): void {
    this.record.updatedAt = isoNow();
    this.state.emit('session', this.record);
  }

  private async call(
    fields: Partial<ServiceFlowRequest> & { Type: string; Message: string },
    checked = true,
    extra: Record<string, unknown> = {},
  ): Promise<ServiceFlowResponse> {
    const request: ServiceFlowRequest = {
      ...fields,
      ServiceCode: this.record.serviceCode,
      Operator: this.record.operator,
      ClientState: '',
      Mobile: this.record.mobile,
      SessionId: this.sessionId,
      ...this.channelFields,
      ...this.options.extraFields,
      ...extra,
    };
    const ussd = this.channel === 'ussd';
    try {
      const { exchange, response } = await postServiceFlow(this.record, request, {
        url: `${this.base}${this.options.serviceFlowPath ?? '/api/service-flow'}`,
        headers: this.options.headers,
        timeoutMs: this.options.timeoutMs ?? 5_000, // answered within 5 s on USSD (platform facts)
        signal: this.state.outbound.signal,
        checked,
        screenLimits: ussd ? this.screenLimits : undefined,
      });
      if (!checked) return response;
      this.last = response;
      const type = String(response.Type ?? '').toLowerCase();
      const item = response.Item && typeof response.Item === 'object' ? response.Item : null;
      if (item && (type === 'addtocart' || (type === 'release' && ussd))) {
        this.record.cart = item;
        this.record.state = 'cart';
      } else if (type === 'release') {
        this.record.state = 'ended';
      } else {
        this.record.state = 'active';
      }
      if (this.options.strict !== false && exchange.issues.length > 0) {
        const issues: ValidationIssue[] = exchange.issues.map((message) => ({ field: 'response', message }));
        throw new HubtelValidationError(
          `The service application's answer breaks the contract: ${exchange.issues.join('; ')}`,
          issues,
        );
      }
      return response;
    } finally {
      this.touch();
    }
  }
}
