import { setMaxListeners, type EventEmitter } from 'node:events';
import { HubtelTimeoutError } from 'nestjs-hubtel';
import { RecordLog } from './sandbox.record-log.js';
import { SandboxAccounts } from './sandbox.accounts.js';
import { SandboxFaults, tamperBody, type CallbackFaultSpec } from './sandbox.faults.js';
import { OutboundError, hexId, isoNow, requestOnce } from './sandbox.http.js';
import type { ResolvedSandboxOptions } from './sandbox.options.js';
import type {
  SandboxDelivery,
  SandboxEventMap,
  SandboxFulfillmentCallback,
  SandboxInvoice,
  SandboxRecordKind,
  SandboxRecordMap,
  SandboxRequestLog,
  SandboxSession,
  SandboxSmsBatch,
  SandboxSmsMessage,
} from './sandbox.types.js';

/** What `dispatch` needs to send one callback: its delivery's fields, the body and a fault. */
export interface OutboundCallback
  extends
    Pick<SandboxDelivery, 'kind' | 'account' | 'url' | 'headers'>,
    Partial<Pick<SandboxDelivery, 'checkoutId' | 'clientReference' | 'sessionId' | 'orderId'>> {
  body: Record<string, unknown>;
  /** A one-off fault; when absent, the first matching `sandbox.faults` callback fault applies. */
  fault?: CallbackFaultSpec;
}

export interface DispatchResult {
  deliveries: SandboxDelivery[];
  /** Settles once every copy was answered (or the sandbox stopped); at once when delayed. */
  sent: Promise<void>;
}

const SETTLED: ReadonlySet<string> = new Set(['delivered', 'failed', 'dropped']);

/** Everything the sandbox knows, and the machinery its faces share (callbacks out, waiting). */
export class SandboxState {
  readonly messages: RecordLog<SandboxSmsMessage>;
  readonly batches: RecordLog<SandboxSmsBatch>;
  readonly invoices: RecordLog<SandboxInvoice>;
  readonly deliveries: RecordLog<SandboxDelivery>;
  readonly sessions: RecordLog<SandboxSession>;
  readonly fulfillmentCallbacks: RecordLog<SandboxFulfillmentCallback>;
  readonly requests: RecordLog<SandboxRequestLog>;
  readonly faults = new SandboxFaults();
  readonly accounts: SandboxAccounts;
  /** Exact counters (records may have been dropped; these never are). */
  payments = 0;
  /** Message ids the kept SMS batches hold: the SMS API bounds batches by it, not only by count. */
  batchIdsKept = 0;
  /** The origin others are told to use; set when the server listens. */
  baseUrl = '';
  stopped = false;

  /** Aborted on stop: no outbound call or delayed answer of a stopped sandbox lingers (or keeps a test process alive). */
  readonly outbound = new AbortController();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly waiters = new Set<(err: Error) => void>();
  private readonly cancelScheduled = new Set<() => void>();

  constructor(
    readonly options: ResolvedSandboxOptions,
    private readonly emitter: EventEmitter<SandboxEventMap>,
  ) {
    this.accounts = new SandboxAccounts(options.accounts);
    const cap = options.recordLimit;
    this.messages = new RecordLog(cap);
    this.batches = new RecordLog(cap);
    this.invoices = new RecordLog(cap);
    this.deliveries = new RecordLog(cap);
    this.sessions = new RecordLog(cap);
    this.fulfillmentCallbacks = new RecordLog(cap);
    this.requests = new RecordLog(cap);
    // Every outbound call in flight listens on it; a busy sandbox has more than Node's 10 (no leak).
    setMaxListeners(0, this.outbound.signal);
  }

  /** Emits without letting a listener's error break the request that caused the event. */
  emit<K extends keyof SandboxEventMap>(event: K, ...args: SandboxEventMap[K]): void {
    try {
      (this.emitter.emit as (e: K, ...a: SandboxEventMap[K]) => boolean)(event, ...args);
    } catch (err) {
      this.options.logger?.error(
        `A "${String(event)}" listener threw: ${(err as Error)?.message ?? String(err)}`,
      );
    }
  }

  logFor<K extends SandboxRecordKind>(kind: K): RecordLog<SandboxRecordMap[K]> {
    const logs: { [P in SandboxRecordKind]: RecordLog<SandboxRecordMap[P]> } = {
      message: this.messages,
      invoice: this.invoices,
      delivery: this.deliveries,
      session: this.sessions,
      'fulfillment-callback': this.fulfillmentCallbacks,
    };
    return logs[kind];
  }

  track<T>(promise: Promise<T>): Promise<T> {
    const p = promise.finally(() => this.inflight.delete(p));
    this.inflight.add(p);
    return p;
  }

  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  private newDelivery(cb: OutboundCallback, body: unknown, extra: Partial<SandboxDelivery>): SandboxDelivery {
    const delivery: SandboxDelivery = {
      id: `dlv_${hexId().slice(0, 16)}`,
      account: cb.account,
      kind: cb.kind,
      url: cb.url,
      headers: { ...cb.headers },
      body,
      checkoutId: cb.checkoutId ?? null,
      clientReference: cb.clientReference ?? null,
      sessionId: cb.sessionId ?? null,
      orderId: cb.orderId ?? null,
      state: 'sending',
      faults: [],
      copy: 1,
      copies: 1,
      redeliveryOf: null,
      statusCode: null,
      responseBody: null,
      durationMs: null,
      error: null,
      createdAt: isoNow(),
      sentAt: null,
      completedAt: null,
      ...extra,
    };
    this.deliveries.push(delivery, [delivery.id]);
    return delivery;
  }

  /** Sends a callback through the callback faults; every copy (a dropped one too) is a recorded delivery. */
  dispatch(cb: OutboundCallback): DispatchResult {
    const spec = cb.fault ?? this.faults.takeCallback(cb)?.spec;
    const { body, applied } = spec
      ? tamperBody(cb.kind, cb.body, spec, hexId)
      : { body: cb.body as unknown, applied: [] as string[] };
    if (spec?.drop) {
      const dropped = this.newDelivery(cb, body, {
        state: 'dropped',
        faults: ['drop', ...applied],
        completedAt: isoNow(),
      });
      this.emit('delivery', dropped);
      return { deliveries: [dropped], sent: Promise.resolve() };
    }
    const copies = spec?.duplicate ?? 1;
    const delayMs = spec?.delayMs ?? 0;
    const faults = [...(copies > 1 ? ['duplicate'] : []), ...(delayMs > 0 ? ['delay'] : []), ...applied];
    const deliveries: SandboxDelivery[] = [];
    for (let copy = 1; copy <= copies; copy++) {
      deliveries.push(
        this.newDelivery(cb, body, { state: delayMs > 0 ? 'scheduled' : 'sending', faults, copy, copies }),
      );
    }
    for (const d of deliveries) this.emit('delivery', d);

    const sendAll = async (): Promise<void> => {
      if (spec?.concurrent) await Promise.all(deliveries.map((d) => this.send(d)));
      else for (const d of deliveries) await this.send(d);
    };
    if (delayMs === 0) return { deliveries, sent: this.track(sendAll()) };
    void this.track(
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.cancelScheduled.delete(cancel);
          void sendAll().then(resolve, resolve);
        }, delayMs);
        const cancel = () => {
          clearTimeout(timer);
          for (const d of deliveries) this.cancel(d);
          resolve();
        };
        this.cancelScheduled.add(cancel);
      }),
    );
    return { deliveries, sent: Promise.resolve() };
  }

  async redeliver(original: SandboxDelivery): Promise<SandboxDelivery> {
    const cb = { ...original, body: original.body as Record<string, unknown> };
    const delivery = this.newDelivery(cb, structuredClone(original.body), { redeliveryOf: original.id });
    this.emit('delivery', delivery);
    await this.track(this.send(delivery));
    return delivery;
  }

  private cancel(delivery: SandboxDelivery): void {
    if (SETTLED.has(delivery.state)) return;
    delivery.state = 'failed';
    delivery.error = 'sandbox stopped before sending';
    delivery.completedAt = isoNow();
    this.emit('delivery', delivery);
  }

  private async send(delivery: SandboxDelivery): Promise<void> {
    if (this.stopped) return this.cancel(delivery);
    delivery.state = 'sending';
    delivery.sentAt = isoNow();
    this.emit('delivery', delivery);
    try {
      const result = await requestOnce('POST', delivery.url, JSON.stringify(delivery.body), {
        signal: this.outbound.signal,
        headers: delivery.headers,
        timeoutMs: this.options.outboundTimeoutMs,
        keepBytes: 1024 * 1024, // a 1 MiB prefix is plenty to keep
      });
      delivery.statusCode = result.statusCode;
      delivery.responseBody = result.body.slice(0, 2048); // enough for the dashboard
      delivery.durationMs = result.durationMs;
      delivery.state = result.statusCode >= 200 && result.statusCode < 300 ? 'delivered' : 'failed';
      if (delivery.state === 'failed') {
        delivery.error = `HTTP ${result.statusCode}`;
        this.options.logger?.warn(
          `${delivery.kind} ${delivery.id} to ${originOf(delivery.url)} answered ${result.statusCode}`,
        );
      }
    } catch (err) {
      const e = err as OutboundError;
      delivery.state = 'failed';
      delivery.error = e.message;
      delivery.durationMs = e.durationMs ?? null;
      this.options.logger?.warn(
        `${delivery.kind} ${delivery.id} to ${originOf(delivery.url)} failed: ${e.message}`,
      );
    }
    delivery.completedAt = isoNow();
    this.emit('delivery', delivery);
  }

  async waitFor<K extends SandboxRecordKind>(
    kind: K,
    predicate: (record: SandboxRecordMap[K]) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<SandboxRecordMap[K]> {
    const existing = this.logFor(kind).findLast(predicate);
    if (existing) return existing;
    if (this.stopped) throw new HubtelTimeoutError(`waitFor('${kind}'): the sandbox is stopped`);
    return new Promise((resolve, reject) => {
      const settle = (done: () => void) => {
        clearTimeout(timer);
        this.emitter.off(kind, listener as never);
        this.waiters.delete(abort);
        done();
      };
      const abort = (err: Error) => settle(() => reject(err));
      const listener = (record: SandboxRecordMap[K]) => {
        try {
          if (predicate(record)) settle(() => resolve(record));
        } catch (err) {
          abort(err as Error);
        }
      };
      const timer = setTimeout(
        () => abort(new HubtelTimeoutError(`waitFor('${kind}'): nothing matched within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.emitter.on(kind, listener as never);
      this.waiters.add(abort);
    });
  }

  clearRecords(): void {
    const { messages, batches, invoices, deliveries, sessions, fulfillmentCallbacks, requests } = this;
    for (const log of [messages, batches, invoices, deliveries, sessions, fulfillmentCallbacks, requests])
      (log as RecordLog<object>).clear();
    this.payments = 0;
    this.batchIdsKept = 0;
  }

  shutdown(): void {
    this.stopped = true;
    this.outbound.abort();
    this.cancelPending();
    for (const abort of [...this.waiters]) abort(new HubtelTimeoutError('The sandbox stopped while waiting'));
  }

  /** Cancels delayed callbacks without stopping (used by reset). */
  cancelPending(): void {
    for (const cancel of [...this.cancelScheduled]) cancel();
    this.cancelScheduled.clear();
  }

  isSettled(delivery: SandboxDelivery): boolean {
    return SETTLED.has(delivery.state);
  }
}

function originOf(url: string): string {
  return URL.parse(url)?.origin ?? '(invalid URL)';
}
