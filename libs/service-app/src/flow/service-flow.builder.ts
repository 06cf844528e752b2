/** The two ways to declare a flow, `@ServiceFlow()` classes and ServiceFlowBuilder, and their one check. */
import { Injectable, type Type } from '@nestjs/common';
import { HubtelConfigError } from 'nestjs-hubtel';
import { FLOW_STEPS_METADATA, SERVICE_FLOW_METADATA } from '../service-app.constants.js';
import type { FlowResumeOptions, FlowStepHandler, ServiceFlowDefinition } from '../service-flow.context.js';

/** Builds a flow without a class (from configuration, or in `forRootAsync`'s factory). */
export class ServiceFlowBuilder<TData extends Record<string, unknown> = Record<string, unknown>> {
  private readonly codes: string[] = [];
  private readonly steps: FlowStepDraft[] = [];
  private fallback = false;
  private resumeOptions?: FlowResumeOptions;

  constructor(private readonly name: string) {
    if (typeof name !== 'string' || name.trim() === '')
      throw new HubtelConfigError('ServiceFlowBuilder.name', 'must be a non-empty string');
  }

  /** ServiceCode(s) routed to this flow. Without any, the flow is the default one. */
  forServiceCode(...codes: string[]): this {
    this.codes.push(...checkServiceCodes(codes, `flows.${this.name}.serviceCode`));
    return this;
  }

  /** Also serve codes not routed to another flow. */
  asDefault(): this {
    this.fallback = true;
    return this;
  }

  /** Offer an unfinished session's state on the next dial within `withinMs` (see FlowResumeOptions). */
  resumable(options: FlowResumeOptions): this {
    this.resumeOptions = options;
    return this;
  }

  /** Adds a step; steps run in the order added unless a prompt names its `next`. */
  step(name: string, handler: FlowStepHandler<TData>, options: { start?: boolean } = {}): this {
    // Refused here too, not only at build(): the stack then points at the step's line.
    if (typeof handler !== 'function')
      throw new HubtelConfigError(`flows.${this.name}.steps.${name}`, 'must be a function');
    this.steps.push({ name, handler, start: options.start === true });
    return this;
  }

  build(): ServiceFlowDefinition {
    const isDefault = this.fallback || this.codes.length === 0;
    const resume = this.resumeOptions && { resume: this.resumeOptions };
    return defineFlow({ name: this.name, serviceCodes: [...this.codes], isDefault, ...resume }, this.steps);
  }
}

/** @internal A step as declared: by the builder, or a `@FlowStep()` method bound to its instance. */
export interface FlowStepDraft {
  name: string;
  handler: FlowStepHandler<any>;
  start: boolean;
}

/** A flow's routing: what `@ServiceFlow()` records and the builder collects. */
type FlowMetadata = Pick<ServiceFlowDefinition, 'name' | 'serviceCodes' | 'isDefault' | 'resume'>;

/** @internal A flow from its routing and steps (the one marked start, else the first), checked. */
export function defineFlow(routing: FlowMetadata, steps: readonly FlowStepDraft[]): ServiceFlowDefinition {
  const starts = steps.filter((step) => step.start);
  if (starts.length > 1)
    throw new HubtelConfigError(`flows.${routing.name}`, 'more than one step is marked start');
  return assertFlowDefinition({
    ...routing,
    steps: steps.map(({ name, handler }) => ({ name, handler })),
    start: (starts[0] ?? steps[0])?.name ?? '',
  });
}

/** @internal The codes, each checked to be a non-empty string. */
export function checkServiceCodes(codes: readonly string[], option: string): string[] {
  if (codes.some((code) => typeof code !== 'string' || code.trim() === ''))
    throw new HubtelConfigError(option, 'must be non-empty strings');
  return [...codes];
}

/** Checks a flow's shape, naming what is wrong; called at bootstrap for every flow. */
export function assertFlowDefinition(flow: ServiceFlowDefinition): ServiceFlowDefinition {
  const where = `flows.${flow?.name ?? '?'}`;
  if (!flow || typeof flow.name !== 'string' || flow.name.trim() === '')
    throw new HubtelConfigError(where, 'must have a name');
  if (!Array.isArray(flow.steps) || flow.steps.length === 0)
    throw new HubtelConfigError(where, 'must have at least one step');
  const names = new Set<string>();
  for (const step of flow.steps) {
    if (typeof step.name !== 'string' || step.name.trim() === '')
      throw new HubtelConfigError(`${where}.steps`, 'step names must be non-empty strings');
    if (names.has(step.name)) throw new HubtelConfigError(`${where}.steps.${step.name}`, 'is declared twice');
    if (typeof step.handler !== 'function')
      throw new HubtelConfigError(`${where}.steps.${step.name}`, 'must be a function');
    names.add(step.name);
  }
  if (!names.has(flow.start))
    throw new HubtelConfigError(`${where}.start`, `names no step ("${flow.start}")`);
  if (!Array.isArray(flow.serviceCodes))
    throw new HubtelConfigError(`${where}.serviceCodes`, 'must be an array');
  if (flow.resume !== undefined) {
    const { withinMs, message } = flow.resume ?? {};
    if (typeof withinMs !== 'number' || !Number.isInteger(withinMs) || withinMs < 1)
      throw new HubtelConfigError(
        `${where}.resume.withinMs`,
        'must be a whole number of milliseconds, 1 or more',
      );
    if (message !== undefined && (typeof message !== 'string' || message.trim() === ''))
      throw new HubtelConfigError(`${where}.resume.message`, 'must be a non-empty string');
  }
  return flow;
}

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

/** A `@FlowStep()` method as its class records it (bound to the instance at discovery). */
export type FlowStepMetadata = Omit<FlowStepDraft, 'handler'> & { method: string };

/** Marks a provider class as a service flow: its `@FlowStep()` methods are the steps, in order. */
export function ServiceFlow(options: ServiceFlowOptions = {}): ClassDecorator {
  return (target) => {
    const where = `@ServiceFlow(${target.name}).serviceCode`;
    const codes = checkServiceCodes([options.serviceCode ?? []].flat(), where);
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
    // A subclass's own list starts as a copy of the inherited one (the parent's stays as it is).
    const own = Reflect.hasOwnMetadata(FLOW_STEPS_METADATA, owner) ? stepsOf(owner) : [...stepsOf(owner)];
    const method = String(propertyKey);
    own.push({ name: options.name ?? method, method, start: options.start === true });
    Reflect.defineMetadata(FLOW_STEPS_METADATA, own, owner);
  };
}

function stepsOf(type: Function): FlowStepMetadata[] {
  return (Reflect.getMetadata(FLOW_STEPS_METADATA, type) as FlowStepMetadata[] | undefined) ?? [];
}

/** @internal The flow metadata of a class, if it is a `@ServiceFlow()`. */
export function getFlowMetadata(
  type: Type<unknown> | Function,
): { flow: FlowMetadata; steps: FlowStepMetadata[] } | undefined {
  const flow = Reflect.getMetadata(SERVICE_FLOW_METADATA, type) as FlowMetadata | undefined;
  return flow && { flow, steps: stepsOf(type) };
}
