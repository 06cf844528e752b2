import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { HubtelConfigError, HubtelLogger } from 'nestjs-hubtel';
import { ussdScreen } from '#internal';
import { SERVICE_APP_OPTIONS } from '../service-app.constants.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import { assertFlowDefinition, defineFlow, getFlowMetadata } from './service-flow.builder.js';
import type { FlowStepHandler, ServiceFlowDefinition } from '../service-flow.context.js';
import { layoutMenu } from './service-flow.ussd.js';

/** Every flow (`@ServiceFlow()` providers and the `flows` option); routes a ServiceCode to its flow. */
@Injectable()
export class ServiceFlowRegistry implements OnModuleInit {
  private readonly logger = new HubtelLogger('HubtelServiceApp');
  private readonly byName = new Map<string, ServiceFlowDefinition>();
  private readonly byCode = new Map<string, ServiceFlowDefinition>();
  private fallback?: ServiceFlowDefinition;
  private loaded = false;

  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(SERVICE_APP_OPTIONS) private readonly options: ResolvedServiceAppOptions,
  ) {}

  onModuleInit(): void {
    this.load();
  }

  /** The flow serving a ServiceCode: the one routed to it, else the default flow. */
  route(serviceCode: string): ServiceFlowDefinition | undefined {
    this.load();
    return this.byCode.get(serviceCode) ?? this.fallback;
  }

  /** A flow by name (sessions remember their flow by name). */
  get(name: string): ServiceFlowDefinition | undefined {
    this.load();
    return this.byName.get(name);
  }

  /** Every flow, in registration order. */
  list(): ServiceFlowDefinition[] {
    this.load();
    return [...this.byName.values()];
  }

  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    for (const flow of this.discover()) this.add(flow);
    for (const flow of this.options.flows) this.add(flow);
    if (this.byName.size === 0)
      this.logger.warn(
        'No service flow is registered: add a @ServiceFlow() provider or the `flows` option. Every session will be answered "service not available".',
      );
  }

  private add(candidate: ServiceFlowDefinition): void {
    const flow = assertFlowDefinition(candidate);
    if (flow.resume) {
      // A fixed text: one that cannot fit a USSD screen with both answers stops the start-up.
      const { ussd, backInputs, messages } = this.options;
      const text = flow.resume.message ?? messages.resume;
      const reserved = new Set([ussd.moreKey, ussd.backKey, ...backInputs]);
      const menu = layoutMenu(text, [messages.resumeYes, messages.resumeNo], ussd, reserved);
      if (menu.pages.length > 1 || menu.cut) {
        const { length, limit } = ussdScreen(text, ussd);
        throw new HubtelConfigError(
          `flows.${flow.name}.resume.message`,
          `does not fit one USSD screen with its answers (${length} characters of ${limit})`,
        );
      }
    }
    if (this.byName.has(flow.name))
      throw new HubtelConfigError(`flows.${flow.name}`, 'two flows have this name; names must be unique');
    for (const code of flow.serviceCodes) {
      const other = this.byCode.get(code);
      if (other)
        throw new HubtelConfigError(
          `flows.${flow.name}.serviceCode`,
          `"${code}" is already routed to flow ${other.name}`,
        );
    }
    if (flow.isDefault) {
      if (this.fallback)
        throw new HubtelConfigError(
          `flows.${flow.name}`,
          `both ${this.fallback.name} and ${flow.name} are default flows (no serviceCode); give one of them a serviceCode`,
        );
      this.fallback = flow;
    }
    this.byName.set(flow.name, flow);
    for (const code of flow.serviceCodes) this.byCode.set(code, flow);
  }

  private discover(): ServiceFlowDefinition[] {
    const flows: ServiceFlowDefinition[] = [];
    const seen = new Set<unknown>();
    for (const wrapper of this.discovery.getProviders()) {
      const type = wrapper.metatype;
      if (!type || typeof type !== 'function' || wrapper.inject || seen.has(type)) continue;
      const meta = getFlowMetadata(type);
      if (!meta) continue;
      seen.add(type);
      const { flow, steps } = meta;
      const where = `flows.${flow.name}`;
      if (!wrapper.isDependencyTreeStatic())
        throw new HubtelConfigError(
          where,
          'flows must be singletons: a request-scoped flow (or one depending on a request-scoped provider) cannot be used',
        );
      const instance = wrapper.instance as Record<string, unknown>;
      const drafts = steps.map(({ name, method, start }) => {
        const fn = instance[method];
        if (typeof fn !== 'function')
          throw new HubtelConfigError(`${where}.steps.${name}`, `method ${method} is not a function`);
        const handler: FlowStepHandler<any> = (ctx) => (fn as FlowStepHandler<any>).call(instance, ctx);
        return { name, handler, start };
      });
      flows.push(defineFlow(flow, drafts));
    }
    return flows;
  }
}
