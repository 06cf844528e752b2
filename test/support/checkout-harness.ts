import { Injectable, type INestApplication, type DynamicModule, type LoggerService } from '@nestjs/common';
import { EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import {
  CheckoutEvents,
  CheckoutModule,
  CheckoutReconciler,
  CheckoutService,
  OnCheckoutDeadLetter,
  OnCheckoutExpired,
  OnCheckoutFailed,
  OnCheckoutPaid,
  OnCheckoutRejected,
  OnCheckoutAttention,
  type CheckoutAttentionEvent,
  type CheckoutDeadLetterEvent,
  type CheckoutExpiredEvent,
  type CheckoutFailedEvent,
  type CheckoutModuleExtras,
  type CheckoutModuleOptions,
  type CheckoutPaidEvent,
  type CheckoutRejectedEvent,
} from 'nestjs-hubtel/checkout';
import { MemoryStore, type StoreWriteOptions } from 'nestjs-hubtel';
import { FakeHttpServer, type RecordedRequest } from './fake-http-server.js';

export type AdapterKind = 'express' | 'fastify';
export const ADAPTERS: AdapterKind[] = ['express', 'fastify'];

export const TEST_CREDENTIALS = { clientId: 'checkout-id', clientSecret: 'checkout-secret-value' };
export const POS_SALES_ID = '11684';
export const BASIC_AUTH = `Basic ${Buffer.from(`${TEST_CREDENTIALS.clientId}:${TEST_CREDENTIALS.clientSecret}`).toString('base64')}`;

/** The status-check `data` of a transaction, as the fake answers it. */
export interface FakeTransaction {
  status: 'Paid' | 'Unpaid' | 'Refunded' | string;
  amount: number;
  clientReference?: string;
}

/**
 * A minimal stand-in for the checkout API and the status check, answering like the contract's
 * samples, recording every request (so tests assert the exact outgoing request).
 */
export class FakeCheckoutApi {
  /** Status-check answers by clientReference; unknown references are answered 404. */
  readonly transactions = new Map<string, FakeTransaction>();
  private seq = 0;

  private constructor(readonly server: FakeHttpServer) {}

  static async start(): Promise<FakeCheckoutApi> {
    const api = new FakeCheckoutApi(await FakeHttpServer.start());
    api.server.route('POST', '/items/initiate', (req) => {
      const body = req.body as Record<string, unknown>;
      const checkoutId = `chk${String(++api.seq).padStart(6, '0')}`;
      return {
        status: 200,
        body: {
          responseCode: '0000',
          status: 'Success',
          data: {
            checkoutUrl: `https://pay.example.test/${checkoutId}`,
            checkoutId,
            clientReference: body.clientReference,
            message: '',
            checkoutDirectUrl: `https://pay.example.test/${checkoutId}/direct`,
          },
        },
      };
    });
    api.server.route('GET', /^\/transactions\/[^/]+\/status$/, (req) => {
      const ref = req.query.get('clientReference') ?? '';
      const txn = api.transactions.get(ref);
      if (!txn) return { status: 404, body: { message: 'Transaction not found', responseCode: '4040' } };
      return {
        status: 200,
        body: {
          message: 'Successful',
          responseCode: '0000',
          data: {
            date: '2024-05-01T10:00:00Z',
            status: txn.status,
            transactionId: `txn-${ref}`,
            externalTransactionId: `ext-${ref}`,
            paymentMethod: 'mobilemoney',
            clientReference: txn.clientReference ?? ref,
            currencyCode: null,
            amount: txn.amount,
            charges: 0.01,
            amountAfterCharges: txn.amount - 0.01,
            isFulfilled: null,
          },
        },
      };
    });
    return api;
  }

  get url(): string {
    return this.server.url;
  }

  get initiateRequests(): RecordedRequest[] {
    return this.server.requestsTo('POST', '/items/initiate');
  }

  get statusRequests(): RecordedRequest[] {
    return this.server.requestsTo('GET', /^\/transactions\//);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

type Waiter = { kind: keyof Recorded; count: number; resolve: () => void };
interface Recorded {
  paid: CheckoutPaidEvent[];
  failed: CheckoutFailedEvent[];
  rejected: CheckoutRejectedEvent[];
  expired: CheckoutExpiredEvent[];
  dead: CheckoutDeadLetterEvent[];
  plainPaid: CheckoutPaidEvent[];
  attention: CheckoutAttentionEvent[];
}

/** The host app's handlers, as a user writes them: they record what they saw, and can be told to throw. */
@Injectable()
export class RecordingHandlers {
  readonly events: Recorded = {
    paid: [],
    failed: [],
    rejected: [],
    expired: [],
    dead: [],
    plainPaid: [],
    attention: [],
  };
  /** Paid handler calls, failures included. */
  paidCalls = 0;
  /** The paid handler throws this many times before succeeding. */
  paidFailuresLeft = 0;
  private waiters: Waiter[] = [];

  /** When set, the paid handler waits for it (to observe what is recorded while a handler runs). */
  paidGate?: Promise<void>;

  @OnCheckoutPaid()
  async onPaid(event: CheckoutPaidEvent): Promise<void> {
    this.paidCalls++;
    if (this.paidGate) await this.paidGate;
    if (this.paidFailuresLeft > 0) {
      this.paidFailuresLeft--;
      // Handler errors often carry personal data: the module must mask it in logs.
      throw new Error(
        `fulfilment for ${event.clientReference} is down (receipt SMS to ${event.payee?.mobileNumber ?? '-'} failed)`,
      );
    }
    this.push('paid', event);
  }

  /** A plain @OnEvent: an observer, told once the handlers succeeded (at least once). */
  @OnEvent(CheckoutEvents.Paid, { suppressErrors: false })
  onPaidPlain(event: CheckoutPaidEvent): void {
    this.push('plainPaid', event);
  }

  @OnCheckoutFailed()
  onFailed(event: CheckoutFailedEvent): void {
    this.push('failed', event);
  }

  @OnCheckoutRejected()
  onRejected(event: CheckoutRejectedEvent): void {
    this.push('rejected', event);
  }

  @OnCheckoutExpired()
  onExpired(event: CheckoutExpiredEvent): void {
    this.push('expired', event);
  }

  @OnCheckoutAttention()
  onAttention(event: CheckoutAttentionEvent): void {
    this.push('attention', event);
  }

  @OnCheckoutDeadLetter()
  onDead(event: CheckoutDeadLetterEvent): void {
    this.push('dead', event);
  }

  /** Resolves once `count` events of `kind` have been seen. */
  waitFor(kind: keyof Recorded, count = 1): Promise<void> {
    if (this.events[kind].length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ kind, count, resolve }));
  }

  private push<K extends keyof Recorded>(kind: K, event: Recorded[K][number]): void {
    (this.events[kind] as unknown[]).push(event);
    this.waiters = this.waiters.filter((w) => {
      if (w.kind === kind && this.events[kind].length >= w.count) {
        w.resolve();
        return false;
      }
      return true;
    });
  }
}

export interface CheckoutTestApp {
  app: INestApplication;
  /** Origin of the app (`http://127.0.0.1:<port>`). */
  url: string;
  callbackUrl: string;
  service: CheckoutService;
  reconciler: CheckoutReconciler;
  handlers: RecordingHandlers;
  /** POSTs a body (object → JSON, string → as is) to the callback route. */
  post(
    body: unknown,
    options?: { path?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; text: string }>;
  close(): Promise<void>;
}

/** Options every test starts from: the fake's URLs, short delays. */
export function baseOptions(
  api: { url: string },
  overrides: Partial<CheckoutModuleOptions> = {},
): CheckoutModuleOptions {
  return {
    ...TEST_CREDENTIALS,
    baseUrls: { checkout: api.url, status: api.url },
    merchantAccountNumber: '2017101',
    publicBaseUrl: 'https://shop.example.test',
    returnUrl: 'https://shop.example.test/return',
    cancellationUrl: 'https://shop.example.test/cancel',
    retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    handlers: { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 } },
    ...overrides,
  };
}

/**
 * Boots a real Nest app on the chosen adapter with the CheckoutModule and the recording handlers.
 * Silent unless a `logger` is given (a CaptureLogger, to assert on what is logged).
 */
export async function startCheckoutApp(
  kind: AdapterKind,
  options: CheckoutModuleOptions,
  extras: CheckoutModuleExtras = {},
  module?: DynamicModule,
  logger: LoggerService | false = false,
  /** More modules of the host app (e.g. HubtelRedisModule.forRoot()). */
  imports: DynamicModule[] = [],
): Promise<CheckoutTestApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      EventEmitterModule.forRoot(),
      ...imports,
      module ?? CheckoutModule.forRoot({ ...options, ...extras }),
    ],
    providers: [RecordingHandlers],
  }).compile();
  const app =
    kind === 'express'
      ? moduleRef.createNestApplication(new ExpressAdapter(), { logger })
      : moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1').replace('localhost', '127.0.0.1');
  const path = extras.callback?.path ?? 'hubtel/checkout/callback';
  let closing: Promise<void> | undefined;
  const post: CheckoutTestApp['post'] = async (body, opts = {}) => {
    const res = await fetch(`${url}/${(opts.path ?? path).replace(/^\//, '')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cache-control': 'no-cache', ...(opts.headers ?? {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text };
  };
  return {
    app,
    url,
    callbackUrl: `${url}/${path}`,
    service: app.get(CheckoutService),
    reconciler: app.get(CheckoutReconciler),
    handlers: app.get(RecordingHandlers),
    post,
    close: () => (closing ??= app.close()),
  };
}

/** A callback body in the contract's shape. */
export function callbackBody(
  fields: { ref: string; checkoutId: string; amount?: number; status?: string; responseCode?: string },
  extra: Record<string, unknown> = {},
): Record<string, any> {
  const success = (fields.status ?? 'Success') === 'Success';
  return {
    ResponseCode: fields.responseCode ?? (success ? '0000' : '2001'),
    Status: success ? 'Success' : 'Failed',
    Data: {
      CheckoutId: fields.checkoutId,
      SalesInvoiceId: `inv-${fields.checkoutId}`,
      ClientReference: fields.ref,
      Status: fields.status ?? 'Success',
      Amount: fields.amount ?? 0,
      CustomerPhoneNumber: '233241234567',
      PaymentDetails: { MobileMoneyNumber: '233241234567', PaymentType: 'mobilemoney', Channel: 'mtn-gh' },
      Description: success
        ? 'The MTN Mobile Money payment has been approved and processed successfully.'
        : 'Payment failed',
    },
    ...extra,
  };
}

/** Waits a little for things that must NOT happen (a second event): no correctness depends on it. */
export function settle(ms = 50): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A MemoryStore with the faults tests need: `failWrites` makes writes to matching keys throw (a
 * store that is down); `jitter` makes every operation first wait a random 0–3 ms, so concurrent
 * callers really interleave between their reads and writes (in a plain MemoryStore they rarely do).
 */
export class FaultyStore extends MemoryStore {
  jitter = false;
  failWrites?: RegExp;

  private async before(key: string, write: boolean): Promise<void> {
    if (this.jitter) await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4)));
    if (write && this.failWrites?.test(key)) throw new Error(`store unavailable (write to ${key})`);
  }
  override async get<T>(key: string) {
    await this.before(key, false);
    return super.get<T>(key);
  }
  override async setIfAbsent<T>(key: string, value: T, options?: StoreWriteOptions) {
    await this.before(key, true);
    return super.setIfAbsent(key, value, options);
  }
  override async compareAndSet<T>(
    key: string,
    expectedVersion: number,
    value: T,
    options?: StoreWriteOptions,
  ) {
    await this.before(key, true);
    return super.compareAndSet(key, expectedVersion, value, options);
  }
  override async set<T>(key: string, value: T, options?: StoreWriteOptions) {
    await this.before(key, true);
    return super.set(key, value, options);
  }
}

/** A FaultyStore with jitter on: races that pass on it pass because of the atomic operations, not lucky timing. */
export class JitteryStore extends FaultyStore {
  override jitter = true;
}
