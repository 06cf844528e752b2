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

/** The body of every 200 answer, whatever became of the callback. */
export interface CheckoutCallbackAck {
  received: true;
}

/**
 * The web callback endpoint of every account (mounted by the module with the host's path, guards
 * and decorators): `POST /hubtel/checkout/callback` (and `/<pathSecret>`) for the default account,
 * `POST /hubtel/checkout/callback/<account>` (and `/<account>/<pathSecret>`) for a named one. The
 * account is chosen from the path and its own access (path secret, allow-list) is checked; named
 * registrations add no route, so none can overwrite another's.
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
 * - 404 / 403 from the account's access check (unknown account, wrong path secret / address not
 *   allowed); without a path secret, a request to `<path>/<anything>` that names no account is
 *   answered 404 the same way. A callback for account A's invoice on account B's path is a
 *   verification rejection (200, `WRONG_ACCOUNT`, nothing emitted).
 * - 503 `HUBTEL_UNAVAILABLE` when the callback could not be recorded (the store failed): not
 *   acknowledged, so a platform that retries can deliver it again.
 * - 503 `HUBTEL_SHUTTING_DOWN` with `Retry-After` once the app shuts down: nothing recorded or
 *   emitted (the reconciler's status check finds the payment if it is never sent again).
 */
export class CheckoutCallbackController {
  private readonly logger = new HubtelLogger('HubtelCheckout');

  constructor(
    @Inject(CheckoutService) private readonly checkout: CheckoutService,
    @Inject(CHECKOUT_ACCOUNTS) private readonly accounts: CheckoutAccounts,
    @Inject(CHECKOUT_RESOLVED_OPTIONS) private readonly options: ResolvedCheckoutOptions,
    @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
  ) {}

  // Every form is routed (the path secrets may be configured asynchronously, accounts resolved at
  // run time): routing answers 404 for a form that matches no account's configuration.
  @Post(inboundPaths(''))
  @HttpCode(200)
  async receive(
    @Body() body: unknown,
    @Req() request: InboundRequestLike,
    // Passthrough: only for the Retry-After header of a 503; Nest still sends the answer.
    @Res({ passthrough: true }) response: unknown,
  ): Promise<CheckoutCallbackAck> {
    /** The account the request was routed to, once known: its refusals are counted under it. */
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
  ): Promise<CheckoutCallbackAck> {
    // Which account, from the path; its own path secret and allow-list checked (404 / 403).
    const account = await routeInbound(request, this.accounts);
    routedTo(account);
    const size = bodySize(request, body);
    if (size > this.options.maxCallbackBodyBytes) {
      throw inboundHttpError(
        413,
        'HUBTEL_BODY_TOO_LARGE',
        `Callback body is larger than ${this.options.maxCallbackBodyBytes} bytes`,
      );
    }
    const sourceAddress = account.access.clientAddress(request)?.address;
    const result = await this.checkout.handleCallback(
      body,
      sourceAddress === undefined ? { account: account.name } : { sourceAddress, account: account.name },
    );
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
