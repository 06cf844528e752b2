import { Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ContextIdFactory, MetadataScanner, type DiscoveryService, type ModuleRef } from '@nestjs/core';
import * as eventEmitterPackage from '@nestjs/event-emitter';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import { describeError } from '../logging/redact.js';
import { HANDLER_EVENTS, HUBTEL_HANDLER_METADATA, type HubtelHandlerMetadata } from './handler-decorator.js';

/** One handler of a pipeline event: `id` (`Class.method@event`) is what a job record remembers. */
export interface PipelineHandler {
  readonly id: string;
  readonly call: (payload: unknown) => unknown;
}

export interface HandlerRegistryOptions {
  emitter: EventEmitter2;
  /** In a Nest app: decorated handlers are found by their metadata and called by identity. */
  discovery?: DiscoveryService;
  scanner?: MetadataScanner;
  moduleRef?: ModuleRef;
  logger?: Logger;
}

type Method = (payload: unknown) => unknown;

/**
 * Who handles a pipeline event, each by a stable identity: a job remembers which handlers succeeded
 * by name, not position (a deploy that reorders them must not skip or repeat one). In a Nest app the
 * decorated methods, found once; listeners only observe (`notify`). Outside Nest: the listeners.
 */
export class HandlerRegistry implements OnApplicationBootstrap {
  private discovered: Map<string, PipelineHandler[]> | undefined;
  private readonly combined = new WeakMap<readonly string[], readonly PipelineHandler[]>();
  private readonly logger: Logger;

  constructor(private readonly options: HandlerRegistryOptions) {
    this.logger = options.logger ?? new HubtelLogger('Hubtel:handlers');
  }

  /** At start-up, so what the discovery warns about is said before any job. */
  onApplicationBootstrap(): void {
    this.discover();
  }

  /**
   * Emits a job's events to the listeners once its handlers succeeded (at least once). Each is
   * called alone, not awaited, its failure logged: it never fails, holds or repeats the job.
   */
  notify(events: readonly string[], payload: unknown): void {
    if (!this.options.discovery) return;
    const { emitter } = this.options;
    for (const event of events) {
      const failed = (error: unknown) =>
        this.logger.error(
          `An observer of "${event}" failed (the job is not affected): ${describeError(error)}`,
        );
      const calls: Array<() => unknown> = [
        ...emitter.listenersAny().map((fn) => () => fn.call(emitter, event, payload)),
        ...emitter.listeners(event).map((fn) => () => fn.call(emitter, payload)),
      ];
      for (const call of calls) {
        // What emit sets for a listener that reads `this.event` (a wildcard's match).
        (emitter as unknown as { event: string }).event = event;
        try {
          void Promise.resolve(call()).catch(failed);
        } catch (error) {
          failed(error);
        }
      }
    }
  }

  /** Handlers of the events in order; the same events array gives the same list (callers cache by it). */
  handlersOf(events: readonly string[]): readonly PipelineHandler[] {
    if (events.length === 1) return this.handlersOfEvent(events[0]!);
    const cached = this.combined.get(events);
    if (cached) return cached;
    const handlers = Object.freeze(events.flatMap((event) => this.handlersOfEvent(event)));
    // Without discovery the emitter's listeners are the handlers, and they may change.
    if (this.options.discovery) this.combined.set(events, handlers);
    return handlers;
  }

  private handlersOfEvent(event: string): readonly PipelineHandler[] {
    const { emitter, discovery } = this.options;
    if (!discovery)
      return Object.freeze(
        (emitter.listeners(event) as Method[]).map((fn, index) => ({ id: `${event}#${index}`, call: fn })),
      );
    return this.discover().get(event) ?? NO_HANDLERS;
  }

  /** Every decorated handler of the app's providers and controllers, by event (once). */
  private discover(): Map<string, PipelineHandler[]> {
    if (this.discovered) return this.discovered;
    const byEvent = new Map<string, PipelineHandler[]>();
    this.discovered = byEvent;
    const { discovery, scanner = new MetadataScanner(), moduleRef } = this.options;
    if (!discovery) return byEvent;
    const taken = new Map<string, number>();
    const onEventKey = (metadataKey ??= onEventMetadataKey());
    const listeners: Array<{ event: string; id: string }> = [];
    for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || wrapper.isAlias) continue;
      const prototype = (Object.getPrototypeOf(instance) ?? {}) as object;
      const requestScoped = !wrapper.isDependencyTreeStatic();
      const className = instance.constructor?.name || String(wrapper.name);
      for (const method of scanner.getAllMethodNames(prototype)) {
        const fn = (prototype as Record<string, object>)[method]!;
        const onEvent = Reflect.getMetadata(onEventKey, fn) as Array<{ event: unknown }> | undefined;
        for (const { event } of onEvent ?? [])
          for (const name of [event].flat())
            if (typeof name === 'string' && isHandlerEvent(name))
              listeners.push({ event: name, id: `${className}.${method}` });
        const metadata = Reflect.getMetadata(HUBTEL_HANDLER_METADATA, fn) as
          HubtelHandlerMetadata[] | undefined;
        for (const { event, id: given, prepend } of metadata ?? []) {
          let id = `${given ?? `${className}.${method}`}@${event}`;
          const seen = (taken.get(id) ?? 0) + 1;
          taken.set(id, seen);
          if (seen === 2)
            this.logger.warn(
              `Two handlers are both ${id} (a class provided twice, or two classes with one name): the later ones are ${id}#2… in discovery order; give them an explicit id option`,
            );
          if (seen > 1) id = `${id}#${seen}`;
          const call: Method =
            requestScoped && moduleRef
              ? async (payload) => {
                  const contextId = ContextIdFactory.create();
                  const scoped = (await moduleRef.resolve(wrapper.token, contextId, {
                    strict: false,
                  })) as Record<string, Method>;
                  return scoped[method]!(payload);
                }
              : (payload) => (instance[method] as Method).call(instance, payload);
          const list = byEvent.get(event) ?? [];
          if (prepend) list.unshift({ id, call });
          else list.push({ id, call });
          byEvent.set(event, list);
        }
      }
    }
    // Before 0.3.0 a plain @OnEvent was a handler; where it is alone it was surely meant as one.
    for (const { event, id } of listeners) {
      if (byEvent.has(event) || MIGRATION_WARNED.has(`${id}@${event}`)) continue;
      MIGRATION_WARNED.add(`${id}@${event}`);
      this.logger.warn(
        `${id} listens to "${event}" with @OnEvent, and no handler decorator handles it: since 0.3.0 an @OnEvent method is an observer, called after the handlers succeeded (at least once; a failure is logged, not retried). If it is the handler, decorate it with the module's handler decorator (@OnCheckoutPaid(), @OnFulfillment(), ...) instead of @OnEvent`,
      );
    }
    for (const list of byEvent.values()) Object.freeze(list);
    return byEvent;
  }
}

const NO_HANDLERS: readonly PipelineHandler[] = Object.freeze([]);

let metadataKey: unknown;
/**
 * The key @OnEvent writes: exported by @nestjs/event-emitter 12, probed on 3.x (Nest 11). A namespace
 * import: Node's ESM loader cannot take the name from a CommonJS build.
 */
export function onEventMetadataKey(
  pkg = eventEmitterPackage as unknown as Record<string, unknown> &
    Pick<typeof eventEmitterPackage, 'OnEvent'>,
): unknown {
  if (metadataKey !== undefined && pkg === (eventEmitterPackage as unknown)) return metadataKey;
  const exported = pkg.EVENT_LISTENER_METADATA;
  if (typeof exported === 'string') return exported;
  const probe = { method(): void {} };
  const descriptor = Object.getOwnPropertyDescriptor(probe, 'method')!;
  pkg.OnEvent('hubtel.probe')(probe, 'method', descriptor);
  return Reflect.getMetadataKeys(descriptor.value as object).find((k) => {
    const value = Reflect.getMetadata(k, descriptor.value as object) as unknown;
    return (
      Array.isArray(value) && (value as Array<{ event?: unknown }>).some((v) => v?.event === 'hubtel.probe')
    );
  });
}

/** Warned once per process: each module's registry scans the same app. */
const MIGRATION_WARNED = new Set<string>();

/** An event a handler decorator handles, or a sub-event of one (`hubtel.service-app.fulfillment:<code>`). */
function isHandlerEvent(event: string): boolean {
  return [...HANDLER_EVENTS].some((base) => event === base || event.startsWith(`${base}:`));
}
