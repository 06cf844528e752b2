import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { HubtelValidationError } from 'nestjs-hubtel';
import { apiErrorReply, notJsonReply, SandboxHttpError } from './sandbox.errors.js';
import { decodeLoosely } from './sandbox.http.js';
import type { SandboxApi, SandboxRequestContext, SandboxRouteHandler } from './sandbox.route-types.js';

interface Route {
  method: string;
  pattern: string;
  regex: RegExp;
  keys: string[];
  api: SandboxApi;
  handler: SandboxRouteHandler;
}

/** A route, or why none answers; `api` decides the error shape and fault matching either way. */
export type RouteMatch = { api: SandboxApi } & (
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' }
);

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
      const params = Object.fromEntries(route.keys.map((key, i) => [key, decodeLoosely(m[i + 1] ?? '')]));
      return { kind: 'found', api: route.api, route, params };
    }
    if (api) return { kind: 'method-not-allowed', api, allowed: [...new Set(allowed)] };
    // No route: the API of the routes under the same first segment (`/v1`, `/items`, `/pay`...).
    const first = path.split('/')[1];
    const sibling = this.routes.find((route) => route.pattern.split('/')[1] === first);
    return { kind: 'not-found', api: sibling?.api ?? 'admin' };
  }
}

/** One request's context: its body read once, on first use. */
export function requestContext(
  fields: Omit<SandboxRequestContext, 'body' | 'json' | 'jsonObject' | 'form'>,
  maxBodyBytes: number,
): SandboxRequestContext {
  const { req, api } = fields;
  let body: Promise<Buffer> | undefined;
  /** A 400 (SMS sub-code 100) in the API's error shape, about the body. */
  const badBody = (message: string, detail: string) =>
    new SandboxHttpError(
      apiErrorReply(api, 400, { message, subCode: 100, errors: [{ field: 'body', message: detail }] }),
    );
  const ctx: SandboxRequestContext = {
    ...fields,
    body: () => (body ??= readBody(req, maxBodyBytes, api)),
    async json() {
      const type = String(req.headers['content-type'] ?? '');
      const buffer = await ctx.body();
      if (type && !/\bjson\b/i.test(type)) throw new SandboxHttpError(notJsonReply(api, type));
      // Decoding would turn bad bytes into U+FFFD, and two different references into one.
      if (!isUtf8(buffer)) throw badBody('Request body is not valid UTF-8', 'is not valid UTF-8');
      const text = buffer.toString('utf8');
      if (text.trim() === '') throw badBody('Request body is empty', 'is required');
      try {
        return JSON.parse(text) as unknown;
      } catch (err) {
        throw badBody('Request body is not valid JSON', (err as Error).message.slice(0, 200));
      }
    },
    async jsonObject() {
      const json = await ctx.json();
      if (json === null || typeof json !== 'object' || Array.isArray(json))
        throw badBody('Request body must be a JSON object', 'must be a JSON object');
      return json as Record<string, unknown>;
    },
    async form() {
      return new URLSearchParams((await ctx.body()).toString('utf8'));
    },
  };
  return ctx;
}

/** Reads the whole body; beyond `limit` bytes, a 413 (the rest drained, nothing more kept). */
async function readBody(req: IncomingMessage, limit: number, api: SandboxApi): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  if (size <= limit) return Buffer.concat(chunks);
  throw new SandboxHttpError(apiErrorReply(api, 413, { message: `Request body larger than ${limit} bytes` }));
}
