import { HubtelError } from 'nestjs-hubtel';
import { apiErrorReply, SandboxStateError } from './sandbox.errors.js';
import type { SandboxRouter } from './sandbox.router.js';
import type { SandboxReply } from './sandbox.types.js';
import type { HubtelSandbox } from './hubtel-sandbox.js';

/*
 * The sandbox's own JSON API under /_sandbox, for tools that run in another process (the CLI's
 * users, the dashboard of issue 6). Lists are oldest first; `?limit=N` keeps the newest N.
 *
 *   GET  /_sandbox                               origin, base URLs, credentials, POS Sales ID, stats
 *   GET  /_sandbox/stats
 *   GET  /_sandbox/messages[?to=233...]          GET /_sandbox/invoices    GET /_sandbox/invoices/{checkoutIdOrRef}
 *   GET  /_sandbox/deliveries                    GET /_sandbox/sessions    GET /_sandbox/fulfillment-callbacks
 *   GET  /_sandbox/requests
 *   POST /_sandbox/invoices/{ref}/pay  {outcome?: 'paid'|'failed', phone?, channel?}
 *   POST /_sandbox/invoices/{ref}/cancel
 *   POST /_sandbox/deliveries/{id}/redeliver
 *   POST /_sandbox/reset
 * Errors: {error, message} with 400 (bad input), 404 (unknown record), 409 (wrong state).
 */

function limited<T>(items: T[], query: URLSearchParams): T[] {
  const limit = Number(query.get('limit'));
  return Number.isInteger(limit) && limit > 0 ? items.slice(-limit) : items;
}

function errorReply(err: unknown): SandboxReply {
  if (err instanceof HubtelError) {
    const status =
      err instanceof SandboxStateError
        ? 409
        : err.code === 'HUBTEL_NOT_FOUND'
          ? 404
          : err.code === 'HUBTEL_VALIDATION_FAILED'
            ? 400
            : 500;
    return apiErrorReply('admin', status, { message: err.message, responseCode: err.code });
  }
  throw err;
}

export function registerAdminApi(router: SandboxRouter, sandbox: HubtelSandbox): void {
  const ok = (json: unknown): SandboxReply => ({
    status: 200,
    json,
    headers: { 'Cache-Control': 'no-store' },
  });

  router.add('GET', '/_sandbox', 'admin', () =>
    ok({
      name: 'nestjs-hubtel sandbox',
      url: sandbox.url,
      baseUrls: sandbox.baseUrls(),
      credentials: sandbox.credentials,
      posSalesId: sandbox.posSalesId,
      stats: sandbox.stats(),
    }),
  );
  router.add('GET', '/_sandbox/stats', 'admin', () => ok(sandbox.stats()));
  router.add('GET', '/_sandbox/messages', 'admin', (ctx) => {
    const to = ctx.query.get('to');
    return ok(limited(to ? sandbox.messagesTo(to) : sandbox.messages(), ctx.query));
  });
  router.add('GET', '/_sandbox/invoices', 'admin', (ctx) => ok(limited(sandbox.invoices(), ctx.query)));
  router.add('GET', '/_sandbox/invoices/:ref', 'admin', (ctx) => {
    const invoice = sandbox.invoice(ctx.params.ref!);
    return invoice
      ? ok(invoice)
      : apiErrorReply('admin', 404, {
          message: `No invoice "${ctx.params.ref}"`,
          responseCode: 'HUBTEL_NOT_FOUND',
        });
  });
  router.add('GET', '/_sandbox/deliveries', 'admin', (ctx) => ok(limited(sandbox.deliveries(), ctx.query)));
  router.add('GET', '/_sandbox/sessions', 'admin', (ctx) => ok(limited(sandbox.sessions(), ctx.query)));
  router.add('GET', '/_sandbox/fulfillment-callbacks', 'admin', (ctx) =>
    ok(limited(sandbox.fulfillmentCallbacks(), ctx.query)),
  );
  router.add('GET', '/_sandbox/requests', 'admin', (ctx) => ok(limited(sandbox.requests(), ctx.query)));

  router.add('POST', '/_sandbox/invoices/:ref/pay', 'admin', async (ctx) => {
    const raw = (await ctx.body()).toString('utf8').trim();
    const body = raw === '' ? {} : await ctx.json();
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return apiErrorReply('admin', 400, {
        message: 'Body must be a JSON object',
        responseCode: 'HUBTEL_VALIDATION_FAILED',
      });
    }
    const b = body as Record<string, unknown>;
    try {
      const result = await sandbox.pay(ctx.params.ref!, {
        outcome: b.outcome as 'paid' | 'failed' | undefined,
        phone: typeof b.phone === 'string' ? b.phone : undefined,
        channel: typeof b.channel === 'string' ? b.channel : undefined,
      });
      return ok(result);
    } catch (err) {
      return errorReply(err);
    }
  });
  router.add('POST', '/_sandbox/invoices/:ref/cancel', 'admin', async (ctx) => {
    await ctx.body();
    try {
      return ok(sandbox.cancel(ctx.params.ref!));
    } catch (err) {
      return errorReply(err);
    }
  });
  router.add('POST', '/_sandbox/deliveries/:id/redeliver', 'admin', async (ctx) => {
    await ctx.body();
    try {
      return ok(await sandbox.redeliver(ctx.params.id!));
    } catch (err) {
      return errorReply(err);
    }
  });
  router.add('POST', '/_sandbox/reset', 'admin', async (ctx) => {
    await ctx.body();
    sandbox.reset();
    return ok({ reset: true });
  });
}
