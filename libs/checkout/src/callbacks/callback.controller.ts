import { maskPhoneNumbers, HUBTEL_TELEMETRY, type HubtelTelemetry, HubtelLogger } from 'nestjs-hubtel';
import { Body, HttpCode, Inject, Optional, Post, Req, Res } from '@nestjs/common';
import {
  answerInbound,
  inboundPaths,
  inboundSignal,
  inboundHttpError,
  routeInbound,
  inboundPathAccount,
  type InboundRequestLike,
} from '#internal';
import type { CheckoutAccount, CheckoutAccounts } from '../checkout.accounts.js';
import { CHECKOUT_ACCOUNTS, CHECKOUT_RESOLVED_OPTIONS } from '../checkout.constants.js';
import type { ResolvedCheckoutOptions } from '../checkout.options.js';
import { CheckoutService } from '../checkout.service.js';

/**
 * The callback endpoint of every account (`POST <path>[/<account>][/<pathSecret>]`, access checked).
 * 200 once recorded, whatever verification said (a forgery learns nothing); 400 / 413 for bad bodies;
 * 503 when it could not be recorded (re-sent) or during shutdown (the reconciler finds the payment).
 */
export class CheckoutCallbackController {
  private readonly logger = new HubtelLogger('HubtelCheckout');

  constructor(
    @Inject(CheckoutService) private readonly checkout: CheckoutService,
    @Inject(CHECKOUT_ACCOUNTS) private readonly accounts: CheckoutAccounts,
    @Inject(CHECKOUT_RESOLVED_OPTIONS) private readonly options: ResolvedCheckoutOptions,
    @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
  ) {}

  // Every form is routed (secrets and accounts may resolve later): routing answers 404 for the rest.
  @Post(inboundPaths(''))
  @HttpCode(200)
  async receive(
    @Body() body: unknown,
    @Req() request: InboundRequestLike,
    // Passthrough: only for the Retry-After header of a 503; Nest still sends the answer.
    @Res({ passthrough: true }) response: unknown,
  ): Promise<{ received: true }> {
    let routed: CheckoutAccount | undefined;
    return answerInbound(
      'checkout callback',
      response,
      () => this.handle(body, request, (account) => (routed = account)),
      {
        logger: this.logger,
        telemetry: this.telemetry,
        source: 'checkout',
        account: () => routed?.name,
        pathAccount: () => inboundPathAccount(request, this.accounts),
        onInvalid: (error) => {
          const from = (routed ?? this.accounts.default).access.clientAddress(request)?.address;
          this.logger.warn(
            `Refused a malformed checkout callback${from ? ` from ${from}` : ''}: ${maskPhoneNumbers(error.message)}`,
          );
        },
      },
    );
  }

  private async handle(
    body: unknown,
    request: InboundRequestLike,
    routedTo: (account: CheckoutAccount) => void,
  ): Promise<{ received: true }> {
    const account = await routeInbound(request, this.accounts);
    routedTo(account);
    const size = bodySize(request, body);
    if (size > this.options.maxCallbackBodyBytes)
      throw inboundHttpError(
        413,
        'HUBTEL_BODY_TOO_LARGE',
        `Callback body is larger than ${this.options.maxCallbackBodyBytes} bytes`,
      );
    const sourceAddress = account.access.clientAddress(request)?.address;
    const result = await this.checkout.handleCallback(body, { sourceAddress, account: account.name });
    this.telemetry?.record(inboundSignal('checkout', result.outcome, result.reason, account.name));
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
