import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { HubtelSandbox } from '../sandbox.server.js';
import type { SandboxInvoice, SandboxRecordKind, SandboxSession } from '../sandbox.types.js';
import { htmlReply } from '../sandbox.http.js';
import { renderDashboardPage } from './dashboard.page.js';

// The dashboard: one page of the sandbox's records, kept current by a server-sent event stream
// (`snapshot` first, then `update` batches and `reset`) fed from the sandbox's own events.

export const SANDBOX_DASHBOARD_PATH = '/_dashboard';

/** Newest records of each kind sent in the first snapshot (older ones stay in the admin API). */
export const DASHBOARD_SNAPSHOT_LIMIT = 200;
/** Updates are coalesced per record over this window, so a burst of events is one message. */
const FLUSH_MS = 50;
/** A comment line keeps proxies and the browser from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/** Exchanges of a session shown on the page (the newest). */
const SESSION_EXCHANGES_SHOWN = 20;

/** One record as the page receives it: the kind, a stable id and a JSON-safe view. */
export interface DashboardRecord {
  kind: SandboxRecordKind;
  id: string;
  record: Record<string, unknown>;
}

/** The field that names each kind's records, and the sandbox's list of them. */
const KIND = {
  message: ['messageId', (s) => s.messages()],
  invoice: ['checkoutId', (s) => s.invoices()],
  delivery: ['id', (s) => s.deliveries()],
  session: ['sessionId', (s) => s.sessions()],
  'fulfillment-callback': ['id', (s) => s.fulfillmentCallbacks()],
} satisfies Record<SandboxRecordKind, [string, (sandbox: HubtelSandbox) => object[]]>;
const KINDS = Object.keys(KIND) as SandboxRecordKind[];

function idOf(kind: SandboxRecordKind, record: unknown): string {
  return (record as Record<string, string>)[KIND[kind][0]]!;
}

function viewOf(kind: SandboxRecordKind, record: unknown): DashboardRecord {
  const id = idOf(kind, record);
  if (kind === 'invoice') {
    // The raw request is already shown field by field; keep the stream small.
    const { request: _request, ...rest } = record as SandboxInvoice;
    return { kind, id, record: rest };
  }
  if (kind !== 'session') return { kind, id, record: { ...(record as object) } };
  const { exchanges, ...rest } = record as SandboxSession;
  return {
    kind,
    id,
    record: {
      ...rest,
      exchangeCount: exchanges.length,
      exchanges: exchanges.slice(-SESSION_EXCHANGES_SHOWN).map((e) => {
        const answer =
          e.response && typeof e.response === 'object' ? (e.response as Record<string, unknown>) : undefined;
        return {
          at: e.at,
          type: e.request.Type,
          input: e.request.Message,
          statusCode: e.statusCode,
          answerType: answer?.Type ?? null,
          answer: answer?.Message ?? (typeof e.response === 'string' ? e.response.slice(0, 200) : null),
          error: e.error,
          issues: e.issues,
          screen: e.screen ? { length: e.screen.length, limit: e.screen.limit, fits: e.screen.fits } : null,
        };
      }),
    },
  };
}

/** Fan-out of the sandbox's events to every open stream; listens only while a stream is open. */
class DashboardHub {
  private readonly clients = new Set<DashboardClient>();
  private readonly listeners = Object.fromEntries(
    KINDS.map((kind) => [kind, (record: unknown) => this.broadcast(kind, record)]),
  ) as Record<SandboxRecordKind, (record: unknown) => void>;
  private readonly onReset = () => {
    for (const client of this.clients) client.reset(this.snapshot());
  };

  constructor(readonly sandbox: HubtelSandbox) {}

  snapshot(): { stats: unknown; records: DashboardRecord[] } {
    return {
      stats: this.sandbox.stats(),
      records: KINDS.flatMap((kind) =>
        KIND[kind][1](this.sandbox)
          .slice(-DASHBOARD_SNAPSHOT_LIMIT)
          .map((r) => viewOf(kind, r)),
      ),
    };
  }

  add(client: DashboardClient): void {
    if (this.clients.size === 0) {
      for (const kind of KINDS) this.sandbox.on(kind, this.listeners[kind] as never);
      this.sandbox.on('reset', this.onReset);
    }
    this.clients.add(client);
  }

  remove(client: DashboardClient): void {
    if (!this.clients.delete(client) || this.clients.size > 0) return;
    for (const kind of KINDS) this.sandbox.off(kind, this.listeners[kind] as never);
    this.sandbox.off('reset', this.onReset);
  }

  private broadcast(kind: SandboxRecordKind, record: unknown): void {
    for (const client of this.clients) client.queue(kind, record);
  }
}

class DashboardClient {
  private pending = new Map<string, { kind: SandboxRecordKind; record: unknown }>();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly hub: DashboardHub,
  ) {
    this.heartbeat = setInterval(() => this.write(': ping\n\n'), HEARTBEAT_MS);
    this.heartbeat.unref();
    res.on('close', () => this.close());
    res.on('drain', () => this.schedule());
  }

  start(): void {
    this.write('retry: 1000\n\n');
    this.send('snapshot', this.hub.snapshot());
  }

  queue(kind: SandboxRecordKind, record: unknown): void {
    // Records are live objects: keep the reference and serialise at flush time (latest state wins).
    this.pending.set(`${kind}:${idOf(kind, record)}`, { kind, record });
    this.schedule();
  }

  reset(snapshot: unknown): void {
    this.pending.clear();
    this.send('reset', snapshot);
  }

  private schedule(): void {
    if (this.closed || this.flushTimer || this.pending.size === 0) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, FLUSH_MS);
    this.flushTimer.unref();
  }

  private flush(): void {
    // A slow reader: keep coalescing until the socket drains rather than buffer without bound.
    if (this.closed || this.res.writableNeedDrain) return;
    const batch = [...this.pending.values()].map(({ kind, record }) => viewOf(kind, record));
    this.pending.clear();
    if (batch.length > 0) this.send('update', { stats: this.hub.sandbox.stats(), records: batch });
  }

  private send(event: string, data: unknown): void {
    this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private write(chunk: string): void {
    if (this.closed || this.res.destroyed) return;
    this.res.write(chunk);
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.pending.clear();
    this.hub.remove(this);
  }
}

/** Adds the dashboard's routes to a sandbox (the sandbox calls this for itself). */
export function registerSandboxDashboard(sandbox: HubtelSandbox): void {
  const hub = new DashboardHub(sandbox);
  const page = () => {
    const nonce = randomBytes(16).toString('base64');
    const accounts = sandbox.accounts().map((a) => a.name);
    return htmlReply(
      renderDashboardPage({ nonce, origin: sandbox.url, accounts }),
      200,
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
  };
  for (const path of [SANDBOX_DASHBOARD_PATH, `${SANDBOX_DASHBOARD_PATH}/`])
    sandbox.addRoute('GET', path, page);
  sandbox.addRoute('GET', `${SANDBOX_DASHBOARD_PATH}/events`, (ctx) => {
    const res = ctx.res;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    if (ctx.method === 'HEAD') return void res.end();
    res.flushHeaders();
    const client = new DashboardClient(res, hub);
    hub.add(client);
    client.start();
  });
}
