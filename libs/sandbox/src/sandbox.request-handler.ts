import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { apiErrorReply, forbiddenHtmlPage, SandboxHttpError } from './sandbox.errors.js';
import type { FaultHandle, InboundFaultSpec } from './sandbox.faults.js';
import { hostNameOf, isAllowedHost, isoNow, writeReply } from './sandbox.http.js';
import { requestContext, SandboxRouter } from './sandbox.router.js';
import type { SandboxState } from './sandbox.state.js';
import type { SandboxRequestLog } from './sandbox.types.js';
import type { SandboxReply, SandboxRequestContext } from './sandbox.route-types.js';

/** Routes, logs and answers one request: inbound faults applied, errors in the API's shape. */
export async function handleRequest(
  state: SandboxState,
  router: SandboxRouter,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const started = performance.now();
  const method = (req.method ?? 'GET').toUpperCase();
  const [path = '/', search = ''] = (req.url ?? '/').split(/\?(.*)/s);
  const match = router.match(method, path);
  const api = match.api;

  const log: SandboxRequestLog = {
    id: state.requests.total + 1, // pushed at once: ids count from 1 again after a reset
    at: isoNow(),
    method,
    path,
    api,
    statusCode: null,
    durationMs: null,
    faultId: null,
  };
  state.requests.push(log);
  res.once('close', () => {
    log.statusCode ??= res.headersSent ? res.statusCode : null;
    log.durationMs = Math.round((performance.now() - started) * 100) / 100;
    state.emit('request', log);
  });

  const query = new URLSearchParams(search);
  const params = match.kind === 'found' ? match.params : {};
  const ctx = requestContext({ req, res, method, path, query, params, api }, state.options.maxBodyBytes);
  const run = async (): Promise<SandboxReply | void> => {
    // The admin API and the dashboard answer only their own names (DNS rebinding).
    if (api === 'admin' && !isAllowedHost(req.headers.host, state.options.allowedHosts))
      return apiErrorReply('admin', 403, {
        message: `Host "${hostNameOf(req.headers.host)?.slice(0, 100)}" is not allowed; add it to the sandbox's allowedHosts`,
        responseCode: 'HUBTEL_HOST_NOT_ALLOWED',
      });
    if (match.kind === 'found') return match.route.handler(ctx);
    if (match.kind === 'method-not-allowed')
      return apiErrorReply(api, 405, {
        message: `${method} is not allowed on ${path}`,
        headers: { Allow: match.allowed.join(', ') },
      });
    return apiErrorReply(api, 404, { message: `No route for ${method} ${path}` });
  };

  try {
    const fault = state.faults.takeInbound({ method, path, api });
    if (fault) log.faultId = fault.id;
    const reply = fault ? await applyInboundFault(state, fault, ctx, run) : await run();
    if (reply) {
      // Answering before the body was read would leave the client writing into a closed request.
      await ctx.body().catch(() => undefined);
      write(res, reply, log);
    }
  } catch (err) {
    if (err instanceof SandboxHttpError) return write(res, err.reply, log);
    state.options.logger?.error(
      `Sandbox error on ${method} ${path}: ${(err as Error)?.stack ?? String(err)}`,
    );
    const message = `Sandbox internal error: ${(err as Error)?.message ?? String(err)}`;
    write(res, apiErrorReply(api, 500, { message }), log);
  }
}

/** Writes a reply and notes its status at once (the client may read it before the response's 'close'). */
function write(res: ServerResponse, reply: SandboxReply, log: SandboxRequestLog): void {
  writeReply(res, reply);
  if (res.headersSent) log.statusCode = res.statusCode;
}

/** Returns the reply to write, or undefined when the fault left nothing to write (hang, drop). */
async function applyInboundFault(
  state: SandboxState,
  fault: FaultHandle<InboundFaultSpec>,
  ctx: SandboxRequestContext,
  run: () => Promise<SandboxReply | void>,
): Promise<SandboxReply | undefined> {
  const spec = fault.spec;
  const effect = spec.timeout || spec.dropConnection || spec.html || spec.status !== undefined;
  const processed = spec.processRequest ? await run() : undefined;
  // Stopping ends the wait with nothing to answer (stop() closes the connection).
  const { signal } = state.outbound;
  if (spec.delayMs && !(await delay(spec.delayMs, true, { signal }).catch(() => false))) return undefined;
  if (!effect) {
    // Delay only: the normal answer, late. A client that gave up meanwhile is not served.
    if (spec.processRequest) return processed ?? undefined;
    return ctx.req.socket.destroyed ? undefined : ((await run()) ?? undefined);
  }
  await ctx.body().catch(() => undefined);
  if (spec.timeout) return undefined; // never answered; stop() closes the connection
  if (spec.dropConnection) return void ctx.req.socket.destroy();
  if (spec.html)
    return { status: spec.status ?? 403, headers: { ...spec.headers }, html: forbiddenHtmlPage() };
  const status = spec.status!;
  const headers = { ...spec.headers };
  if (spec.body === undefined)
    return { ...apiErrorReply(ctx.api, status, { message: faultMessage(status) }), headers };
  return typeof spec.body === 'string'
    ? { status, headers, text: spec.body }
    : { status, headers, json: spec.body };
}

function faultMessage(status: number): string {
  if (status >= 500) return 'The request failed on the server.';
  if (status === 402) return 'Your account does not have enough messaging credit to send the message.';
  return http.STATUS_CODES[status] ?? 'Error';
}
