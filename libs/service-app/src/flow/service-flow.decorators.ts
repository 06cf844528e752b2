import { Injectable, type Type } from '@nestjs/common';
import { FLOW_STEPS_METADATA, SERVICE_FLOW_METADATA } from '../service-app.constants.js';
import type { FlowResumeOptions, ServiceFlowDefinition } from '../service-flow.context.js';
import { checkServiceCodes } from './service-flow.builder.js';

export interface ServiceFlowOptions {
  /** ServiceCode(s) routed to this flow; none: the default flow, serving every unrouted code. */
  serviceCode?: string | readonly string[];
  /** Also serve unrouted codes when `serviceCode` is given. */
  default?: boolean;
  /** Stable name stored in sessions. Default: the class name. */
  name?: string;
  /** Offer an unfinished session's state on the next dial within `withinMs` (see FlowResumeOptions). */
  resume?: FlowResumeOptions;
}

export interface FlowStepOptions {
  /** Step name (what `next` and `goTo` refer to). Default: the method name. */
  name?: string;
  /** The flow starts here. Default: the first step declared. */
  start?: boolean;
}

type FlowMetadata = Pick<ServiceFlowDefinition, 'name' | 'serviceCodes' | 'isDefault' | 'resume'>;

export interface FlowStepMetadata {
  name: string;
  method: string;
  start: boolean;
}

/** Marks a provider class as a service flow: its `@FlowStep()` methods are the steps, in order. */
export function ServiceFlow(options: ServiceFlowOptions = {}): ClassDecorator {
  return (target) => {
    const codes = checkServiceCodes(
      [options.serviceCode ?? []].flat(),
      `@ServiceFlow(${target.name}).serviceCode`,
    );
    const metadata: FlowMetadata = {
      name: options.name ?? target.name,
      serviceCodes: codes,
      isDefault: options.default === true || codes.length === 0,
      ...(options.resume !== undefined && { resume: options.resume }),
    };
    Reflect.defineMetadata(SERVICE_FLOW_METADATA, metadata, target);
    Injectable()(target);
  };
}

/** Marks a method of a `@ServiceFlow()` class as a step: `(ctx: FlowContext) => FlowReply`. */
export function FlowStep(nameOrOptions: string | FlowStepOptions = {}): MethodDecorator {
  const options = typeof nameOrOptions === 'string' ? { name: nameOrOptions } : nameOrOptions;
  return (target, propertyKey) => {
    const owner = target.constructor;
    const inherited =
      (Reflect.getMetadata(FLOW_STEPS_METADATA, owner) as FlowStepMetadata[] | undefined) ?? [];
    const own = (Reflect.getOwnMetadata(FLOW_STEPS_METADATA, owner) as FlowStepMetadata[] | undefined) ?? [
      ...inherited,
    ];
    own.push({
      name: options.name ?? String(propertyKey),
      method: String(propertyKey),
      start: options.start === true,
    });
    Reflect.defineMetadata(FLOW_STEPS_METADATA, own, owner);
  };
}

/** @internal The flow metadata of a class, if it is a `@ServiceFlow()`. */
export function getFlowMetadata(
  type: Type<unknown> | Function,
): { flow: FlowMetadata; steps: FlowStepMetadata[] } | undefined {
  const flow = Reflect.getMetadata(SERVICE_FLOW_METADATA, type) as FlowMetadata | undefined;
  if (!flow) return undefined;
  return {
    flow,
    steps: (Reflect.getMetadata(FLOW_STEPS_METADATA, type) as FlowStepMetadata[] | undefined) ?? [],
  };
}
