import { Controller, UseGuards, type CanActivate, type Type } from '@nestjs/common';

/**
 * How a host app places and protects a suite's controller: module "extras", as Nest fixes routes before
 * async options resolve (`CheckoutModule.forRoot({ ..., callback: { path, decorators: [Public()] } })`).
 */
export interface HubtelRouteOptions {
  /** Route path of the controller (Nest's global prefix still applies). */
  path?: string;
  /** Class decorators added to the controller, e.g. `Public()`, `SkipThrottle()`, `ApiExcludeController()`. */
  decorators?: ClassDecorator[];
  /** Guards run in front of the suite's own access checks, e.g. your own auth guard. */
  guards?: Array<Type<CanActivate> | CanActivate>;
  /** Register no controller: mount the endpoint yourself and call the module's service. */
  disabled?: boolean;
}

/** A routed subclass of a handlers class with the host's path, guards and decorators (see routeInbound). */
export function mountController<T>(base: Type<T>, path: string, route: HubtelRouteOptions = {}): Type<T> {
  const named = { [base.name]: class extends (base as Type<any>) {} }[base.name] as Type<T>;
  Controller(route.path ?? path)(named);
  if (route.guards?.length) UseGuards(...route.guards)(named);
  for (const decorate of route.decorators ?? []) decorate(named);
  return named;
}
