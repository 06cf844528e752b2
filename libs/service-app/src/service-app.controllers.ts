import { Body, HttpCode, Inject, Post, UseGuards, type Type } from '@nestjs/common';
import {
  HubtelValidationError,
  InboundAccessGuard,
  PATH_SECRET_PARAM,
  inboundHttpError,
  invalidBodyError,
  mountController,
} from 'nestjs-hubtel';
import {
  FulfillmentRejectedError,
  FulfillmentService,
  type FulfillmentReceipt,
} from './fulfillment.service.js';
import { SERVICE_APP_ACCESS_POLICY, SERVICE_APP_ROUTES } from './service-app.constants.js';
import type { ServiceAppRouteOptions } from './service-app.options.js';
import type { ServiceFlowResponse } from './service-app.types.js';
import { ServiceFlowService } from './service-flow.service.js';

/**
 * The two endpoints the platform calls, built per module definition so the host app chooses the
 * prefix, guards and decorators (`routes` extra). Each also answers under `/<path>/<secret>` for
 * the optional path secret (`access.pathSecret`); the access guard refuses a wrong or missing one.
 *
 * Bodies are taken as `unknown` and validated by the services, so a global ValidationPipe of the
 * host app never rejects the platform's extra fields.
 */
export function createServiceAppControllers(routes: ServiceAppRouteOptions = {}): Type<unknown>[] {
  if (routes.disabled) return [];
  const prefix = routes.path ?? SERVICE_APP_ROUTES.prefix;
  const flowPath = trimSlashes(routes.serviceFlowPath ?? SERVICE_APP_ROUTES.serviceFlow);
  const fulfillmentPath = trimSlashes(routes.fulfillmentPath ?? SERVICE_APP_ROUTES.fulfillment);
  const AccessGuard = InboundAccessGuard(SERVICE_APP_ACCESS_POLICY);

  class ServiceFlowController {
    constructor(@Inject(ServiceFlowService) private readonly flows: ServiceFlowService) {}

    /** `POST {service_app_url}/api/service-flow`: one step of a session. */
    @Post([flowPath, `${flowPath}/:${PATH_SECRET_PARAM}`])
    @HttpCode(200)
    @UseGuards(AccessGuard)
    async serviceFlow(@Body() body: unknown): Promise<ServiceFlowResponse> {
      try {
        return await this.flows.handle(body);
      } catch (error) {
        if (error instanceof HubtelValidationError)
          throw invalidBodyError(error.issues, 'service-flow request');
        throw error;
      }
    }
  }

  class FulfillmentController {
    constructor(@Inject(FulfillmentService) private readonly fulfillment: FulfillmentService) {}

    /** `POST {service_app_url}/api/fulfillment`: a paid order; acknowledged once recorded. */
    @Post([fulfillmentPath, `${fulfillmentPath}/:${PATH_SECRET_PARAM}`])
    @HttpCode(200)
    @UseGuards(AccessGuard)
    async fulfill(@Body() body: unknown): Promise<FulfillmentReceipt> {
      try {
        return await this.fulfillment.receive(body);
      } catch (error) {
        if (error instanceof HubtelValidationError)
          throw invalidBodyError(error.issues, 'fulfillment request');
        if (error instanceof FulfillmentRejectedError)
          throw inboundHttpError(error.httpStatus ?? 409, `HUBTEL_${error.reason}`, error.message);
        throw error;
      }
    }
  }

  return [
    mountController(ServiceFlowController, prefix, routes),
    mountController(FulfillmentController, prefix, routes),
  ];
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}
