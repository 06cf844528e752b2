import { maskPhoneNumbers, HUBTEL_TELEMETRY, type HubtelTelemetry, HubtelLogger } from 'nestjs-hubtel';
import { Body, HttpCode, Inject, Optional, Post, Req, Res } from '@nestjs/common';
import {
  answerInbound,
  inboundSignal,
  InboundAccessGuard,
  InboundAccessPolicy,
  PATH_SECRET_PARAM,
  inboundHttpError,
  isAccessGuarded,
  type InboundRequestLike,
} from '#internal';
import { CHECKOUT_ACCESS_POLICY, CHECKOUT_RESOLVED_OPTIONS } from './checkout.constants.js';
import type { ResolvedCheckoutOptions } from './checkout.options.js';
import { CheckoutService } from './checkout.service.js';

/** The body of every 200 answer, whatever became of the callback. */
export interface CheckoutCallbackAck {
  received: true;
}

/**
 * Applied by the module to the mounted controller's class, after the host's guards (so those run
 * first), unless the options are known to set no access check (then `receive` checks the path).
 */
export const CheckoutAccessGuard = InboundAccessGuard(CHECKOUT_ACCESS_POLICY, 'checkout');

/**
 * The web callback endpoint (`POST /hubtel/checkout/callback` by default; mounted by the module
 * with the host's path, guards and decorators).
 *
 * HTTP answers:
 * - 200 `{"received":true}` for every well-formed callback from an allowed source, once it is
 *   recorded: accepted, duplicate, ignored (non-final status) AND rejected by verification. A
 *   forgery thus learns nothing (the answer does not say whether the reference, amount or checkout
 *   id matched), and a platform that retries on errors is not made to re-send what will never verify.
 *   The outcome goes to events and logs instead.
 * - 400 `HUBTEL_INVALID_BODY` with `issues` for a body that is not the contract's callback (wrong
 *   types, missing fields, arrays, prototype-pollution keys); nothing is recorded or emitted.
 *   (Unparseable JSON is answered 400 by the HTTP adapter's body parser before reaching here.)
 * - 413 `HUBTEL_BODY_TOO_LARGE` beyond `maxCallbackBodyBytes` (the adapter's own body limit, if lower, answers first).
 * - 404 / 403 from the optional access guard (wrong path secret / address not allowed); without
 *   a path secret, a request to `<path>/<anything>` is answered 404 the same way.
 * - 503 `HUBTEL_UNAVAILABLE` when the callback could not be recorded (the store failed): not
 *   acknowledged, so a platform that retries can deliver it again.
 * - 503 `HUBTEL_SHUTTING_DOWN` with `Retry-After` once the app shuts down: nothing recorded or
 *   emitted (the reconciler's status check finds the payment if it is never sent again).
 */
export class CheckoutCallbackController {
  private readonly logger = new HubtelLogger('HubtelCheckout');
  /** Mounted without the guard (no access option set): `receive` checks access itself. */
  private readonly checkAccess: boolean;

  constructor(
    @Inject(CheckoutService) private readonly checkout: CheckoutService,
    @Inject(CHECKOUT_ACCESS_POLICY) private readonly access: InboundAccessPolicy,
    @Inject(CHECKOUT_RESOLVED_OPTIONS) private readonly options: ResolvedCheckoutOptions,
    @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
  ) {
    this.checkAccess = !isAccessGuarded(this);
  }

  // Both forms are routed so the path secret can be configured asynchronously: the access check
  // answers 404 for the form that does not match the configuration.
  @Post(['', `:${PATH_SECRET_PARAM}`])
  @HttpCode(200)
  async receive(
    @Body() body: unknown,
    @Req() request: InboundRequestLike,
    // Passthrough: only for the Retry-After header of a 503; Nest still sends the answer.
    @Res({ passthrough: true }) response: unknown,
  ): Promise<CheckoutCallbackAck> {
    return answerInbound('checkout callback', response, () => this.handle(body, request), {
      logger: this.logger,
      telemetry: this.telemetry,
      source: 'checkout',
      onInvalid: (error) => {
        const from = this.access.clientAddress(request)?.address;
        this.logger.warn(
          `Refused a malformed checkout callback${from ? ` from ${from}` : ''}: ${maskPhoneNumbers(error.message)}`,
        );
      },
    });
  }

  private async handle(body: unknown, request: InboundRequestLike): Promise<CheckoutCallbackAck> {
    // With nothing configured this only refuses a path token (what the guard would have done).
    if (this.checkAccess) this.access.check(request);
    const size = bodySize(request, body);
    if (size > this.options.maxCallbackBodyBytes) {
      throw inboundHttpError(
        413,
        'HUBTEL_BODY_TOO_LARGE',
        `Callback body is larger than ${this.options.maxCallbackBodyBytes} bytes`,
      );
    }
    const sourceAddress = this.access.clientAddress(request)?.address;
    const result = await this.checkout.handleCallback(
      body,
      sourceAddress === undefined ? {} : { sourceAddress },
    );
    this.telemetry?.record(inboundSignal('checkout', result.outcome, result.reason));
    return { received: true };
  }
}

function bodySize(request: InboundRequestLike, body: unknown): number {
  const header = request.headers['content-length'];
  const declared = Number(Array.isArray(header) ? header[0] : header);
  if (Number.isFinite(declared) && declared >= 0) return declared;
  // Chunked: measure what was parsed (already bounded by the adapter's own body limit).
  try {
    return body === undefined ? 0 : Buffer.byteLength(typeof body === 'string' ? body : JSON.stringify(body));
  } catch {
    return 0;
  }
}
