import type { OutgoingHttpHeaders, Server } from 'node:http';
import { HubtelConfigError, HubtelValidationError } from 'nestjs-hubtel';
import type { CheckoutModuleOptions } from 'nestjs-hubtel/checkout';
import {
  HubtelSandbox,
  type HubtelSandboxOptions,
  type PaymentResult,
  type PayOptions,
  type RecordServicePaymentOptions,
  type SandboxAccount,
  type SandboxServiceSession,
  type ServiceAppDriverOptions,
  type SandboxSession,
  type SandboxReply,
  type SandboxRequestContext,
  sandboxEnv,
} from 'nestjs-hubtel/sandbox';
import type { ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import type { SmsModuleOptions } from 'nestjs-hubtel/sms';
import { TEST_SANDBOX_TUNNEL_PATH } from './testing.constants.js';
import { appOrigin, endpointUrl, request, type NestAppLike } from './testing.http.js';

export type TestSandboxOptions = HubtelSandboxOptions;

export interface CheckoutTestOptions extends Partial<CheckoutModuleOptions> {
  /** Your app's origin, when known before it starts. Default: the tunnel to the `attach()`ed app. */
  appUrl?: string;
}

/** `markPaid`'s: the payer's number and channel, as `pay` takes them. */
export type MarkPaidOptions = Pick<PayOptions, 'phone' | 'channel'>;

type AccountModuleOptions = Pick<TestSandbox, 'smsOptions' | 'checkoutOptions' | 'serviceAppOptions'>;
/** One account of a sandbox serving several: its module options, environment, driver and payments. */
export interface TestSandboxAccount extends AccountModuleOptions {
  /** Its name, keys, POS Sales ID and sender ids. */
  readonly account: SandboxAccount;
  /** Its `HUBTEL_*` variables (a named account's: `HUBTEL_ACCOUNTS` and `HUBTEL_<NAME>_*`). */
  env(): Record<string, string>;
  /** The driver, playing the client app against this account's programmable service. */
  serviceApp(
    serviceAppUrl: string,
    options?: Omit<ServiceAppDriverOptions, 'account'>,
  ): SandboxServiceSession;
  /** `markServicePaid` for a session of this account's service. */
  markServicePaid(sessionId: string, options?: Omit<RecordServicePaymentOptions, 'account'>): SandboxSession;
}

// Request headers that describe one hop, not the request (the sandbox answered any 100-continue): never relayed.
const HOP_BY_HOP = new Set([
  ...'host connection keep-alive transfer-encoding content-length upgrade'.split(' '),
  ...'proxy-connection te trailer expect'.split(' '),
]);
// Answer headers worth relaying to the sandbox's caller.
const RELAYED_ANSWER_HEADERS = 'content-type location set-cookie cache-control retry-after allow'.split(' ');

/**
 * A Hubtel sandbox for one test file: the whole `HubtelSandbox` (records, `pay`, `waitFor*`,
 * faults, the service-app driver) plus module options that point at it, and a tunnel that relays
 * the platform's callbacks to your app once it listens on its random port.
 *
 * ```ts
 * const hubtel = await createTestSandbox();
 * const moduleRef = await Test.createTestingModule({
 *   imports: [EventEmitterModule.forRoot(), CheckoutModule.forRoot(hubtel.checkoutOptions()), OrdersModule],
 * }).compile();
 * const app = moduleRef.createNestApplication();
 * await app.listen(0, '127.0.0.1');
 * hubtel.attach(app);
 * ...
 * await app.close();
 * await hubtel.stop();
 * ```
 */
export class TestSandbox extends HubtelSandbox {
  static override async start(options: TestSandboxOptions = {}): Promise<TestSandbox> {
    return new TestSandbox(options).listen();
  }

  private appOrigin: string | undefined;

  constructor(options: TestSandboxOptions = {}) {
    super(options);
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
      this.addRoute(method, `${TEST_SANDBOX_TUNNEL_PATH}/*`, (ctx) => this.relay(ctx));
  }

  /** `http://127.0.0.1:<port>/_tunnel`: the app's public address, relayed to the attached app. */
  get tunnelUrl(): string {
    return `${this.url}${TEST_SANDBOX_TUNNEL_PATH}`;
  }

  /** The app the tunnel relays to, once attached. */
  get attachedUrl(): string | undefined {
    return this.appOrigin;
  }

  /** The listening Nest app (or origin) that calls to `tunnelUrl` are relayed to, unchanged. */
  attach(target: NestAppLike | string): this {
    if (typeof target === 'string') {
      this.appOrigin = new URL(endpointUrl(target)).origin;
      return this;
    }
    const server = target?.getHttpServer?.() as Server | undefined;
    if (!server || typeof server.address !== 'function' || !server.listening)
      throw new HubtelConfigError(
        'attach',
        'the app is not listening: await app.listen(0, "127.0.0.1") before attach(app)',
      );
    this.appOrigin = appOrigin(server);
    return this;
  }

  /** Stops relaying (the tunnel answers 502 until the next `attach`). */
  detach(): void {
    this.appOrigin = undefined;
  }

  /** SmsModule options with the account's SMS keys (and its first sender id, if any), sending here. */
  smsOptions(overrides: Partial<SmsModuleOptions> = {}): SmsModuleOptions {
    return this.forAccount().smsOptions(overrides);
  }

  /** CheckoutModule options: the account's API keys and POS Sales ID, the tunnel (or `appUrl`) as the app. */
  checkoutOptions(overrides: CheckoutTestOptions = {}): CheckoutModuleOptions {
    return this.forAccount().checkoutOptions(overrides);
  }

  /** ServiceAppModule options: callbacks and status check go here (the account's credentials, if any). */
  serviceAppOptions(overrides: Partial<ServiceAppModuleOptions> = {}): ServiceAppModuleOptions {
    return this.forAccount().serviceAppOptions(overrides);
  }

  /** One account's options, env, driver and payments (no name: the default's); an unknown name throws. */
  forAccount(name?: string): TestSandboxAccount {
    const account = this.account(name);
    const { sms, api, callback } = account.credentials;
    const [senderId] = account.senderIds;
    return {
      account,
      smsOptions: (overrides = {}) => ({
        clientId: sms.clientId,
        clientSecret: sms.clientSecret,
        baseUrl: this.baseUrls().sms,
        ...(senderId !== undefined ? { senderId } : {}),
        ...overrides,
      }),
      checkoutOptions: ({ appUrl, ...rest } = {}) => {
        const base = (appUrl ?? this.tunnelUrl).replace(/\/+$/, '');
        const urls = this.baseUrls();
        return {
          clientId: api.clientId,
          clientSecret: api.clientSecret,
          posSalesId: account.posSalesId,
          publicBaseUrl: base,
          returnUrl: `${base}/return`,
          cancellationUrl: `${base}/cancel`,
          ...rest,
          baseUrls: { checkout: urls.checkout, status: urls.status, ...rest.baseUrls },
        };
      },
      serviceAppOptions: (overrides = {}) => {
        const urls = this.baseUrls();
        return {
          callbackUrl: urls.fulfillmentCallback,
          ...(callback ? { callbackCredentials: callback } : {}),
          statusCheck: { ...api, posSalesId: account.posSalesId, url: urls.status },
          ...overrides,
        };
      },
      env: () => sandboxEnv(this, { accounts: [account.name] }),
      serviceApp: (url, options = {}) => this.serviceApp(url, { ...options, account: account.name }),
      markServicePaid: (sessionId, options = {}) =>
        this.recordServicePayment(sessionId, { ...options, account: account.name }),
    };
  }

  /** Records a session's payment, sending nothing: the status check then confirms your fulfillment request. */
  markServicePaid(sessionId: string, options: RecordServicePaymentOptions = {}): SandboxSession {
    return this.recordServicePayment(sessionId, options);
  }

  /** The `HUBTEL_*` environment for apps configured from it (`checkoutOptionsFromEnv`, ...). */
  env(): Record<string, string> {
    return sandboxEnv(this);
  }

  /** Marks an invoice paid WITHOUT its callback: the status check then confirms the one your test sends. */
  markPaid(checkoutIdOrReference: string, options: MarkPaidOptions = {}): Promise<PaymentResult> {
    if (options === null || typeof options !== 'object')
      throw new HubtelValidationError('markPaid options must be an object', [
        { field: 'options', message: 'must be an object' },
      ]);
    return this.pay(checkoutIdOrReference, { ...options, outcome: 'paid', fault: { drop: true } });
  }

  private async relay(ctx: SandboxRequestContext): Promise<SandboxReply> {
    const origin = this.appOrigin;
    if (!origin) {
      const message = 'No app is attached to the sandbox tunnel: call sandbox.attach(app) after app.listen()';
      return { status: 502, json: { error: 'HUBTEL_TUNNEL_NOT_ATTACHED', message } };
    }
    const rest = ctx.path.slice(TEST_SANDBOX_TUNNEL_PATH.length) || '/';
    const query = ctx.query.toString();
    const body = await ctx.body();
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(ctx.req.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    if (body.length > 0) headers['content-length'] = String(body.length);
    try {
      const url = `${origin}${rest}${query ? `?${query}` : ''}`;
      const answer = await request(ctx.method, url, body, headers, 30_000);
      const relayed = RELAYED_ANSWER_HEADERS.filter((name) => answer.headers[name] !== undefined);
      const answerHeaders = Object.fromEntries(relayed.map((name) => [name, answer.headers[name]!]));
      return { status: answer.status, headers: answerHeaders, text: answer.text };
    } catch (err) {
      const message = `The attached app at ${origin} did not answer: ${(err as Error).message}`;
      return { status: 502, json: { error: 'HUBTEL_TUNNEL_UNREACHABLE', message } };
    }
  }
}

/** Starts a sandbox on 127.0.0.1 and a random port, for one test file. Stop it in `afterAll`. */
export function createTestSandbox(options: TestSandboxOptions = {}): Promise<TestSandbox> {
  return TestSandbox.start(options);
}
