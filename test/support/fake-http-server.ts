import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the fake received it. */
export interface RecordedRequest {
  method: string;
  /** Path with query string, as sent. */
  url: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON body, or undefined when empty / not JSON. */
  body: unknown;
  /** When it was received (Date.now()): to see when, not just whether, a request came. */
  at: number;
}

/** What the fake answers. */
export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON; strings as they are. */
  body?: unknown;
  /** Wait this long before answering (a slow platform, for time-out tests). */
  delayMs?: number;
  /** Read the request, then cut the connection without answering (a reset after sending). */
  destroy?: boolean;
}

export type FakeHandler = (req: RecordedRequest) => FakeReply | Promise<FakeReply>;

type PathMatcher = string | RegExp;

interface Route {
  method: string;
  path: PathMatcher;
  handler: FakeHandler;
}

function matches(route: { method: string; path: PathMatcher }, req: RecordedRequest): boolean {
  if (route.method !== '*' && route.method !== req.method) return false;
  return typeof route.path === 'string' ? route.path === req.path : route.path.test(req.path);
}

/**
 * A small programmable HTTP server on 127.0.0.1 for tests: records every request, answers from
 * one-shot queued replies first (to script faults: 503 then 200), then from routes.
 */
export class FakeHttpServer {
  readonly requests: RecordedRequest[] = [];
  private readonly routes: Route[] = [];
  private readonly queued: { method: string; path: PathMatcher; reply: FakeReply }[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly waiters: { count: number; resolve: () => void }[] = [];
  private server?: Server;
  port = 0;

  static async start(port = 0): Promise<FakeHttpServer> {
    const fake = new FakeHttpServer();
    await fake.listen(port);
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async listen(port = 0): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const parsed = new URL(req.url ?? '/', 'http://fake');
        let body: unknown;
        try {
          body = rawBody ? JSON.parse(rawBody) : undefined;
        } catch {
          body = undefined;
        }
        const recorded: RecordedRequest = {
          method: req.method ?? 'GET',
          url: req.url ?? '/',
          path: parsed.pathname,
          query: parsed.searchParams,
          headers: req.headers,
          rawBody,
          body,
          at: Date.now(),
        };
        this.requests.push(recorded);
        this.notify();
        void this.answer(recorded, res);
      });
    });
    // Idle connections are closed by the client only: a server that closes one as the client
    // reuses it (Node's 5 s, late timers on a loaded machine) resets a POST that is never retried.
    server.keepAliveTimeout = 0;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Default handler for a method + path (string or RegExp on the path). Later routes win. */
  route(method: string, path: PathMatcher, handler: FakeHandler): this {
    this.routes.unshift({ method, path, handler });
    return this;
  }

  /** One-shot replies used, in order, before the routes. */
  enqueue(method: string, path: PathMatcher, ...replies: FakeReply[]): this {
    for (const reply of replies) this.queued.push({ method, path, reply });
    return this;
  }

  /** Requests to one path (and method). */
  requestsTo(method: string, path: PathMatcher): RecordedRequest[] {
    return this.requests.filter((r) => matches({ method, path }, r));
  }

  /** Resolves once `count` requests in all have been received. */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  /** Forgets requests and queued replies (routes stay). */
  reset(): void {
    this.requests.length = 0;
    this.queued.length = 0;
  }

  /** Stops listening and cuts every open connection, keeping the port number. */
  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private notify(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.requests.length >= this.waiters[i].count) {
        this.waiters[i].resolve();
        this.waiters.splice(i, 1);
      }
    }
  }

  private async answer(req: RecordedRequest, res: ServerResponse): Promise<void> {
    let reply: FakeReply;
    const index = this.queued.findIndex((q) => matches(q, req));
    try {
      if (index >= 0) {
        reply = this.queued[index].reply;
        this.queued.splice(index, 1);
      } else {
        const route = this.routes.find((r) => matches(r, req));
        reply = route
          ? await route.handler(req)
          : { status: 404, body: { message: `no fake route for ${req.method} ${req.path}` } };
      }
    } catch (error) {
      reply = { status: 500, body: { message: String(error) } };
    }
    const send = () => {
      if (reply.destroy) {
        res.socket?.destroy();
        return;
      }
      const headers: Record<string, string> = { ...(reply.headers ?? {}) };
      let payload = '';
      if (typeof reply.body === 'string') payload = reply.body;
      else if (reply.body !== undefined) {
        payload = JSON.stringify(reply.body);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
          headers['Content-Type'] = 'application/json';
      }
      res.writeHead(reply.status ?? 200, headers);
      res.end(payload);
    };
    if (reply.delayMs) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!res.destroyed) send();
      }, reply.delayMs);
      this.timers.add(timer);
    } else {
      send();
    }
  }
}

/** A port that was free a moment ago and has nothing listening now (for "connection refused"). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
