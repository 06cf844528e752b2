import { Body, HttpCode, Inject, Optional, Post, Req, Res, type Type } from '@nestjs/common';
import {
  HUBTEL_TELEMETRY,
  type HubtelInboundSource,
  type HubtelTelemetry,
  HubtelLogger,
} from 'nestjs-hubtel';
import {
  answerInbound,
  inboundPaths,
  inboundSignal,
  type InboundAnswerOptions,
  type InboundPipeline,
  inboundHttpError,
  mountController,
  routeInbound,
  inboundPathAccount,
  type InboundRequestLike,
} from '#internal';
import {
  FulfillmentRejectedError,
  FulfillmentService,
  type FulfillmentReceipt,
} from './fulfillment/index.js';
import type { ServiceAppAccount, ServiceAppAccounts } from './service-app.accounts.js';
import { SERVICE_APP_ACCOUNTS, SERVICE_APP_PIPELINE, SERVICE_APP_ROUTES } from './service-app.constants.js';
import { ServiceAppWrongAccountError } from './service-app.errors.js';
import type { ServiceAppRouteOptions, ServiceFlowResponse } from './service-app.types.js';

/**
 * The two endpoints, for every account at `/<path>[/<account>][/<secret>]`; another account's session
 * or order is refused 409. Bodies are validated by the services, not a host's ValidationPipe.
 */
export function createServiceAppController(routes: ServiceAppRouteOptions = {}): Type<unknown>[] {
  if (routes.disabled) return [];
  const flowPath = trimSlashes(routes.serviceFlowPath ?? SERVICE_APP_ROUTES.serviceFlow);
  const fulfillmentPath = trimSlashes(routes.fulfillmentPath ?? SERVICE_APP_ROUTES.fulfillment);

  class ServiceAppController {
    constructor(
      @Inject(FulfillmentService) private readonly fulfillment: FulfillmentService,
      @Inject(SERVICE_APP_ACCOUNTS) private readonly accounts: ServiceAppAccounts,
      @Inject(SERVICE_APP_PIPELINE) private readonly pipeline: InboundPipeline,
      @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
    ) {}

    /** `POST {service_app_url}/api/service-flow[/<account>][/<secret>]`: one step of a session. */
    @Post(inboundPaths(flowPath))
    @HttpCode(200)
    serviceFlow(
      @Body() body: unknown,
      @Req() request: InboundRequestLike,
      // Passthrough: only for the Retry-After header of a 503; Nest still sends the answer.
      @Res({ passthrough: true }) response: unknown,
    ): Promise<ServiceFlowResponse> {
      return this.answer('service-flow', request, response, (account) => {
        // A session step is not recorded as a job, but during shutdown it is refused like the rest.
        this.pipeline.assertAcceptingInbound('service-flow request');
        return account.flows.handle(body);
      });
    }

    /** `POST {service_app_url}/api/fulfillment[/<account>][/<secret>]`: a paid order; acknowledged once recorded. */
    @Post(inboundPaths(fulfillmentPath))
    @HttpCode(200)
    async fulfill(
      @Body() body: unknown,
      @Req() request: InboundRequestLike,
      @Res({ passthrough: true }) response: unknown,
    ): Promise<FulfillmentReceipt> {
      let routed = '';
      const receipt = await this.answer('fulfillment', request, response, (account) => {
        routed = account.name;
        return this.fulfillment.receive(body, account);
      });
      const outcome = receipt.Status === 'duplicate' ? 'duplicate' : 'accepted';
      this.telemetry?.record(inboundSignal('fulfillment', outcome, undefined, routed));
      return receipt;
    }

    /** Routes the request to its account (access checked) and answers it, counting refusals. */
    private async answer<T>(
      source: HubtelInboundSource,
      request: InboundRequestLike,
      response: unknown,
      run: (account: ServiceAppAccount) => Promise<T>,
    ): Promise<T> {
      let account: ServiceAppAccount | undefined;
      return answerInbound(
        `${source} request`,
        response,
        async () => {
          // In the answer: a resolver that fails is a 503 (sent again later), not a 500.
          account = await routeInbound(request, this.accounts);
          return run(account);
        },
        // Written out, not `{ ...shared, more }`: on Node 20, V8 builds a literal that spreads and then
        // adds keys on a slow path, and this is every request.
        {
          logger,
          refusal: refusalOf,
          telemetry: this.telemetry,
          source,
          account: () => account?.name,
          pathAccount: () => inboundPathAccount(request, this.accounts),
          // Service-flow steps report themselves: only the refusals at the door count here.
          counts: (refusal, routed) =>
            source === 'fulfillment' || !routed || refusal.reason === WRONG_ACCOUNT,
        },
      );
    }
  }

  return [mountController(ServiceAppController, routes.path ?? SERVICE_APP_ROUTES.prefix, routes)];
}

const WRONG_ACCOUNT = 'HUBTEL_WRONG_ACCOUNT';

const logger = new HubtelLogger('HubtelServiceApp');

/** Typed refusals answer 409 (or their status); anything else is a 503: sent again later. */
const refusalOf: InboundAnswerOptions['refusal'] = (error) => {
  if (error instanceof FulfillmentRejectedError)
    return inboundHttpError(error.httpStatus ?? 409, `HUBTEL_${error.reason}`, error.message);
  if (error instanceof ServiceAppWrongAccountError)
    return inboundHttpError(409, WRONG_ACCOUNT, error.message);
  return undefined;
};

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}
