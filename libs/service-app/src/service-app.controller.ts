import { Body, HttpCode, HttpException, Inject, Post, UseGuards, type Type } from '@nestjs/common';
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
import { ServiceAppLogger } from './service-app.logger.js';
import type { ServiceAppRouteOptions } from './service-app.options.js';
import type { ServiceFlowResponse } from './service-app.types.js';
import { ServiceFlowService } from './service-flow.service.js';

/**
 * The two endpoints the platform calls, on one controller built per module definition so the
 * host app chooses the prefix, guards and decorators (`routes` extra). Each also answers under
 * `/<path>/<secret>` for the optional path secret (`access.pathSecret`); the access guard refuses
 * a wrong or missing one.
 *
 * Bodies are taken as `unknown` and validated by the services, so a global ValidationPipe of the
 * host app never rejects the platform's extra fields.
 */
export function createServiceAppController(routes: ServiceAppRouteOptions = {}): Type<unknown>[] {
  if (routes.disabled) return [];
  const flowPath = trimSlashes(routes.serviceFlowPath ?? SERVICE_APP_ROUTES.serviceFlow);
  const fulfillmentPath = trimSlashes(routes.fulfillmentPath ?? SERVICE_APP_ROUTES.fulfillment);

  // On the methods, not the class: the host's `routes.guards` (class level) run first.
  const AccessGuard = InboundAccessGuard(SERVICE_APP_ACCESS_POLICY);

  class ServiceAppController {
    constructor(
      @Inject(ServiceFlowService) private readonly flows: ServiceFlowService,
      @Inject(FulfillmentService) private readonly fulfillment: FulfillmentService,
    ) {}

    /** `POST {service_app_url}/api/service-flow`: one step of a session. */
    @Post([flowPath, `${flowPath}/:${PATH_SECRET_PARAM}`])
    @HttpCode(200)
    @UseGuards(AccessGuard)
    serviceFlow(@Body() body: unknown): Promise<ServiceFlowResponse> {
      return answer('service-flow request', () => this.flows.handle(body));
    }

    /** `POST {service_app_url}/api/fulfillment`: a paid order; acknowledged once recorded. */
    @Post([fulfillmentPath, `${fulfillmentPath}/:${PATH_SECRET_PARAM}`])
    @HttpCode(200)
    @UseGuards(AccessGuard)
    fulfill(@Body() body: unknown): Promise<FulfillmentReceipt> {
      return answer('fulfillment request', () => this.fulfillment.receive(body));
    }
  }

  return [mountController(ServiceAppController, routes.path ?? SERVICE_APP_ROUTES.prefix, routes)];
}

/**
 * Runs one endpoint's service call and turns its typed refusals into the suite's machine-readable
 * error bodies. Anything else means the store failed: a 503 (not a 500, and not acknowledged), so
 * the platform may send the request again later.
 */
const logger = new ServiceAppLogger();

async function answer<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof HubtelValidationError) throw invalidBodyError(error.issues, what);
    if (error instanceof FulfillmentRejectedError)
      throw inboundHttpError(error.httpStatus ?? 409, `HUBTEL_${error.reason}`, error.message);
    if (error instanceof HttpException) throw error;
    logger.error(`A ${what} could not be handled: ${error instanceof Error ? error.message : String(error)}`);
    throw inboundHttpError(
      503,
      'HUBTEL_UNAVAILABLE',
      `The ${what} could not be recorded; send it again later`,
    );
  }
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}
