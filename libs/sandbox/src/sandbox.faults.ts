import type { ValidationIssue } from 'nestjs-hubtel';
import { invalidArgument, invalidInput } from './sandbox.errors.js';
import type { OutboundCallback } from './sandbox.state.js';
import type { CheckoutCallbackBody, SandboxDeliveryKind, SandboxRequestLog } from './sandbox.types.js';
import type { SandboxApi } from './sandbox.route-types.js';

/**
 * A fault on requests the sandbox receives (the platform misbehaving towards the caller).
 * With no `match`, it hits every request except the sandbox's own admin routes (`/_sandbox`).
 * Effects combine: `delayMs` first, then one of `timeout`, `dropConnection`, `html`, `status`;
 * with only `delayMs`, the normal answer follows the delay.
 */
export interface InboundFaultSpec {
  match?: {
    /** HTTP method, any case. */
    method?: string;
    /** Exact path, a prefix when it ends with `*`, or a RegExp tested against the path. */
    path?: string | RegExp;
    api?: SandboxApi;
  };
  /** How many matching requests it hits; unlimited (until removed or cleared) when omitted. */
  times?: number;
  delayMs?: number;
  /** Answer with this status (a 5xx usually; any 100-599). */
  status?: number;
  /** Body for `status`: an object is sent as JSON, a string as text. Default: the API's error shape. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Answer 403 (or `status`) with an HTML page, like the gateway does for an address not allow-listed. */
  html?: boolean;
  /** Never answer: the request hangs until the client gives up or the sandbox stops. */
  timeout?: boolean;
  /** Read the request, then destroy the connection without answering. */
  dropConnection?: boolean;
  /** Handle the request first, then apply the fault to the answer ("did it go through?"). */
  processRequest?: boolean;
}

/** What an outbound delivery fault may match. All given fields must match. */
export interface CallbackFaultMatch {
  kind?: SandboxDeliveryKind;
  checkoutId?: string;
  clientReference?: string;
  sessionId?: string;
  orderId?: string;
  /** Exact URL or a RegExp. */
  url?: string | RegExp;
}

/** A fault on a callback the sandbox sends (checkout callback or fulfillment request). */
export interface CallbackFaultSpec {
  /** Per invoice/order (`clientReference`, `checkoutId`, `sessionId`, `orderId`) or global when omitted. */
  match?: CallbackFaultMatch;
  /** How many callbacks it hits ("the next N"); unlimited when omitted. */
  times?: number;
  /** Do not send it (recorded as a `dropped` delivery, which can be re-sent). */
  drop?: boolean;
  /** Send this many copies in all (2 = the callback plus one duplicate). */
  duplicate?: number;
  /** Send the copies at the same time rather than one after another. */
  concurrent?: boolean;
  /** Send it this much later (the payer's browser is redirected before it arrives). */
  delayMs?: number;
  /** Checkout only: a wrong `Data.Amount` (a number, or a function of the real one). */
  amount?: number | ((amount: number) => number);
  /** Checkout only: a wrong `Data.CheckoutId` (`true` = a random one). */
  checkoutId?: string | true;
  /** A forged callback: a reference the merchant never created (random checkout/order and session ids). */
  forge?: boolean;
  /** Any other change: gets the body (a copy), returns the body to send. */
  body?: (body: Record<string, unknown>) => unknown;
}

export interface FaultHandle<S> {
  readonly id: string;
  readonly spec: Readonly<S>;
  /** Requests or callbacks it has hit so far. */
  readonly hits: number;
  /** Hits left (Infinity when unlimited). */
  readonly remaining: number;
  remove(): void;
}

/** A fault in its list (the first match applies) until its hits run out or it is removed. */
class Fault<S extends { times?: number }> implements FaultHandle<S> {
  hits = 0;
  remaining: number;
  constructor(
    readonly id: string,
    readonly spec: S,
    private readonly list: Fault<S>[],
  ) {
    this.remaining = spec.times ?? Infinity;
    list.push(this);
  }
  consume(): this {
    this.hits++;
    if (--this.remaining <= 0) this.remove();
    return this;
  }
  remove(): void {
    const i = this.list.indexOf(this);
    if (i >= 0) this.list.splice(i, 1);
  }
}

export type InboundRequestInfo = Pick<SandboxRequestLog, 'method' | 'path' | 'api'>;
export type CallbackInfo = Omit<OutboundCallback, 'account' | 'headers' | 'body' | 'fault'>;

/** The sandbox's fault switchboard (`sandbox.faults`): the first added fault that matches applies. */
export class SandboxFaults {
  private readonly inbound: Fault<InboundFaultSpec>[] = [];
  private readonly outbound: Fault<CallbackFaultSpec>[] = [];
  private seq = 0;

  add(spec: InboundFaultSpec): FaultHandle<InboundFaultSpec> {
    validateInbound(spec);
    return new Fault(`fault-${++this.seq}`, spec, this.inbound);
  }

  addCallback(spec: CallbackFaultSpec): FaultHandle<CallbackFaultSpec> {
    validateCallback(spec, 'spec');
    return new Fault(`callback-fault-${++this.seq}`, spec, this.outbound);
  }

  clear(): void {
    this.inbound.length = 0;
    this.outbound.length = 0;
  }

  /** @internal Finds and consumes the fault for an inbound request. */
  takeInbound(info: InboundRequestInfo): FaultHandle<InboundFaultSpec> | undefined {
    return this.inbound.find((f) => matchesInbound(f.spec, info))?.consume();
  }

  /** @internal Finds and consumes the fault for an outbound callback. */
  takeCallback(info: CallbackInfo): FaultHandle<CallbackFaultSpec> | undefined {
    return this.outbound.find((f) => matchesCallback(f.spec.match, info))?.consume();
  }
}

/** A RegExp is tested, a string compared exactly (or as a prefix when it ends with `*` and `prefix`). */
function matchesText(pattern: string | RegExp | undefined, value: string, prefix = false): boolean {
  if (pattern === undefined) return true;
  if (pattern instanceof RegExp) {
    pattern.lastIndex = 0;
    return pattern.test(value);
  }
  return prefix && pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : pattern === value;
}

function matchesInbound(spec: InboundFaultSpec, info: InboundRequestInfo): boolean {
  const m = spec.match ?? {};
  if (m.api === undefined ? info.api === 'admin' : m.api !== info.api) return false;
  if (m.method !== undefined && m.method.toUpperCase() !== info.method) return false;
  return matchesText(m.path, info.path, true);
}

function matchesCallback(match: CallbackFaultMatch | undefined, info: CallbackInfo): boolean {
  if (!match) return true;
  const fields = ['kind', 'checkoutId', 'clientReference', 'sessionId', 'orderId'] as const;
  return (
    fields.every((f) => match[f] === undefined || match[f] === info[f]) && matchesText(match.url, info.url)
  );
}

// Checked by hand, not as DTOs: specs are built in code, with RegExps, functions and rules
// between fields that a JSON schema cannot say.
function checkSpec<S extends { times?: number; delayMs?: number }>(
  spec: S,
  prefix: string,
  what: string,
  rules: (issues: ValidationIssue[]) => void,
): void {
  if (spec === null || typeof spec !== 'object')
    throw invalidArgument(prefix, 'must be an object', undefined, `The ${what} spec must be an object`);
  const issues: ValidationIssue[] = [];
  if (spec.times !== undefined && !(Number.isInteger(spec.times) && spec.times >= 1))
    issues.push({ field: `${prefix}.times`, message: 'must be a positive integer', value: spec.times });
  if (spec.delayMs !== undefined && !(Number.isFinite(spec.delayMs) && spec.delayMs >= 0))
    issues.push({ field: `${prefix}.delayMs`, message: 'must be a number >= 0', value: spec.delayMs });
  rules(issues);
  if (issues.length > 0) throw invalidInput(what, issues);
}

function validateInbound(spec: InboundFaultSpec): void {
  checkSpec(spec, 'spec', 'inbound fault', (issues) => {
    const { status } = spec;
    if (status !== undefined && !(Number.isInteger(status) && status >= 100 && status <= 599))
      issues.push({ field: 'spec.status', message: 'must be an HTTP status (100-599)', value: status });
    const effects = [spec.timeout, spec.dropConnection, spec.html, status !== undefined].filter(Boolean);
    // `html` may come with its own `status`.
    if (effects.length > (spec.html && status !== undefined ? 2 : 1))
      issues.push({ field: 'spec', message: 'choose one of timeout, dropConnection, html, status' });
    if (effects.length === 0 && spec.delayMs === undefined)
      issues.push({
        field: 'spec',
        message: 'needs an effect: delayMs, status, html, timeout or dropConnection',
      });
  });
}

/** @internal Also used for the one-off fault given to `pay()`. */
export function validateCallback(spec: CallbackFaultSpec, prefix: string): void {
  checkSpec(spec, prefix, 'callback fault', (issues) => {
    const { duplicate, amount } = spec;
    if (duplicate !== undefined && !(Number.isInteger(duplicate) && duplicate >= 1 && duplicate <= 100))
      issues.push({
        field: `${prefix}.duplicate`,
        message: 'must be an integer from 1 to 100 (copies in all)',
        value: duplicate,
      });
    if (amount !== undefined && typeof amount !== 'function' && !Number.isFinite(amount))
      issues.push({ field: `${prefix}.amount`, message: 'must be a number or a function', value: amount });
    const effects = [spec.drop, duplicate, spec.delayMs, amount, spec.checkoutId, spec.forge, spec.body];
    if (effects.every((e) => e === undefined || e === false))
      issues.push({
        field: prefix,
        message: 'needs an effect: drop, duplicate, delayMs, amount, checkoutId, forge or body',
      });
  });
}

/** Applies the body-changing parts of a callback fault; returns the new body and the fault names applied. */
export function tamperBody(
  kind: SandboxDeliveryKind,
  body: Record<string, unknown>,
  spec: CallbackFaultSpec,
  randomId: () => string,
): { body: unknown; applied: string[] } {
  const applied: string[] = [];
  let out: Record<string, unknown> = structuredClone(body);
  if (kind === 'checkout-callback') {
    const data = (out as unknown as CheckoutCallbackBody).Data;
    if (spec.amount !== undefined) {
      data.Amount = typeof spec.amount === 'function' ? spec.amount(data.Amount) : spec.amount;
      applied.push('amount');
    }
    if (spec.checkoutId !== undefined) {
      data.CheckoutId = spec.checkoutId === true ? randomId() : spec.checkoutId;
      applied.push('checkoutId');
    }
    if (spec.forge) {
      data.CheckoutId = randomId();
      data.SalesInvoiceId = randomId();
      data.ClientReference = `forged-${randomId().slice(0, 12)}`;
      applied.push('forge');
    }
  } else if (spec.forge) {
    out.OrderId = randomId();
    out.SessionId = randomId();
    applied.push('forge');
  }
  if (spec.body) {
    out = (spec.body(out) ?? out) as Record<string, unknown>;
    applied.push('body');
  }
  return { body: out, applied };
}
