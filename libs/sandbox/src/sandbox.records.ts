import { EventEmitter } from 'node:events';
import { SandboxNotFoundError } from './sandbox.errors.js';
import { byAccount } from './sandbox.accounts.js';
import { platformMsisdn, platformTime } from './sandbox.http.js';
import { settleMessage } from './sms.api.js';
import { findInvoice } from './checkout.payments.js';
import { SandboxState } from './sandbox.state.js';
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
  SandboxSmsMessage,
  SandboxSmsStatus,
  SandboxStats,
} from './sandbox.types.js';
import type { SandboxAccountFilter } from './sandbox.option-types.js';

export interface WaitOptions {
  /** Give up (HubtelTimeoutError) after this long. Default 10 s. */
  timeoutMs?: number;
}

/** What a sandbox recorded, the events it emits for them, and waiting for one. */
export class SandboxRecords extends EventEmitter<SandboxEventMap> {
  protected readonly state: SandboxState;

  constructor(options: ResolvedSandboxOptions) {
    super();
    this.state = new SandboxState(options, this);
  }

  /** Messages sent (oldest first; the newest `recordLimit` are kept); `{ account }`: sent with that account's keys. */
  messages(filter: SandboxAccountFilter = {}): SandboxSmsMessage[] {
    const now = Date.now();
    return byAccount(this.state.accounts, this.state.messages.values(), filter.account).map((m) =>
      settleMessage(m, now),
    );
  }

  /** Messages sent to one number, in any accepted form (`0241234567`, `+233 24 123 4567`). */
  messagesTo(msisdn: string, filter: SandboxAccountFilter = {}): SandboxSmsMessage[] {
    const wanted = platformMsisdn(msisdn) ?? msisdn;
    return this.messages(filter).filter((m) => m.msisdn === wanted);
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

  /** Invoices created (oldest first); `{ account }`: created with that account's keys. */
  invoices(filter: SandboxAccountFilter = {}): SandboxInvoice[] {
    return byAccount(this.state.accounts, this.state.invoices.values(), filter.account);
  }

  /** An invoice by checkout id or client reference. */
  invoice(checkoutIdOrReference: string): SandboxInvoice | undefined {
    return findInvoice(this.state, checkoutIdOrReference);
  }

  /** Callback deliveries (checkout web callbacks and fulfillment requests), oldest first. */
  deliveries(
    filter?: Partial<
      Pick<
        SandboxDelivery,
        'account' | 'kind' | 'checkoutId' | 'clientReference' | 'sessionId' | 'orderId' | 'state'
      >
    >,
  ): SandboxDelivery[] {
    if (!filter) return this.state.deliveries.values();
    if (filter.account !== undefined) this.state.accounts.require(filter.account);
    return this.state.deliveries.filter((d) =>
      Object.entries(filter).every(([k, v]) => v === undefined || d[k as keyof SandboxDelivery] === v),
    );
  }

  delivery(id: string): SandboxDelivery | undefined {
    return this.state.deliveries.get(id);
  }

  /** Programmable-services sessions played by `serviceApp()` drivers; `{ account }`: that account's services'. */
  sessions(filter: SandboxAccountFilter = {}): SandboxSession[] {
    return byAccount(this.state.accounts, this.state.sessions.values(), filter.account);
  }

  session(sessionId: string): SandboxSession | undefined {
    return this.state.sessions.get(sessionId);
  }

  /** Fulfillment callbacks received on `POST /callback`; `{ account }`: for that account's sessions. */
  fulfillmentCallbacks(filter: SandboxAccountFilter = {}): SandboxFulfillmentCallback[] {
    return byAccount(this.state.accounts, this.state.fulfillmentCallbacks.values(), filter.account);
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

  /** The newest record of `kind` that matches, or the first to come (re-tested on every change, so "a delivery that completed" works). */
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
}
