import { STATUS_CODES } from 'node:http';
import { HubtelError, HubtelValidationError, type ValidationIssue } from 'nestjs-hubtel';
import { escapeHtml } from './sandbox.http.js';
import type { SandboxApi, SandboxReply } from './sandbox.route-types.js';

/** A record (invoice, delivery, session) the caller named is not in the sandbox. */
export class SandboxNotFoundError extends HubtelError {
  constructor(
    readonly kind: string,
    readonly reference: string,
  ) {
    super(
      'HUBTEL_NOT_FOUND',
      `Sandbox has no ${kind} "${reference}" (unknown, or dropped from its bounded records)`,
    );
  }
}

/** The record is not in a state that allows the action (paying a paid invoice, say). */
export class SandboxStateError extends HubtelValidationError {
  constructor(
    message: string,
    readonly state: string,
  ) {
    super(message, [{ field: 'state', message: `is ${state}` }]);
  }
}

/** One bad argument of a sandbox method; the message is `<summary ?? field + message>`. */
export function invalidArgument(
  field: string,
  message: string,
  value?: unknown,
  summary = `${field} ${message}`,
): HubtelValidationError {
  return new HubtelValidationError(summary, [{ field, message, ...(value === undefined ? {} : { value }) }]);
}

/** Every issue of one checked input, listed in the message (`Invalid callback fault: ...`). */
export function invalidInput(what: string, issues: ValidationIssue[]): HubtelValidationError {
  const detail = issues.map((i) => `${i.field} ${i.message}`).join('; ');
  return new HubtelValidationError(`Invalid ${what}: ${detail}`, issues);
}

// Error bodies per face of the platform (the contract shows none; these follow the platform facts).

export interface FieldError {
  field: string;
  message: string;
}

export interface ApiErrorDetails {
  message?: string;
  /** SMS 400 sub-code (1 bad destination, 2 bad sender, 3 too long, 6 rejected, 7/8 bad parameters). */
  subCode?: number;
  responseCode?: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
}

export function apiErrorReply(api: SandboxApi, status: number, details: ApiErrorDetails = {}): SandboxReply {
  const { headers, errors = [] } = details;
  const message = details.message ?? STATUS_CODES[status] ?? 'Error';
  if (api === 'pay-page') return { status, headers, html: errorPage(status, message) };
  const DEFAULT_CODES: Record<number, string> = { 400: '4000', 401: '4101', 403: '4101' };
  const responseCode = details.responseCode ?? DEFAULT_CODES[status] ?? String(status);
  const listed = errors.length > 0 ? { errors } : {};
  const data = errors.length > 0 ? errors : null;
  const json =
    api === 'sms'
      ? { status: details.subCode ?? status, message, ...listed }
      : api === 'checkout'
        ? { responseCode, status: 'Error', message, data }
        : api === 'admin'
          ? { error: responseCode, message, ...listed }
          : { message, responseCode, data }; // status, callback
  return { status, headers, json };
}

/** 415: a body that is not (declared) JSON. */
export function notJsonReply(api: SandboxApi, type: string | undefined): SandboxReply {
  return apiErrorReply(api, 415, {
    message: `Content-Type must be application/json, got ${type ? type.slice(0, 60) : 'none'}`,
    errors: [{ field: 'Content-Type', message: 'must be application/json' }],
  });
}

/** Thrown inside a route handler to answer with an error reply. */
export class SandboxHttpError extends Error {
  constructor(readonly reply: SandboxReply) {
    super(`HTTP ${reply.status}`);
  }
}

export function errorPage(status: number, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status} ${escapeHtml(STATUS_CODES[status] ?? '')}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem">
<h1>${status} ${escapeHtml(STATUS_CODES[status] ?? '')}</h1><p data-testid="error">${escapeHtml(message)}</p></body></html>`;
}

/** The HTML 403 the platform's gateway answers to an address not on the allow-list. */
export function forbiddenHtmlPage(): string {
  return `<!DOCTYPE html>
<html><head><title>403 Forbidden</title></head>
<body><h1>403 Forbidden</h1><p>You don't have permission to access this resource. Your IP address is not whitelisted.</p></body></html>`;
}
