import {
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';

/** `POST /orders` per minute: per client address, and for all clients together (per instance). */
export interface OrderLimits {
  perClientPerMinute: number;
  perMinute: number;
}

export const ORDER_LIMITS = Symbol('EXAMPLE_ORDER_LIMITS');

const WINDOW_MS = 60_000;
/** Most client addresses counted in one window (a spread-out flood hits `perMinute` first anyway). */
const MAX_CLIENTS = 100_000;

/** Answered 429 with `code`, as the shop's other errors. */
export class TooManyOrdersError extends HttpException {
  readonly code = 'TOO_MANY_ORDERS';

  constructor(readonly retryAfterSeconds: number) {
    super(
      {
        statusCode: HttpStatus.TOO_MANY_REQUESTS,
        code: 'TOO_MANY_ORDERS',
        message: 'Too many orders; please try again in a minute',
      },
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}

/**
 * Limits `POST /orders`: each order is an invoice at the platform and, until it is paid or
 * expires, status checks. Fixed one-minute windows, counted in this process (with several
 * replicas the limits are per replica; behind a proxy, let the framework see the client's address:
 * Express `trust proxy`, Fastify `trustProxy`). Works on either adapter: it reads only `ip` and
 * the socket's address, and sets `Retry-After` through whichever reply API is there.
 */
@Injectable()
export class OrdersRateLimitGuard implements CanActivate {
  private windowStart = 0;
  private total = 0;
  private readonly perClient = new Map<string, number>();

  constructor(@Inject(ORDER_LIMITS) private readonly limits: OrderLimits) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const now = Date.now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.windowStart = now;
      this.total = 0;
      this.perClient.clear();
    }
    const client = clientAddress(http.getRequest());
    const used = this.perClient.get(client) ?? 0;
    if (used >= this.limits.perClientPerMinute || this.total >= this.limits.perMinute) {
      const retryAfter = Math.max(1, Math.ceil((this.windowStart + WINDOW_MS - now) / 1000));
      setHeader(http.getResponse(), 'Retry-After', String(retryAfter));
      throw new TooManyOrdersError(retryAfter);
    }
    this.total++;
    if (this.perClient.size < MAX_CLIENTS || this.perClient.has(client)) this.perClient.set(client, used + 1);
    return true;
  }
}

function clientAddress(req: { ip?: string; socket?: { remoteAddress?: string } }): string {
  return req.ip ?? req.socket?.remoteAddress ?? 'unknown';
}

function setHeader(res: unknown, name: string, value: string): void {
  const r = res as { setHeader?: (n: string, v: string) => void; header?: (n: string, v: string) => void };
  // Express: setHeader (Node's); Fastify: reply.header.
  if (typeof r.header === 'function') r.header(name, value);
  else r.setHeader?.(name, value);
}
