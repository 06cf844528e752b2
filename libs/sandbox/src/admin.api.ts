import type { Type } from '@nestjs/common';
import { HubtelError, HubtelValidationError, type ValidationIssue } from 'nestjs-hubtel';
import { compileValidator } from '#internal';
import { SandboxPayBodyDto, SandboxServicePaymentBodyDto } from './admin.dto.js';
import { SANDBOX_DASHBOARD_PATH } from './dashboard/dashboard.stream.js';
import { apiErrorReply, notJsonReply, SandboxStateError } from './sandbox.errors.js';
import { escapeHtml, htmlReply, isJsonContentType } from './sandbox.http.js';
import type { CallbackFaultSpec } from './sandbox.faults.js';
import type { PayOptions } from './checkout.payments.js';
import type { SandboxRouter } from './sandbox.router.js';
import type { SandboxReply, SandboxRequestContext } from './sandbox.route-types.js';
import type { SandboxAccountFilter } from './sandbox.option-types.js';
import type { HubtelSandbox } from './sandbox.server.js';

// The sandbox's JSON API under /_sandbox, for tools in another process. Every POST needs JSON (415
// else): another site's page cannot send it without a CORS preflight, which the sandbox never grants.

/** The DTO's nulls (a JSON body's "not given") as absent fields. */
function withoutNulls<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], null>;
  };
}

function limited<T>(items: T[], query: URLSearchParams): T[] {
  const limit = Number(query.get('limit'));
  return Number.isInteger(limit) && limit > 0 ? items.slice(-limit) : items;
}

/**
 * An admin POST body checked against its DTO, unknown fields refused (a typo must not send a
 * callback the caller meant to hold back); `rules` says what a DTO cannot.
 */
function checkedBody<T>(
  dto: Type<T>,
  body: unknown,
  what: string,
  rules: (value: T) => ValidationIssue[] = () => [],
): T {
  const checked = compileValidator(dto, { forbidUnknown: true })(body);
  const issues = checked.ok ? rules(checked.value) : checked.issues.map(explainRuleField);
  if (issues.length > 0 || !checked.ok)
    throw new HubtelValidationError(`Invalid ${what}: ${issues.map((i) => i.message).join('; ')}`, issues);
  return checked.value;
}

function parsePayBody(body: Record<string, unknown>): PayOptions {
  const { fault, ...rest } = checkedBody(SandboxPayBodyDto, body, 'pay request', ({ fault }) => {
    const id = fault?.checkoutId;
    if (id === undefined || id === true || (typeof id === 'string' && id !== '')) return [];
    return [{ field: 'fault.checkoutId', message: 'fault.checkoutId must be true or a non-empty string' }];
  });
  return { ...withoutNulls(rest), fault: fault ? (withoutNulls(fault) as CallbackFaultSpec) : undefined };
}

/** `match` and `times` are sandbox.faults rule fields; say so rather than "not a known field". */
function explainRuleField(issue: ValidationIssue): ValidationIssue {
  return issue.field === 'fault.match' || issue.field === 'fault.times'
    ? {
        field: issue.field,
        message: `${issue.field} belongs to a sandbox.faults rule; a payment fault applies to this payment only`,
      }
    : issue;
}

function errorReply(err: unknown): SandboxReply {
  if (err instanceof HubtelError) {
    const byCode: Record<string, number> = { HUBTEL_NOT_FOUND: 404, HUBTEL_VALIDATION_FAILED: 400 };
    const status = err instanceof SandboxStateError ? 409 : (byCode[err.code] ?? 500);
    const errors =
      err instanceof HubtelValidationError && !(err instanceof SandboxStateError)
        ? err.issues.map(({ field, message }) => ({ field, message }))
        : undefined;
    return apiErrorReply('admin', status, { message: err.message, responseCode: err.code, errors });
  }
  throw err;
}

export function registerAdminApi(router: SandboxRouter, sandbox: HubtelSandbox): void {
  const answer = async (run: () => unknown): Promise<SandboxReply> => {
    try {
      return { status: 200, json: await run(), headers: { 'Cache-Control': 'no-store' } };
    } catch (err) {
      return errorReply(err);
    }
  };
  const get = (path: string, read: (ctx: SandboxRequestContext) => unknown) =>
    router.add('GET', path, 'admin', (ctx) => answer(() => read(ctx)));
  // Not JSON is a 415, then an oversized body a 413, both before anything is read or changed.
  const post = (path: string, run: (ctx: SandboxRequestContext) => unknown) =>
    router.add('POST', path, 'admin', async (ctx) => {
      const type = ctx.req.headers['content-type'];
      if (!isJsonContentType(type)) return notJsonReply('admin', type);
      await ctx.body();
      return answer(() => run(ctx));
    });
  /** An optional JSON body: none is `{}`. */
  const bodyOf = async (ctx: SandboxRequestContext) =>
    (await ctx.body()).toString('utf8').trim() === '' ? {} : ctx.jsonObject();
  // An unknown `?account=` is a 404 naming it, never an empty list that reads as "nothing sent".
  const list = (path: string, records: (filter: SandboxAccountFilter, query: URLSearchParams) => unknown[]) =>
    get(path, (ctx) =>
      limited(records({ account: ctx.query.get('account') ?? undefined }, ctx.query), ctx.query),
    );
  const found = <T>(record: T | undefined, message: string): T => {
    if (record === undefined) throw new HubtelError('HUBTEL_NOT_FOUND', message);
    return record;
  };

  // Someone opening the sandbox's address in a browser lands somewhere useful, not on a JSON 404.
  router.add('GET', '/', 'admin', (): SandboxReply =>
    sandbox.dashboardUrl
      ? { status: 302, headers: { Location: SANDBOX_DASHBOARD_PATH, 'Cache-Control': 'no-store' } }
      : htmlReply(renderIndexPage(sandbox)),
  );

  get('/_sandbox', () => ({
    name: 'nestjs-hubtel sandbox',
    url: sandbox.url,
    baseUrls: sandbox.baseUrls(),
    credentials: sandbox.credentials,
    posSalesId: sandbox.posSalesId,
    // Only on a sandbox serving several: a single-account one answers as it always did.
    ...(sandbox.accounts().length > 1 ? { accounts: sandbox.accounts() } : {}),
    stats: sandbox.stats(),
  }));
  get('/_sandbox/stats', () => sandbox.stats());
  get('/_sandbox/accounts', () => sandbox.accounts());
  list('/_sandbox/messages', (filter, query) => {
    const to = query.get('to');
    return to ? sandbox.messagesTo(to, filter) : sandbox.messages(filter);
  });
  list('/_sandbox/invoices', (filter) => sandbox.invoices(filter));
  get('/_sandbox/invoices/:ref', (ctx) =>
    found(sandbox.invoice(ctx.params.ref!), `No invoice "${ctx.params.ref}"`),
  );
  list('/_sandbox/deliveries', (filter) => sandbox.deliveries(filter));
  list('/_sandbox/sessions', (filter) => sandbox.sessions(filter));
  get('/_sandbox/sessions/:id', (ctx) =>
    found(sandbox.session(ctx.params.id!), `No session "${ctx.params.id}"`),
  );
  list('/_sandbox/fulfillment-callbacks', (filter) => sandbox.fulfillmentCallbacks(filter));
  get('/_sandbox/requests', (ctx) => limited(sandbox.requests(), ctx.query));

  post('/_sandbox/invoices/:ref/pay', async (ctx) =>
    sandbox.pay(ctx.params.ref!, parsePayBody(await bodyOf(ctx))),
  );
  post('/_sandbox/sessions/:id/pay', async (ctx) => {
    const body = checkedBody(SandboxServicePaymentBodyDto, await bodyOf(ctx), 'service payment');
    return sandbox.recordServicePayment(ctx.params.id!, withoutNulls(body));
  });
  post('/_sandbox/invoices/:ref/cancel', (ctx) => sandbox.cancel(ctx.params.ref!));
  post('/_sandbox/deliveries/:id/redeliver', (ctx) => sandbox.redeliver(ctx.params.id!));
  post('/_sandbox/reset', () => {
    sandbox.reset();
    return { reset: true };
  });
}

/** What `GET /` shows when the sandbox runs without its dashboard: where to point the modules. */
function renderIndexPage(sandbox: HubtelSandbox): string {
  const urls = sandbox.baseUrls();
  const rows = [
    ['SMS', urls.sms, 'POST /v1/messages/batch/simple/send, POST /v1/messages/send'],
    ['Checkout', urls.checkout, 'POST /items/initiate'],
    ['Transaction status', urls.status, `GET /transactions/${sandbox.posSalesId}/status`],
    ['Fulfillment callback', urls.fulfillmentCallback, 'POST /callback'],
    ['Records (JSON)', `${sandbox.url}/_sandbox`, 'GET /_sandbox/...'],
  ]
    .map(
      ([name, url, paths]) =>
        `<tr><th>${escapeHtml(name)}</th><td><code data-testid="base-url">${escapeHtml(url)}</code></td><td><code>${escapeHtml(paths)}</code></td></tr>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hubtel sandbox</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}th,td{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #ddd}</style>
</head><body><h1>Hubtel sandbox</h1>
<p>A local stand-in for the Hubtel platform. Give the modules these base URLs (POS Sales ID <code>${escapeHtml(sandbox.posSalesId)}</code>):</p>
<table>${rows}</table></body></html>`;
}
