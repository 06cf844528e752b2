/*
 * The example app's HTTP hardening, applied by the bootstrap before it listens:
 *   - server time-outs, so a client sending its request a byte at a time cannot hold a
 *     connection (and a socket) for Node's default 300 s;
 *   - helmet's standard security headers on every answer, with a Content-Security-Policy the
 *     pages work under: scripts only from the app or inline with this request's nonce, styles
 *     inline (the pages are self-contained), forms free to land on the payment page of another
 *     origin (the shop answers its form with a redirect to the sandbox's or Hubtel's page);
 *   - no `X-Powered-By`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { HubtelConfigError } from 'nestjs-hubtel';
import helmet from 'helmet';

/** The nonce of the request being answered (read by the page layout for its inline script). */
const scriptNonce = new AsyncLocalStorage<string>();

/** The CSP nonce of the current request, when answered under `applyHttpSecurity`. */
export function currentScriptNonce(): string | undefined {
  return scriptNonce.getStore();
}

export interface ServerTimeouts {
  /** Time for a request's headers. */
  headersMs: number;
  /** Time for the whole request, body included. */
  requestMs: number;
}

/**
 * Sets the server's time-outs. Node checks them on an interval (30 s by default, fixed when the
 * server starts listening), so the interval is shortened to a fraction of the shortest time-out
 * for them to be kept to.
 */
export function setServerTimeouts(server: Server, timeouts: ServerTimeouts): void {
  const { headersMs, requestMs } = timeouts;
  for (const [name, value] of [
    ['timeouts.headersMs', headersMs],
    ['timeouts.requestMs', requestMs],
  ] as const) {
    if (!Number.isInteger(value) || value <= 0)
      throw new HubtelConfigError(name, `must be a positive number of milliseconds, got ${String(value)}`);
  }
  if (headersMs > requestMs)
    throw new HubtelConfigError('timeouts.headersMs', 'must not be longer than timeouts.requestMs');
  server.headersTimeout = headersMs;
  server.requestTimeout = requestMs;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
    1_000,
    Math.max(50, Math.floor(headersMs / 4)),
  );
}

/** Helmet, a per-request script nonce, and no X-Powered-By, on the app's (Express) server. */
export function applyHttpSecurity(app: INestApplication): void {
  const express = app.getHttpAdapter().getInstance() as { disable?: (setting: string) => void };
  express.disable?.('x-powered-by');
  app.use(
    (req: IncomingMessage, res: ServerResponse & { locals?: Record<string, unknown> }, next: () => void) => {
      const nonce = randomBytes(16).toString('base64');
      (res.locals ??= {}).cspNonce = nonce;
      scriptNonce.run(nonce, next);
    },
  );
  app.use(
    helmet({
      contentSecurityPolicy: {
        directives: {
          'script-src': [
            "'self'",
            (_req: IncomingMessage, res: ServerResponse) =>
              `'nonce-${String((res as { locals?: Record<string, unknown> }).locals?.cspNonce)}'`,
          ],
          // The order form is answered with a redirect to the payment page on another origin.
          'form-action': null,
          // The app runs on plain http locally (and behind the operator's TLS in production).
          'upgrade-insecure-requests': null,
        },
      },
    }),
  );
}
