import {
  Controller,
  Inject,
  Injectable,
  Optional,
  UseGuards,
  mixin,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  type InjectionToken,
  type Type,
} from '@nestjs/common';
import type { InboundAccessOptions, InboundAccessPolicy, InboundRequestLike } from './inbound-access.js';
import {
  HUBTEL_TELEMETRY,
  type HubtelInboundSource,
  type HubtelTelemetry,
} from '../telemetry/hubtel-telemetry.js';
import { inboundRejection } from './inbound-telemetry.js';

/**
 * How a host app places and protects a controller of the suite. Given as module "extras"
 * (`CheckoutModule.forRoot({ ..., callback: { path, decorators: [Public(), SkipThrottle()] } })`)
 * because Nest fixes routes before async options resolve.
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

/**
 * The suite's access guard of a mounted controller (see `InboundAccessGuard`), and whether it is
 * needed. `needed: false` when the module's options are known, at mount time, to set no access
 * option (`forRoot` without `pathSecret`/`allowedIps`, see `accessGuardNeeded`): then no guard
 * is mounted (Nest's guard path costs time on every request), and the handlers call
 * `InboundAccessPolicy.check` themselves, which, with nothing configured, only refuses a path
 * token (404) as the guard would have.
 */
export interface MountedAccessGuard {
  guard: Type<CanActivate>;
  needed: boolean;
}

const ACCESS_GUARDED = Symbol('hubtel:access-guarded');

/**
 * Makes a routed controller from a base class of handlers: a subclass (so Nest sees a distinct
 * controller per module instance) with the host's path, guards and decorators applied.
 *
 * With `access`, the suite's access guard is applied to the class after the host's guards and
 * decorators (so they run first), unless `access.needed` is false: the handlers must then check
 * access themselves when `isAccessGuarded(this)` is false.
 */
export function mountController<T>(
  base: Type<T>,
  path: string,
  route: HubtelRouteOptions = {},
  access?: MountedAccessGuard,
): Type<T> {
  const named = { [base.name]: class extends (base as Type<any>) {} }[base.name] as Type<T>;
  Controller(route.path ?? path)(named);
  if (route.guards?.length) UseGuards(...route.guards)(named);
  for (const decorate of route.decorators ?? []) decorate(named);
  if (access?.needed) {
    UseGuards(access.guard)(named);
    Object.defineProperty(named, ACCESS_GUARDED, { value: true });
  }
  return named;
}

/**
 * Whether the controller instance's class was mounted with the suite's access guard. When not,
 * its handlers run `InboundAccessPolicy.check(request)` themselves.
 */
export function isAccessGuarded(controller: object): boolean {
  return (controller.constructor as unknown as Record<symbol, unknown>)[ACCESS_GUARDED] === true;
}

/**
 * Whether a module's controller needs the suite's access guard (`MountedAccessGuard.needed`): false
 * only when the module's options are known at mount time and set no access check, i.e. `forRoot`
 * (its options are a `useValue` provider under `optionsToken`) without `pathSecret`/`allowedIps`.
 * With `forRootAsync` the options resolve after the routes are fixed, so the guard stays.
 */
export function accessGuardNeeded(
  definition: DynamicModule,
  optionsToken: InjectionToken,
  pick: (options: Record<string, unknown>) => unknown,
): boolean {
  for (const provider of definition.providers ?? []) {
    if (typeof provider !== 'object' || provider === null || !('provide' in provider)) continue;
    if (provider.provide !== optionsToken || !('useValue' in provider)) continue;
    const options = provider.useValue as unknown;
    if (options === null || typeof options !== 'object') return true;
    const access = pick(options as Record<string, unknown>);
    if (access === undefined) return false;
    // Anything but an object is left to the policy, which refuses it at bootstrap.
    if (access === null || typeof access !== 'object') return true;
    const { pathSecret, allowedIps } = access as InboundAccessOptions;
    return pathSecret !== undefined || allowedIps !== undefined;
  }
  return true;
}

/**
 * A guard that applies an InboundAccessPolicy provided under `policyToken`. With `source` (the
 * endpoint, or how to tell it from the route's handler), a refusal is reported to the app's
 * HubtelTelemetry, if any.
 */
export function InboundAccessGuard(
  policyToken: InjectionToken,
  source?: HubtelInboundSource | ((handler: string) => HubtelInboundSource),
): Type<CanActivate> {
  @Injectable()
  class AccessGuard implements CanActivate {
    constructor(
      @Inject(policyToken) private readonly policy: InboundAccessPolicy,
      @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
    ) {}
    canActivate(context: ExecutionContext): boolean {
      try {
        this.policy.check(context.switchToHttp().getRequest<InboundRequestLike>());
      } catch (error) {
        if (this.telemetry && source !== undefined) {
          const endpoint = typeof source === 'function' ? source(context.getHandler().name) : source;
          this.telemetry.record(inboundRejection(endpoint, error));
        }
        throw error;
      }
      return true;
    }
  }
  return mixin(AccessGuard);
}
