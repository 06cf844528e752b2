import { Body, HttpCode, Inject, Optional, Post, Req, Res, type Type } from '@nestjs/common';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from 'nestjs-hubtel';
import {
  answerInbound,
  inboundRejection,
  inboundSignal,
  type InboundAnswerOptions,
  type InboundPipeline,
  InboundAccessGuard,
  InboundAccessPolicy,
  PATH_SECRET_PARAM,
  inboundHttpError,
  isAccessGuarded,
  mountController,
  type InboundRequestLike,
} from '#internal';
import {
  FulfillmentRejectedError,
  FulfillmentService,
  type FulfillmentReceipt,
} from './fulfillment.service.js';
import {
  SERVICE_APP_ACCESS_POLICY,
  SERVICE_APP_PIPELINE,
  SERVICE_APP_ROUTES,
} from './service-app.constants.js';
import { ServiceAppLogger } from './service-app.logger.js';
import type { ServiceAppRouteOptions } from './service-app.options.js';
import type { ServiceFlowResponse } from './service-app.types.js';
import { ServiceFlowService } from './service-flow.service.js';

/**
 * The suite's access guard of both endpoints (`access` options). Applied by the module to the
 * mounted controller's class, after the host's `routes.guards` (so those run first), unless the
 * options are known to set no access check: then each handler checks the request itself.
 */
export const ServiceAppAccessGuard = InboundAccessGuard(SERVICE_APP_ACCESS_POLICY, (handler) =>
  handler === 'fulfill' ? 'fulfillment' : 'service-flow',
);

/**
 * The two endpoints the platform calls, on one controller built per module definition so the
 * host app chooses the prefix, guards and decorators (`routes` extra). Each also answers under
 * `/<path>/<secret>` for the optional path secret (`access.pathSecret`); the access check refuses
 * a wrong or missing one (404), and without a path secret answers `/<path>/<anything>` 404 too.
 *
 * `guarded: false` (forRoot without `pathSecret`/`allowedIps`) mounts no access guard: Nest's guard
 * path costs time on every request for a check that, with nothing configured, only refuses a path
 * token; the handlers make that check themselves.
 *
 * Bodies are taken as `unknown` and validated by the services, so a global ValidationPipe of the
 * host app never rejects the platform's extra fields.
 */
export function createServiceAppController(
  routes: ServiceAppRouteOptions = {},
  guarded = true,
): Type<unknown>[] {
  if (routes.disabled) return [];
  const flowPath = trimSlashes(routes.serviceFlowPath ?? SERVICE_APP_ROUTES.serviceFlow);
  const fulfillmentPath = trimSlashes(routes.fulfillmentPath ?? SERVICE_APP_ROUTES.fulfillment);

  class ServiceAppController {
    /** Mounted without the guard (no access option set): the handlers check access themselves. */
    private readonly checkAccess: boolean;
    private readonly fulfillmentAnswers: InboundAnswerOptions;

    constructor(
      @Inject(ServiceFlowService) private readonly flows: ServiceFlowService,
      @Inject(FulfillmentService) private readonly fulfillment: FulfillmentService,
      @Inject(SERVICE_APP_ACCESS_POLICY) private readonly access: InboundAccessPolicy,
      @Inject(SERVICE_APP_PIPELINE) private readonly pipeline: InboundPipeline,
      @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
    ) {
      this.checkAccess = !isAccessGuarded(this);
      // Built once: a spread per request showed in the fulfillment endpoint's CPU profile.
      this.fulfillmentAnswers = { ...answers, telemetry, source: 'fulfillment' };
    }

    /** `POST {service_app_url}/api/service-flow`: one step of a session. */
    @Post([flowPath, `${flowPath}/:${PATH_SECRET_PARAM}`])
    @HttpCode(200)
    serviceFlow(
      @Body() body: unknown,
      @Req() request: InboundRequestLike,
      // Passthrough: only for the Retry-After header of a 503; Nest still sends the answer.
      @Res({ passthrough: true }) response: unknown,
    ): Promise<ServiceFlowResponse> {
      // With nothing configured this only refuses a path token (what the guard would have done).
      if (this.checkAccess) this.checkOrReport('service-flow', request);
      return answerInbound(
        'service-flow request',
        response,
        () => {
          // A session step is not recorded as a job, but during shutdown it is refused like the rest.
          this.pipeline.assertAcceptingInbound('service-flow request');
          return this.flows.handle(body);
        },
        answers,
      );
    }

    /** `POST {service_app_url}/api/fulfillment`: a paid order; acknowledged once recorded. */
    @Post([fulfillmentPath, `${fulfillmentPath}/:${PATH_SECRET_PARAM}`])
    @HttpCode(200)
    fulfill(
      @Body() body: unknown,
      @Req() request: InboundRequestLike,
      @Res({ passthrough: true }) response: unknown,
    ): Promise<FulfillmentReceipt> {
      if (this.checkAccess) this.checkOrReport('fulfillment', request);
      const receipt = answerInbound(
        'fulfillment request',
        response,
        () => this.fulfillment.receive(body),
        this.fulfillmentAnswers,
      );
      if (!this.telemetry) return receipt;
      return receipt.then((done) => {
        this.telemetry!.record(
          inboundSignal('fulfillment', done.Status === 'duplicate' ? 'duplicate' : 'accepted'),
        );
        return done;
      });
    }

    private checkOrReport(source: 'service-flow' | 'fulfillment', request: InboundRequestLike): void {
      try {
        this.access.check(request);
      } catch (error) {
        this.telemetry?.record(inboundRejection(source, error));
        throw error;
      }
    }
  }

  return [
    mountController(ServiceAppController, routes.path ?? SERVICE_APP_ROUTES.prefix, routes, {
      guard: ServiceAppAccessGuard,
      needed: guarded,
    }),
  ];
}

/**
 * How both endpoints answer errors (answerInbound), with the fulfillment's typed refusals. Nothing
 * else means the store failed: a 503, so the platform may send the request again later.
 */
const answers: InboundAnswerOptions = {
  logger: new ServiceAppLogger(),
  refusal: (error) =>
    error instanceof FulfillmentRejectedError
      ? inboundHttpError(error.httpStatus ?? 409, `HUBTEL_${error.reason}`, error.message)
      : undefined,
};

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}
