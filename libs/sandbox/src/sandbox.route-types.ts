import type { IncomingMessage, ServerResponse } from 'node:http';

/** Which face of the platform a route belongs to: decides the error body shape and fault matching. */
export type SandboxApi = 'sms' | 'checkout' | 'status' | 'callback' | 'pay-page' | 'admin';

/** What a route handler answers; the sandbox writes it (or a fault replaces it). */
export interface SandboxReply {
  status: number;
  headers?: Record<string, string>;
  /** Sent as `application/json`. */
  json?: unknown;
  /** Sent as `text/html; charset=utf-8`. */
  html?: string;
  /** Sent as `text/plain; charset=utf-8`. */
  text?: string;
}

export interface SandboxRequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** Named `:params` of the route pattern, URL-decoded. */
  readonly params: Record<string, string>;
  readonly api: SandboxApi;
  /** Raw body (read once, cached; 413 beyond `maxBodyBytes`). */
  body(): Promise<Buffer>;
  /** Body parsed as JSON; answers 415/400 in the API's error shape when it is not. */
  json(): Promise<unknown>;
  /** Body parsed as a JSON object; anything else (an array, a string, null) is a 400 in the API's shape. */
  jsonObject(): Promise<Record<string, unknown>>;
  /** Body parsed as an HTML form. */
  form(): Promise<URLSearchParams>;
}

/** A route handler: a reply, or nothing when it wrote `ctx.res` itself (an event stream, say). */
export type SandboxRouteHandler = (
  ctx: SandboxRequestContext,
) => Promise<SandboxReply | void> | SandboxReply | void;
