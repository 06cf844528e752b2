import { randomUUID } from 'node:crypto';
import {
  HUBTEL_DEFAULT_ACCOUNT,
  HubtelApiError,
  HubtelError,
  HubtelTimeoutError,
  HubtelValidationError,
  tryNormalizeMsisdn,
} from 'nestjs-hubtel';
import { type HubtelRequest, type HubtelResponse } from '#internal';
import { ghanaNetwork, messageStatusBody, sentMessageBody } from 'nestjs-hubtel/sandbox';
import type { SandboxSmsMessage } from 'nestjs-hubtel/sandbox';
import { SMS_HTTP_TRANSPORT, SMS_PATHS, SMS_TRANSPORT_FACTORY } from 'nestjs-hubtel/sms';

/** One message the app "sent", recorded as the sandbox records a message (`account`: `default` or a named one). */
export interface CapturedSms extends Pick<
  SandboxSmsMessage,
  'messageId' | 'batchId' | 'kind' | 'from' | 'content' | 'account'
> {
  /** MSISDN as the module sent it (`233241234567`). */
  to: string;
  /** ISO time it was captured. */
  at: string;
}

/** `Test.createTestingModule(...)` (or anything with `overrideProvider(token).useValue(value)`). */
export interface OverridableModuleBuilder<B> {
  overrideProvider(token: unknown): { useValue(value: unknown): B };
}

/**
 * Captures every SMS the app sends, with no network: it stands in for the SmsModule's HTTP
 * transports (every account's, through `install`) and answers like the platform's SMS API.
 *
 * ```ts
 * const sms = new SmsCapture();
 * const moduleRef = await sms.install(Test.createTestingModule({ imports: [AppModule] })).compile();
 * // or: Test.createTestingModule(...).overrideProvider(SMS_HTTP_TRANSPORT).useValue(sms)
 * ...
 * expect(sms.messagesTo('0241234567')).toHaveLength(1);
 * ```
 */
export class SmsCapture {
  private readonly captured: CapturedSms[] = [];
  private readonly failures: Error[] = [];
  private readonly waiters = new Set<(m: CapturedSms) => void>();
  private requestCount = 0;

  /** Every message captured, oldest first (a copy). */
  get messages(): CapturedSms[] {
    return [...this.captured];
  }

  get last(): CapturedSms | undefined {
    return this.captured.at(-1);
  }

  /** Calls the SmsService made (sends and status look-ups, failed ones too). */
  get requests(): number {
    return this.requestCount;
  }

  /** Replaces every account's SMS transport in a testing module builder; returns the builder. */
  install<B extends OverridableModuleBuilder<B>>(builder: B): B {
    return builder
      .overrideProvider(SMS_HTTP_TRANSPORT)
      .useValue(this)
      .overrideProvider(SMS_TRANSPORT_FACTORY)
      .useValue((account: string) => this.forAccount(account));
  }

  /** Messages sent by one SMS account (`default`, or a named account). */
  messagesFrom(account: string): CapturedSms[] {
    return this.captured.filter((m) => m.account === account);
  }

  /** Messages to one number, in any accepted form (`0241234567`, `+233 24 123 4567`). */
  messagesTo(phone: string): CapturedSms[] {
    const wanted = normalize(phone);
    return this.captured.filter((m) => m.to === wanted);
  }

  /** Forgets every message (and pending failures). */
  clear(): void {
    this.captured.length = 0;
    this.failures.length = 0;
    this.requestCount = 0;
  }

  /** Makes the next `times` sends fail with `error` (a HubtelInsufficientCreditError, say). */
  failNext(error: Error, times = 1): this {
    if (!(error instanceof Error))
      throw new HubtelValidationError('failNext(error) needs an Error', [
        { field: 'error', message: 'must be an Error' },
      ]);
    if (!Number.isInteger(times) || times < 1)
      throw new HubtelValidationError('failNext times must be a positive integer', [
        { field: 'times', message: 'must be >= 1', value: times },
      ]);
    for (let i = 0; i < times; i++) this.failures.push(error);
    return this;
  }

  /** The first message (captured or to come) to a number or matching a predicate; times out in 5 s. */
  waitForMessage(
    match: string | ((m: CapturedSms) => boolean),
    options: { timeoutMs?: number } = {},
  ): Promise<CapturedSms> {
    const wanted = typeof match === 'string' ? normalize(match) : undefined;
    const test = typeof match === 'string' ? (m: CapturedSms) => m.to === wanted : match;
    const existing = this.captured.find(test);
    if (existing) return Promise.resolve(existing);
    const timeoutMs = options.timeoutMs ?? 5_000;
    return new Promise((resolve, reject) => {
      const waiter = (m: CapturedSms) => {
        if (!test(m)) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(m);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new HubtelTimeoutError(
            `SmsCapture.waitForMessage: no matching message within ${timeoutMs} ms (${this.captured.length} captured)`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  // The HttpTransport surface the SmsService calls.
  /** Where the module thinks it sends (nowhere: the capture answers). */
  baseUrl(): string | undefined {
    return 'http://sms-capture.invalid';
  }

  request<T = unknown>(req: HubtelRequest): Promise<HubtelResponse<T>> {
    return this.answer<T>(req, HUBTEL_DEFAULT_ACCOUNT);
  }

  /** The transport surface for a named account: what it sends is captured with its name. */
  private forAccount(account: string): Pick<SmsCapture, 'baseUrl' | 'request'> {
    return {
      baseUrl: () => this.baseUrl(),
      request: <T>(req: HubtelRequest) => this.answer<T>(req, account),
    };
  }

  private async answer<T>(req: HubtelRequest, account: string): Promise<HubtelResponse<T>> {
    this.requestCount++;
    const failure = this.failures.shift();
    if (failure) throw failure;
    const reply = (data: unknown): HubtelResponse<T> => ({
      status: 200,
      data: data as T,
      headers: { 'content-type': 'application/json' },
      attempts: 1,
    });
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { From: from, Content: content } = body;
    const batch = req.path === SMS_PATHS.batchSend;
    if (req.method === 'POST' && (batch || req.path === SMS_PATHS.send)) {
      const recipients = batch ? body.Recipients : typeof body.To === 'string' ? [body.To] : undefined;
      if (typeof from !== 'string' || typeof content !== 'string' || !Array.isArray(recipients))
        throw new HubtelApiError(
          batch
            ? 'SmsCapture: the batch request must be {From, Recipients: string[], Content}'
            : 'SmsCapture: the send request must be {From, To, Content}',
          { httpStatus: 400, responseCode: '7' },
        );
      const batchId = batch ? randomUUID() : null;
      const kind = batch ? 'batch' : 'single';
      const sent = recipients.map((to: unknown) =>
        this.capture({ account, batchId, kind, from, to: String(to), content }),
      );
      if (batch) {
        const data = sent.map(({ to, messageId }) => ({ recipient: to, content, messageId }));
        return reply({ batchId, status: 0, data });
      }
      const { messageId, to } = sent[0]!;
      return reply(
        sentMessageBody({ rate: 0, messageId, networkId: ghanaNetwork(to).networkId, clientReference: null }),
      );
    }
    if (req.method === 'GET' && req.path.startsWith('/v1/messages/batch/')) {
      const batchId = decodeURIComponent(req.path.slice('/v1/messages/batch/'.length));
      const messages = this.captured.filter((m) => m.batchId === batchId);
      if (messages.length === 0) throw this.notFound(`batch ${batchId}`);
      return reply({ batchId, rate: 0, data: messages.map(statusOf) });
    }
    if (req.method === 'GET' && req.path.startsWith('/v1/messages/')) {
      const messageId = decodeURIComponent(req.path.slice('/v1/messages/'.length));
      const message = this.captured.find((m) => m.messageId === messageId);
      if (!message) throw this.notFound(`message ${messageId}`);
      return reply(statusOf(message));
    }
    throw new HubtelError(
      'HUBTEL_CONFIG_INVALID',
      `SmsCapture does not know ${req.method} ${req.path} (${req.operation})`,
    );
  }

  private capture(fields: Omit<CapturedSms, 'messageId' | 'at'>): CapturedSms {
    const message: CapturedSms = { messageId: randomUUID(), ...fields, at: new Date().toISOString() };
    this.captured.push(message);
    for (const waiter of [...this.waiters]) waiter(message);
    return message;
  }

  private notFound(what: string): HubtelApiError {
    return new HubtelApiError(`SmsCapture: no ${what} was sent`, { httpStatus: 404 }, 'HUBTEL_NOT_FOUND');
  }
}

function normalize(phone: string): string {
  const result = tryNormalizeMsisdn(phone);
  return result.ok ? result.msisdn : phone;
}

function statusOf(m: CapturedSms): Record<string, unknown> {
  const time = m.at.slice(0, 19);
  return messageStatusBody({ ...m, rate: 0, status: 'Delivered', updateTime: time, time });
}
