import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HubtelValidationError } from 'nestjs-hubtel';
import { apiErrorReply, notJsonReply, SandboxHttpError } from './sandbox.errors.js';
import { BodyTooLargeError, readBody } from './sandbox.http.js';
import type { SandboxApi, SandboxRequestContext, SandboxRouteHandler } from './sandbox.route-types.js';

interface Route {
  method: string;
  pattern: string;
  regex: RegExp;
  keys: string[];
  api: SandboxApi;
  handler: SandboxRouteHandler;
}

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; api: SandboxApi; allowed: string[] }
  | { kind: 'not-found' };

/** `/v1/messages/:messageId` → a RegExp; a `:name` matches one path segment. A trailing `/*` matches the rest. */
function compile(pattern: string): { regex: RegExp; keys: string[] } {
  const keys: string[] = [];
  let source = '';
  for (const segment of pattern.split('/').slice(1)) {
    if (segment === '*') {
      keys.push('rest');
      source += '(?:/(.*))?';
    } else if (segment.startsWith(':')) {
      keys.push(segment.slice(1));
      source += '/([^/]+)';
    } else {
      source += `/${segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
    }
  }
  return { regex: new RegExp(`^${source || '/'}$`), keys };
}

/** A minimal router: exact methods, `:param` segments, first match wins. */
export class SandboxRouter {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, api: SandboxApi, handler: SandboxRouteHandler): void {
    if (!pattern.startsWith('/'))
      throw new HubtelValidationError(`Route pattern must start with "/": ${pattern}`, [
        { field: 'path', message: 'must start with "/"', value: pattern },
      ]);
    const { regex, keys } = compile(pattern);
    this.routes.push({ method: method.toUpperCase(), pattern, regex, keys, api, handler });
  }

  match(method: string, path: string): RouteMatch {
    const allowed: string[] = [];
    let api: SandboxApi | undefined;
    for (const route of this.routes) {
      const m = route.regex.exec(path);
      if (!m) continue;
      if (route.method !== method && !(method === 'HEAD' && route.method === 'GET')) {
        allowed.push(route.method);
        api ??= route.api;
        continue;
      }
      const params: Record<string, string> = {};
      route.keys.forEach((key, i) => {
        const raw = m[i + 1] ?? '';
        try {
          params[key] = decodeURIComponent(raw);
        } catch {
          params[key] = raw;
        }
      });
      return { kind: 'found', route, params };
    }
    if (api) return { kind: 'method-not-allowed', api, allowed: [...new Set(allowed)] };
    return { kind: 'not-found' };
  }

  /** Which API a path belongs to (for faults and error shapes), even when no route matches. */
  static apiOf(path: string): SandboxApi {
    if (path.startsWith('/v1/messages')) return 'sms';
    if (path.startsWith('/items')) return 'checkout';
    if (path.startsWith('/transactions')) return 'status';
    if (path.startsWith('/callback')) return 'callback';
    if (path.startsWith('/pay')) return 'pay-page';
    return 'admin';
  }
}

export class RequestContext implements SandboxRequestContext {
  private bodyPromise?: Promise<Buffer>;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly method: string,
    readonly path: string,
    readonly query: URLSearchParams,
    readonly params: Record<string, string>,
    readonly api: SandboxApi,
    private readonly maxBodyBytes: number,
  ) {}

  body(): Promise<Buffer> {
    this.bodyPromise ??= readBody(this.req, this.maxBodyBytes).catch((err: unknown) => {
      if (err instanceof BodyTooLargeError)
        throw new SandboxHttpError(
          apiErrorReply(this.api, 413, {
            message: `Request body larger than ${err.limit} bytes`,
          }),
        );
      throw err;
    });
    return this.bodyPromise;
  }

  /** A 400 (SMS sub-code 100) in the API's error shape, about the body. */
  private badBody(message: string, detail: string): SandboxHttpError {
    return new SandboxHttpError(
      apiErrorReply(this.api, 400, { message, subCode: 100, errors: [{ field: 'body', message: detail }] }),
    );
  }

  async json(): Promise<unknown> {
    const type = String(this.req.headers['content-type'] ?? '');
    const buffer = await this.body();
    if (type && !/\bjson\b/i.test(type)) throw new SandboxHttpError(notJsonReply(this.api, type));
    // Decoding would turn bad bytes into U+FFFD, and two different references into one.
    if (!isUtf8(buffer)) throw this.badBody('Request body is not valid UTF-8', 'is not valid UTF-8');
    const text = buffer.toString('utf8');
    if (text.trim() === '') throw this.badBody('Request body is empty', 'is required');
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw this.badBody('Request body is not valid JSON', (err as Error).message.slice(0, 200));
    }
  }

  async jsonObject(): Promise<Record<string, unknown>> {
    const body = await this.json();
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw this.badBody('Request body must be a JSON object', 'must be a JSON object');
    return body as Record<string, unknown>;
  }

  async form(): Promise<URLSearchParams> {
    return new URLSearchParams((await this.body()).toString('utf8'));
  }
}
