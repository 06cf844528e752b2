import { HttpService } from '@nestjs/axios';
import type { DynamicModule, InjectionToken, Provider, Type } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { EventEmitter2, EventEmitterReadinessWatcher } from '@nestjs/event-emitter';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HandlerRegistry } from '../events/handler-registry.js';
import { HUBTEL_JOB_RUNNER, HUBTEL_STORE } from '../hubtel.constants.js';
import { HttpTransport, type HttpTransportConfig } from '../http/http-transport.js';
import { StatusCheckBudgetModule } from '../http/status-check.budget.js';
import { hubtelHttpModule } from '../http/undici-axios-adapter.js';
import type { HubtelStore } from '../store/hubtel-store.interface.js';
import { resolveStoreOption, type HubtelStoreOption } from '../store/store-option.js';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import { InboundAccessPolicy, type InboundAccessOptions } from './inbound-access.js';
import type { InboundPipelineOptions, JobDefinition } from './inbound-job.types.js';
import { InboundPipeline } from './inbound-pipeline.js';
import type { JobRunner } from './job-runner.js';

export interface InboundKitOptions {
  store?: HubtelStoreOption | undefined;
  access: InboundAccessOptions;
}

/** The pipeline settings a module chooses; the kit adds the rest (`logger` serves the registry too). */
export type InboundPipelineSettings = Omit<
  InboundPipelineOptions,
  'store' | 'emitter' | 'handlers' | 'runner' | 'whenReady' | 'telemetry'
> & {
  /** Job types declared as the pipeline is made. */
  jobs?: Readonly<Record<string, JobDefinition<any>>>;
};

export interface InboundKitSpec<O extends InboundKitOptions> {
  /** The module as errors name it: `CheckoutModule`. */
  module: string;
  /** What it needs the event emitter for, after its name: `emits its outcomes as events`. */
  emits: string;
  /** First part of its option names in errors: `checkout` gives `checkout.store`, `checkout.access.*`. */
  optionPrefix: string;
  options: InjectionToken;
  /** Tokens the kit provides the module's store and InboundAccessPolicy under. */
  store: InjectionToken;
  access: InjectionToken;
  pipeline: { provide: InjectionToken; settings: (options: O) => InboundPipelineSettings };
  /** For a module that calls the platform: its HttpTransport (the app's telemetry is added), logging as `context`. */
  transport?: { provide: InjectionToken; config: (options: O) => HttpTransportConfig; context: string };
}

const optional = (token: InjectionToken) => ({ token, optional: true });

/** The Nest providers of every inbound module, wired alike; a module gives its tokens and settings. */
export function inboundKit<O extends InboundKitOptions>(
  spec: InboundKitSpec<O>,
): { imports: Array<Type | DynamicModule>; providers: Provider[] } {
  // Its own provider, so Nest calls its start-up hook (the discovery's warnings, before any job).
  const handlers = Symbol(`${String(spec.module)} handlers`);
  const providers: Provider[] = [
    {
      provide: handlers,
      useFactory: (
        options: O,
        emitter: EventEmitter2 | undefined,
        discovery: DiscoveryService,
        scanner: MetadataScanner,
        moduleRef: ModuleRef,
      ) => {
        const { logger } = spec.pipeline.settings(options);
        return (
          emitter &&
          new HandlerRegistry({ emitter, discovery, scanner, moduleRef, ...(logger ? { logger } : {}) })
        );
      },
      inject: [spec.options, optional(EventEmitter2), DiscoveryService, MetadataScanner, ModuleRef],
    },
    {
      provide: spec.store,
      useFactory: (options: O, moduleRef: ModuleRef, appStore?: HubtelStore) =>
        resolveStoreOption(options.store, moduleRef, appStore, `${spec.optionPrefix}.store`),
      inject: [spec.options, ModuleRef, optional(HUBTEL_STORE)],
    },
    {
      provide: spec.access,
      useFactory: (options: O) => new InboundAccessPolicy(options.access, `${spec.optionPrefix}.access.`),
      inject: [spec.options],
    },
    {
      provide: spec.pipeline.provide,
      useFactory: (
        options: O,
        store: HubtelStore,
        emitter: EventEmitter2 | undefined,
        readiness: EventEmitterReadinessWatcher | undefined,
        registry: HandlerRegistry,
        runner: JobRunner | undefined,
        telemetry: HubtelTelemetry | undefined,
      ) => {
        if (!emitter)
          throw new HubtelConfigError(
            'EventEmitterModule',
            `${spec.module} ${spec.emits}: import EventEmitterModule.forRoot() in your application module`,
          );
        // One engine per deployment: a shared store needs the shared runner (it takes a dead replica's
        // jobs over), and a local store beside one would have others run jobs they cannot read.
        if (runner && !runner.local && store.local)
          throw new HubtelConfigError(
            `${spec.optionPrefix}.store`,
            `${spec.module} keeps its records in this process (${store.constructor.name}) but the app runs jobs on a shared runner (HUBTEL_JOB_RUNNER, e.g. HubtelBullmqModule): give it the shared store (HubtelRedisModule.forRoot({ url }), or its \`store\` option), or remove the runner`,
          );
        if (!runner && !store.local)
          throw new HubtelConfigError(
            'HubtelBullmqModule',
            `${spec.module} keeps its records in a shared store (${store.constructor.name}): its jobs must run on BullMQ. Import HubtelBullmqModule.forRoot({ url }) (nestjs-hubtel/bullmq) beside HubtelRedisModule, with the same Redis`,
          );
        const { jobs = {}, ...settings } = spec.pipeline.settings(options);
        const pipeline = new InboundPipeline({
          ...settings,
          store,
          emitter,
          ...(runner ? { runner } : {}),
          handlers: registry,
          ...(readiness ? { whenReady: () => readiness.waitUntilReady() } : {}),
          ...(telemetry ? { telemetry } : {}),
        });
        for (const [type, definition] of Object.entries(jobs)) pipeline.define(type, definition);
        return pipeline;
      },
      inject: [
        spec.options,
        spec.store,
        optional(EventEmitter2),
        optional(EventEmitterReadinessWatcher),
        handlers,
        optional(HUBTEL_JOB_RUNNER),
        optional(HUBTEL_TELEMETRY),
      ],
    },
  ];
  const transport = spec.transport;
  if (!transport) return { imports: [DiscoveryModule], providers };
  providers.push({
    provide: transport.provide,
    useFactory: (http: HttpService, options: O, telemetry?: HubtelTelemetry) =>
      new HttpTransport(http, {
        ...transport.config(options),
        loggerContext: transport.context,
        ...(telemetry ? { telemetry } : {}),
      }),
    inject: [HttpService, spec.options, optional(HUBTEL_TELEMETRY)],
  });
  // The status-check budget is the instance's: one static module, shared by every module's kit.
  return { imports: [hubtelHttpModule(), DiscoveryModule, StatusCheckBudgetModule], providers };
}
