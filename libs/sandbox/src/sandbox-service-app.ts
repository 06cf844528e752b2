import {
  HubtelApiError,
  HubtelNetworkError,
  HubtelTimeoutError,
  HubtelValidationError,
  type ValidationIssue,
} from 'nestjs-hubtel';
import { apiErrorReply, SandboxStateError, type FieldError } from './sandbox.errors.js';
import {
  SANDBOX_DEFAULT_SERVICE_TIMEOUT_MS,
  SANDBOX_SESSION_EXCHANGE_LIMIT,
  SERVICE_APP_DEFAULT_PATHS,
} from './sandbox.constants.js';
import { validateCallback, type CallbackFaultSpec } from './sandbox-faults.js';
import {
  OutboundError,
  hexId,
  isoNow,
  networkTransactionId,
  platformMsisdn,
  postJson,
  round2,
} from './sandbox-http.js';
import type { SandboxRouter } from './sandbox.router.js';
import type { SandboxState } from './sandbox.state.js';
import type {
  CartItem,
  FulfillmentRequestBody,
  SandboxDelivery,
  SandboxFulfillmentCallback,
  SandboxServiceOrder,
  SandboxSession,
  SandboxSessionExchange,
  ServiceFlowOption,
  ServiceFlowRequest,
  ServiceFlowResponse,
} from './sandbox.types.js';

/* ------------------------------------------------------------------------------------------------
 * The platform's fulfillment-callback receiver: POST {callback_url}/callback
 *   {SessionId, OrderId, ServiceStatus, MetaData} → 200 {message: 'Callback received', responseCode: '0000', data: null}
 *   missing/invalid fields → 400 {message, responseCode: '4000', data: [{field, message}]}
 * The contract shows no authentication for it, so none is asked. A callback for an order the
 * sandbox's driver did not pay is still accepted and recorded, with `matched: false`.
 * ---------------------------------------------------------------------------------------------- */

export function registerFulfillmentCallbackApi(router: SandboxRouter, state: SandboxState): void {
  router.add('POST', '/callback', 'callback', async (ctx) => {
    const b = await ctx.jsonObject();
    const errors: FieldError[] = [];
    for (const field of ['SessionId', 'OrderId', 'ServiceStatus'] as const) {
      if (typeof b[field] !== 'string' || (b[field] as string).trim() === '')
        errors.push({ field, message: `${field} is required` });
    }
    if (errors.length > 0) return apiErrorReply('callback', 400, { message: 'Validation error', errors });

    const sessionId = b.SessionId as string;
    const orderId = b.OrderId as string;
    const serviceStatus = b.ServiceStatus as string;
    const session = state.sessions.get(sessionId);
    const matched = session?.order?.orderId === orderId;
    const record: SandboxFulfillmentCallback = {
      id: `fcb_${hexId().slice(0, 16)}`,
      sessionId,
      orderId,
      serviceStatus,
      metaData: b.MetaData ?? null,
      body: b,
      matched,
      receivedAt: isoNow(),
    };
    if (matched && session?.order) {
      const success = serviceStatus.toLowerCase() === 'success';
      session.order.serviceStatus = serviceStatus;
      session.order.isFulfilled = success;
      session.state = success ? 'fulfilled' : 'fulfillment-failed';
      session.updatedAt = record.receivedAt;
      state.emit('session', session);
    }
    state.fulfillmentCallbacks.push(record, [record.id]);
    state.emit('fulfillment-callback', record);
    return { status: 200, json: { message: 'Callback received', responseCode: '0000', data: null } };
  });
}

export interface RecordServicePaymentOptions {
  /** Amount paid. Default: the session's cart total; required for a session this sandbox did not drive. */
  amount?: number;
  /** The order's id. Default: the session's order's, else a fresh one. */
  orderId?: string;
}

/**
 * Records a programmable-services payment for a SessionId, without sending anything: the status
 * check (clientReference = the SessionId) then answers Paid. For tools that drive a session
 * elsewhere (another sandbox, a terminal simulator) and send the fulfillment request themselves.
 */
export function recordServicePayment(
  state: SandboxState,
  sessionId: string,
  options: RecordServicePaymentOptions = {},
): SandboxSession {
  const issues: ValidationIssue[] = [];
  if (typeof sessionId !== 'string' || sessionId.trim() === '' || sessionId.length > 256)
    issues.push({ field: 'sessionId', message: 'must be a non-empty string of at most 256 characters' });
  if (options.amount !== undefined && (typeof options.amount !== 'number' || !(options.amount >= 0)))
    issues.push({ field: 'amount', message: 'must be a number of at least 0', value: options.amount });
  if (options.orderId !== undefined && (typeof options.orderId !== 'string' || options.orderId.trim() === ''))
    issues.push({ field: 'orderId', message: 'must be a non-empty string' });
  let session = state.sessions.get(sessionId);
  const cart = session?.cart;
  if (options.amount === undefined && !cart)
    issues.push({ field: 'amount', message: 'is required: the sandbox knows no cart for this session' });
  if (issues.length > 0) throw new HubtelValidationError('Invalid service payment', issues);
  const now = isoNow();
  if (!session) {
    session = {
      sessionId,
      serviceAppUrl: '',
      serviceCode: 'external',
      mobile: '',
      operator: '',
      state: 'cart',
      exchanges: [],
      cart: null,
      order: null,
      createdAt: now,
      updatedAt: now,
    };
    state.sessions.push(session, [sessionId]);
  }
  const amount = round2(options.amount ?? cart!.Qty * cart!.Price);
  const charges = round2(amount * state.options.checkout.chargeRate);
  const order: SandboxServiceOrder = {
    orderId: options.orderId ?? session.order?.orderId ?? hexId(),
    amount,
    charges,
    amountAfterCharges: round2(amount - charges),
    outcome: 'paid',
    paidAt: now,
    transactionId: hexId(),
    externalTransactionId: networkTransactionId(),
    isFulfilled: false,
    serviceStatus: null,
    recorded: true,
  };
  session.order = order;
  session.state = 'paid';
  session.updatedAt = now;
  state.payments++;
  state.sessions.addKey(session, `tx:${order.transactionId}`);
  state.sessions.addKey(session, `ext:${order.externalTransactionId}`);
  state.emit('session', session);
  return session;
}

/* ------------------------------------------------------------------------------------------------
 * The driver: plays the platform's client app against a service application.
 * ---------------------------------------------------------------------------------------------- */

export interface ServiceAppDriverOptions {
  /** `ServiceCode` sent on every call. Default `sandbox-service`. */
  serviceCode?: string;
  /** `Mobile`: the user's MSISDN. Default `233241234567`. */
  mobile?: string;
  /** `Operator`: the user's channel (`mtn`, `vodafone`, `Hubtel-Android`, ...). Default `mtn`. */
  operator?: string;
  /** `SessionId`. Default: a fresh random one. */
  sessionId?: string;
  /** Path of the Service Interaction URL, after the service app's URL. Default `/api/service-flow`. */
  serviceFlowPath?: string;
  /** Path of the Service Fulfillment URL. Default `/api/fulfillment`. */
  fulfillmentPath?: string;
  /** Extra headers on every call (a path secret goes in the URL instead). */
  headers?: Record<string, string>;
  /** Extra request fields (newer platform fields such as `Platform`, `Timeout`), merged into every service-flow call. */
  extraFields?: Record<string, unknown>;
  /** How long to wait for each answer. Default 5 s (the platform's USSD limit). */
  timeoutMs?: number;
  /**
   * Check each answer against the contract (echoed SessionId, every field present, `Data` and
   * `Item` per `DataType`/`Type`) and throw a HubtelValidationError listing what is wrong.
   * Default true; with false the issues are only recorded on the exchange.
   */
  strict?: boolean;
}

export interface ServicePayOptions {
  /** `paid` (default) sends the fulfillment request; `failed` records a failed payment and sends nothing. */
  outcome?: 'paid' | 'failed';
  /**
   * `OrderInfo` of the fulfillment request: null by default (as in the contract's sample);
   * `true` builds one in the documented shape `{Status, Items, Payment}`; an object is sent as given.
   */
  orderInfo?: boolean | Record<string, unknown>;
  /** `ExtraData` of the fulfillment request. Default `{}`. */
  extraData?: Record<string, unknown>;
  /** Order id to use. Default: a fresh random one. */
  orderId?: string;
  /** A fault for this fulfillment request only (instead of `sandbox.faults`). */
  fault?: CallbackFaultSpec;
  /**
   * The amount the payer paid, as the status check reports it. Default: the cart's total
   * (`Qty × Price`). Another amount plays a platform (or an attacker) that charged the wrong sum.
   */
  amount?: number;
  /**
   * `false`: the fulfillment request is sent, but the status check does not know the payment
   * until `recordPayment()` is called (the platform recording it late). Default true.
   */
  recordPayment?: boolean;
}

/** A fulfillment request nobody paid for: what a forger sends to the Service Fulfillment URL. */
export interface ForgedFulfillmentOptions {
  /** Order id to claim. Default: a fresh random one. */
  orderId?: string;
  /** `OrderInfo` to claim (a forger may claim `{Status: 'Paid', ...}`). Default null. */
  orderInfo?: Record<string, unknown> | null;
  extraData?: Record<string, unknown>;
}

export interface ServicePayResult {
  order: SandboxServiceOrder;
  /** Deliveries of the fulfillment request (empty when the payment failed). */
  deliveries: SandboxDelivery[];
}

const CONTRACT_FIELDS = [
  'SessionId',
  'Type',
  'Message',
  'Mask',
  'MaskNextRoute',
  'Item',
  'ServiceCode',
  'Label',
  'DataType',
  'FieldType',
  'FieldName',
  'ClientState',
  'Data',
];

/** Where a service application's answer departs from the contract. */
export function checkServiceFlowResponse(response: unknown, sessionId: string): string[] {
  const issues: string[] = [];
  if (response === null || typeof response !== 'object' || Array.isArray(response))
    return ['the answer is not a JSON object'];
  const r = response as Record<string, unknown>;
  const type = typeof r.Type === 'string' ? r.Type.toLowerCase() : undefined;
  if (type === undefined) issues.push('Type is missing or not a string');
  else if (!['response', 'addtocart', 'release'].includes(type))
    issues.push(`Type "${String(r.Type)}" is not Response, AddToCart or Release`);
  if (r.SessionId !== sessionId)
    issues.push(
      `SessionId ${JSON.stringify(r.SessionId)} does not echo the session's ${JSON.stringify(sessionId)}`,
    );
  if (typeof r.Message !== 'string') issues.push('Message is missing or not a string');
  if (type === 'release') return issues;
  for (const field of CONTRACT_FIELDS)
    if (!(field in r)) issues.push(`${field} is missing (send null rather than omitting it)`);
  const dataType = typeof r.DataType === 'string' ? r.DataType.toLowerCase() : undefined;
  if (dataType !== undefined && !['input', 'select', 'display'].includes(dataType))
    issues.push(`DataType "${String(r.DataType)}" is not input, select or display`);
  if ('DataType' in r && typeof r.DataType !== 'string') issues.push('DataType is not a string');
  if ('FieldType' in r && typeof r.FieldType !== 'string') issues.push('FieldType is not a string');
  if (type === 'addtocart') {
    const item = r.Item as Record<string, unknown> | null | undefined;
    if (!item || typeof item !== 'object') issues.push('Item must be an object on AddToCart');
    else {
      if (typeof item.ItemName !== 'string') issues.push('Item.ItemName must be a string');
      if (typeof item.Qty !== 'number') issues.push('Item.Qty must be a number');
      if (typeof item.Price !== 'number') issues.push('Item.Price must be a number');
      if (
        item.ServiceData !== undefined &&
        (item.ServiceData === null || typeof item.ServiceData !== 'object')
      )
        issues.push('Item.ServiceData must be an object when present');
    }
    if (!Array.isArray(r.Data) || r.Data.length !== 0)
      issues.push('Data must be an empty array on AddToCart');
  } else if (type === 'response') {
    if ('Item' in r && r.Item !== null) issues.push('Item must be null on a prompt');
    if (dataType === 'select') {
      if (!Array.isArray(r.Data) || r.Data.length === 0)
        issues.push('Data must be a non-empty array of options on a select prompt');
      else
        (r.Data as unknown[]).forEach((opt, i) => {
          const o = opt as Record<string, unknown> | null;
          if (
            !o ||
            typeof o.Display !== 'string' ||
            typeof o.Value !== 'string' ||
            typeof o.Amount !== 'number'
          ) {
            issues.push(`Data[${i}] must be {Display: string, Value: string, Amount: number}`);
          }
        });
    } else if (dataType === 'input' && 'Data' in r && r.Data !== null) {
      issues.push('Data must be null on an input prompt');
    }
  }
  return issues;
}

/**
 * One session of the platform's client app against a service application. Each call returns
 * the application's parsed answer; the whole exchange is recorded (`sandbox.sessions()`).
 */
export class SandboxServiceSession {
  readonly sessionId: string;
  readonly record: SandboxSession;
  private lastResponse: ServiceFlowResponse | undefined;
  private readonly base: string;
  private readonly flowPath: string;
  private readonly fulfillmentPath: string;
  private readonly timeoutMs: number;
  private readonly strict: boolean;

  constructor(
    private readonly state: SandboxState,
    serviceAppUrl: string,
    private readonly options: ServiceAppDriverOptions = {},
  ) {
    try {
      const u = new URL(serviceAppUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    } catch {
      throw new HubtelValidationError(`serviceAppUrl must be an absolute http(s) URL`, [
        { field: 'serviceAppUrl', message: 'must be an absolute http(s) URL' },
      ]);
    }
    const mobile = options.mobile ?? '233241234567';
    if (!platformMsisdn(mobile)) {
      throw new HubtelValidationError('mobile must be a phone number', [
        { field: 'mobile', message: 'must be a phone number with its country code' },
      ]);
    }
    this.base = serviceAppUrl.replace(/\/+$/, '');
    this.flowPath = options.serviceFlowPath ?? SERVICE_APP_DEFAULT_PATHS.serviceFlow;
    this.fulfillmentPath = options.fulfillmentPath ?? SERVICE_APP_DEFAULT_PATHS.fulfillment;
    this.timeoutMs = options.timeoutMs ?? SANDBOX_DEFAULT_SERVICE_TIMEOUT_MS;
    this.strict = options.strict ?? true;
    this.sessionId = options.sessionId ?? hexId();
    const now = isoNow();
    this.record = {
      sessionId: this.sessionId,
      serviceAppUrl: this.base,
      serviceCode: options.serviceCode ?? 'sandbox-service',
      mobile,
      operator: options.operator ?? 'mtn',
      state: 'new',
      exchanges: [],
      cart: null,
      order: null,
      createdAt: now,
      updatedAt: now,
    };
  }

  /** The application's last answer. */
  get last(): ServiceFlowResponse | undefined {
    return this.lastResponse;
  }

  /** The cart item of the AddToCart answer, once there was one. */
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
    this.state.sessions.push(this.record, [this.sessionId]);
    this.record.state = 'active';
    return this.call({ Sequence: '1', Type: 'initiation', Message: '' });
  }

  /** The user submits input (or an option's `Value`): `Type: 'Response'`, no `Sequence`. */
  async reply(input: string): Promise<ServiceFlowResponse> {
    this.requireOpen();
    if (typeof input !== 'string')
      throw new HubtelValidationError('reply(input) needs a string', [
        { field: 'input', message: 'must be a string' },
      ]);
    return this.call({ Type: 'Response', Message: input });
  }

  /** Picks an option of the last select prompt by `Value`, `Display` (any case) or 1-based position, and replies with its `Value`. */
  async choose(option: string | number): Promise<ServiceFlowResponse> {
    const options = (this.lastResponse?.Data ?? []) as ServiceFlowOption[];
    if (!Array.isArray(options) || options.length === 0) {
      throw new HubtelValidationError('The last answer offered no options to choose from', [
        { field: 'option', message: 'no select prompt' },
      ]);
    }
    const wanted = String(option);
    const found =
      options.find((o) => o.Value === wanted) ??
      options.find((o) => o.Display.toLowerCase() === wanted.toLowerCase()) ??
      (typeof option === 'number' || /^\d+$/.test(wanted) ? options[Number(wanted) - 1] : undefined);
    if (!found) {
      throw new HubtelValidationError(
        `No option "${wanted}"; offered: ${options.map((o) => `${o.Display} (${o.Value})`).join(', ')}`,
        [{ field: 'option', message: 'not among the offered options', value: option }],
      );
    }
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
   * The user pays the cart in the client app. On success the platform POSTs the fulfillment
   * request `{OrderId, SessionId, ExtraData: {}, OrderInfo: null}` to the Service Fulfillment URL
   * (resolves once it was answered, unless a fault delayed it).
   */
  async pay(options: ServicePayOptions = {}): Promise<ServicePayResult> {
    const cart = this.record.cart;
    if (this.record.state !== 'cart' || !cart) {
      throw new SandboxStateError(
        `Nothing to pay: the session is ${this.record.state}, not at AddToCart`,
        this.record.state,
      );
    }
    const outcome = options.outcome ?? 'paid';
    if (outcome !== 'paid' && outcome !== 'failed') {
      throw new HubtelValidationError(`outcome must be "paid" or "failed"`, [
        { field: 'outcome', message: 'must be "paid" or "failed"', value: outcome },
      ]);
    }
    if (options.fault) validateCallback(options.fault, 'fault');
    if (options.amount !== undefined && (typeof options.amount !== 'number' || !(options.amount >= 0))) {
      throw new HubtelValidationError('amount must be a number of at least 0', [
        { field: 'amount', message: 'must be a number of at least 0', value: options.amount },
      ]);
    }
    const amount = options.amount === undefined ? round2(cart.Qty * cart.Price) : round2(options.amount);
    const charges = round2(amount * this.state.options.checkout.chargeRate);
    const now = isoNow();
    const order: SandboxServiceOrder = {
      orderId: options.orderId ?? hexId(),
      amount,
      charges,
      amountAfterCharges: round2(amount - charges),
      outcome,
      paidAt: now,
      transactionId: hexId(),
      externalTransactionId: networkTransactionId(),
      isFulfilled: false,
      serviceStatus: null,
      recorded: options.recordPayment !== false,
    };
    this.record.order = order;
    this.record.state = outcome === 'paid' ? 'paid' : 'payment-failed';
    if (outcome === 'paid') {
      this.state.payments++;
      this.state.sessions.addKey(this.record, `tx:${order.transactionId}`);
      this.state.sessions.addKey(this.record, `ext:${order.externalTransactionId}`);
    }
    this.touch();
    if (outcome === 'failed') return { order, deliveries: [] };

    return this.sendFulfillment(
      {
        OrderId: order.orderId,
        SessionId: this.sessionId,
        ExtraData: options.extraData ?? {},
        OrderInfo:
          options.orderInfo === true
            ? {
                Status: 'Paid',
                Items: [{ ItemId: hexId(), Name: cart.ItemName, Quantity: cart.Qty, UnitPrice: cart.Price }],
                Payment: {
                  PaymentType: 'mobilemoney',
                  AmountPaid: amount,
                  AmountAfterCharges: order.amountAfterCharges,
                  IsSuccessful: true,
                  PaymentDate: now,
                },
              }
            : options.orderInfo && typeof options.orderInfo === 'object'
              ? options.orderInfo
              : null,
      },
      options.fault,
    ).then((deliveries) => ({ order, deliveries }));
  }

  /**
   * The platform records this session's payment now (after `pay({ recordPayment: false })`): from
   * here on its status check confirms it, as a late-recorded payment would be.
   */
  recordPayment(): SandboxServiceOrder {
    const order = this.record.order;
    if (!order || order.outcome !== 'paid') {
      throw new SandboxStateError('Nothing to record: the session has no paid order', this.record.state);
    }
    order.recorded = true;
    this.touch();
    return order;
  }

  /**
   * Sends a fulfillment request for this session's cart that nobody paid for (a forgery: the
   * status check knows no payment for the SessionId). The session stays at its cart, unpaid.
   */
  async forgeFulfillment(options: ForgedFulfillmentOptions = {}): Promise<SandboxDelivery[]> {
    if (!this.record.cart) {
      throw new SandboxStateError('Nothing to forge: the session has no cart yet', this.record.state);
    }
    return this.sendFulfillment({
      OrderId: options.orderId ?? hexId(),
      SessionId: this.sessionId,
      ExtraData: options.extraData ?? {},
      OrderInfo: options.orderInfo ?? null,
    });
  }

  /** Posts a fulfillment request to the Service Fulfillment URL; resolves once answered (unless a fault delayed it). */
  private async sendFulfillment(
    body: FulfillmentRequestBody,
    fault?: CallbackFaultSpec,
  ): Promise<SandboxDelivery[]> {
    const { deliveries, done } = this.state.dispatch({
      kind: 'fulfillment-request',
      url: `${this.base}${this.fulfillmentPath}`,
      headers: { 'Content-Type': 'application/json', ...this.options.headers },
      body: body as unknown as Record<string, unknown>,
      sessionId: this.sessionId,
      orderId: body.OrderId,
      fault,
    });
    if (!deliveries.some((d) => d.state === 'scheduled')) await done;
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
    if (this.record.state === 'released' || this.record.state === 'ended') {
      throw new SandboxStateError(`The session is ${this.record.state}`, this.record.state);
    }
  }

  private touch(): void {
    this.record.updatedAt = isoNow();
    this.state.emit('session', this.record);
  }

  private async call(
    fields: Partial<ServiceFlowRequest> & { Type: string; Message: string },
    checked = true,
  ): Promise<ServiceFlowResponse> {
    const request: ServiceFlowRequest = {
      ...(fields.Sequence !== undefined ? { Sequence: fields.Sequence } : {}),
      Type: fields.Type,
      Message: fields.Message,
      ServiceCode: this.record.serviceCode,
      Operator: this.record.operator,
      ClientState: '',
      Mobile: this.record.mobile,
      SessionId: this.sessionId,
      ...this.options.extraFields,
    };
    const url = `${this.base}${this.flowPath}`;
    const exchange: SandboxSessionExchange = {
      at: isoNow(),
      url,
      request,
      statusCode: null,
      response: null,
      durationMs: 0,
      error: null,
      issues: [],
    };
    this.record.exchanges.push(exchange);
    if (this.record.exchanges.length > SANDBOX_SESSION_EXCHANGE_LIMIT) this.record.exchanges.shift();
    try {
      let result;
      try {
        result = await postJson(url, request, {
          signal: this.state.outbound.signal,
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json',
            ...this.options.headers,
          },
          timeoutMs: this.timeoutMs,
        });
      } catch (err) {
        const e = err as OutboundError;
        exchange.error = e.message;
        exchange.durationMs = e.durationMs ?? 0;
        if (e.timedOut)
          throw new HubtelTimeoutError(
            `The service application did not answer ${fields.Type} within ${this.timeoutMs} ms`,
            { cause: err },
          );
        throw new HubtelNetworkError(`Could not reach the service application: ${e.message}`, { cause: err });
      }
      exchange.statusCode = result.statusCode;
      exchange.durationMs = result.durationMs;
      let parsed: unknown = result.body;
      try {
        parsed = result.body === '' ? null : JSON.parse(result.body);
      } catch {
        // Keep the raw text: the error below says what came back.
      }
      exchange.response = parsed;
      if (result.statusCode < 200 || result.statusCode >= 300) {
        exchange.error = `HTTP ${result.statusCode}`;
        throw new HubtelApiError(
          `The service application answered ${fields.Type} with HTTP ${result.statusCode}`,
          {
            httpStatus: result.statusCode,
            body: parsed,
          },
        );
      }
      if (!checked) return (parsed ?? undefined) as ServiceFlowResponse;
      if (parsed === null || typeof parsed !== 'object') {
        exchange.error = 'not JSON';
        throw new HubtelApiError(`The service application's answer to ${fields.Type} is not a JSON object`, {
          httpStatus: result.statusCode,
          body: result.body.slice(0, 2048),
        });
      }
      exchange.issues = checkServiceFlowResponse(parsed, this.sessionId);
      const response = parsed as ServiceFlowResponse;
      this.lastResponse = response;
      const type = String(response.Type ?? '').toLowerCase();
      if (type === 'addtocart' && response.Item && typeof response.Item === 'object') {
        this.record.cart = response.Item;
        this.record.state = 'cart';
      } else if (type === 'release') {
        this.record.state = 'ended';
      } else {
        this.record.state = 'active';
      }
      if (this.strict && exchange.issues.length > 0) {
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
