import { Logger } from '@nestjs/common';
import { ContextIdFactory, MetadataScanner, type DiscoveryService, type ModuleRef } from '@nestjs/core';
import * as eventEmitterPackage from '@nestjs/event-emitter';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import { HubtelLogger } from '../logging/hubtel-logger.js';

/** Method metadata set by our handler decorators' `id` option: `{ [event]: id }`. */
export const HUBTEL_HANDLER_ID_METADATA = 'hubtel:handler-id';

/** One handler of a pipeline event, as the pipeline calls it. */
export interface PipelineHandler {
  /**
   * Stable identity, what a job record remembers: `Class.method@event` (`id@event` with the
   * decorator's `id` option); `event#n` only for an emitter used without Nest (no discovery).
   */
  readonly id: string;
  /** Calls the handler; rejects when it fails, whatever its `suppressErrors` option says. */
  readonly call: (payload: unknown) => unknown;
}

export interface HandlerRegistryOptions {
  emitter: EventEmitter2;
  /** With both (a Nest app): @OnEvent methods are found by their metadata and called by identity. */
  discovery?: DiscoveryService;
  scanner?: MetadataScanner;
  /** Builds a request-scoped provider's instance per call. */
  moduleRef?: ModuleRef;
  logger?: Logger;
}

type Method = (payload: unknown) => unknown;

/**
 * Who handles a pipeline event, each with a stable identity, so a job remembers which handlers
 * succeeded by name, never by position (a deploy that adds, removes or reorders handlers must not
 * make a recovered job skip one or run one twice).
 *
 * In a Nest app every `@OnEvent` method (our decorators are thin wrappers over it) of a provider
 * or controller is found once, through DiscoveryService and the decorator's own metadata, and
 * called directly on its instance, so the pipeline sees every failure (@nestjs/event-emitter would
 * swallow it unless `suppressErrors: false`). Identity: `Class.method@event`, or `id@event` with
 * the decorator's `id` option; two handlers with one identity (a class provided twice, two classes
 * with one name) get `#2`, `#3`… with a warning. A request-scoped provider gets a fresh instance
 * per call, as the emitter would build it. The emitter's own listener list is not consulted: a
 * listener attached by hand (`emitter.on`) or by a wildcard pattern has no identity the pipeline
 * could remember, so it is not a pipeline handler, and a warning says so once.
 *
 * Without discovery (an emitter used outside Nest, as in unit tests) the emitter's listeners are
 * the handlers, known by position (`event#0`…).
 */
export class HandlerRegistry {
  private discovered: Map<string, PipelineHandler[]> | undefined;
  private patterns: Array<{ pattern: string; id: string }> = [];
  private readonly cache = new Map<string, readonly PipelineHandler[]>();
  private readonly combined = new WeakMap<readonly string[], readonly PipelineHandler[]>();
  private readonly warned = new Set<string>();
  private readonly logger: Logger;

  constructor(private readonly options: HandlerRegistryOptions) {
    this.logger = options.logger ?? new HubtelLogger('Hubtel:handlers');
  }

  /**
   * Handlers of the events, concatenated in the events' order. The same events array (kept by the
   * caller) gives the same list while nothing changed, so per-list caches of the caller hold.
   */
  handlersOf(events: readonly string[]): readonly PipelineHandler[] {
    if (events.length === 1) return this.handlersOfEvent(events[0]!);
    if (!this.options.discovery) return Object.freeze(events.flatMap((event) => this.handlersOfEvent(event)));
    let handlers = this.combined.get(events);
    if (!handlers) {
      handlers = Object.freeze(events.flatMap((event) => this.handlersOfEvent(event)));
      this.combined.set(events, handlers);
    }
    return handlers;
  }

  handlersOfEvent(event: string): readonly PipelineHandler[] {
    const { emitter, discovery } = this.options;
    if (!discovery) {
      return Object.freeze(
        (emitter.listeners(event) as Method[]).map((fn, index) => ({ id: `${event}#${index}`, call: fn })),
      );
    }
    const cached = this.cache.get(event);
    if (cached) return cached;
    const handlers = Object.freeze(this.discover().get(event) ?? []);
    this.cache.set(event, handlers);
    for (const { pattern, id } of this.patterns) {
      if (matchesPattern(pattern, event))
        this.warnOnce(
          `pattern:${id}`,
          `${id} listens to the pattern "${pattern}": the pipeline calls handlers of the exact event "${event}" only (it retries them by identity), so it is not called for it; decorate the method with that event`,
        );
    }
    const extra = emitter.listenerCount(event) - handlers.length;
    if (extra > 0 && this.patterns.length === 0)
      this.warnOnce(
        `manual:${event}`,
        `${extra} listener(s) of "${event}" were attached by hand (emitter.on): the pipeline does not call them (it retries handlers by identity); use a decorated provider method`,
      );
    return handlers;
  }

  /** Every @OnEvent method of the app's providers and controllers, by event (once). */
  private discover(): Map<string, PipelineHandler[]> {
    if (this.discovered) return this.discovered;
    const byEvent = new Map<string, PipelineHandler[]>();
    this.discovered = byEvent;
    const { discovery, scanner = new MetadataScanner(), moduleRef } = this.options;
    if (!discovery) return byEvent;
    const taken = new Map<string, number>();
    const key = (metadataKey ??= onEventMetadataKey());
    for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || wrapper.isAlias) continue;
      const prototype = (Object.getPrototypeOf(instance) ?? {}) as object;
      const requestScoped = !wrapper.isDependencyTreeStatic();
      const className = instance.constructor?.name || String(wrapper.name);
      for (const method of scanner.getAllMethodNames(prototype)) {
        const fn = (prototype as Record<string, unknown>)[method];
        if (typeof fn !== 'function') continue;
        const metadata = Reflect.getMetadata(key, fn) as
          Array<{ event: unknown; options?: { prependListener?: boolean } }> | undefined;
        if (!metadata) continue;
        const ids = Reflect.getMetadata(HUBTEL_HANDLER_ID_METADATA, fn) as Record<string, string> | undefined;
        for (const { event: events, options } of metadata) {
          for (const event of Array.isArray(events) ? events : [events]) {
            if (typeof event !== 'string') continue;
            if (event.includes('*')) {
              this.patterns.push({ pattern: event, id: `${className}.${method}` });
              continue;
            }
            let id = `${ids?.[event] ?? `${className}.${method}`}@${event}`;
            const seen = (taken.get(id) ?? 0) + 1;
            taken.set(id, seen);
            if (seen > 1) {
              this.warnOnce(
                `duplicate:${id}`,
                `Two handlers are both ${id} (a class provided twice, or two classes with one name): the later ones are ${id}#2… in discovery order; give them an explicit id option`,
              );
              id = `${id}#${seen}`;
            }
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
            // The order the emitter would call them in: prependListener first.
            if (options?.prependListener === true) list.unshift({ id, call });
            else list.push({ id, call });
            byEvent.set(event, list);
          }
        }
      }
    }
    return byEvent;
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.logger.warn(message);
  }
}

let metadataKey: unknown;
/**
 * The metadata key @OnEvent writes. @nestjs/event-emitter 12 exports it as EVENT_LISTENER_METADATA;
 * 3.x (Nest 11) does not export it at all, so there it is learned from what the public decorator
 * writes on a probe method. A namespace import, because Node's ESM loader cannot take that name
 * from a CommonJS build by name.
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
  return metadataKey;
}

/** EventEmitter2's wildcards: `*` is one segment, `**` any number of them. */
function matchesPattern(pattern: string, event: string): boolean {
  const source = pattern
    .split('.')
    .map((part) =>
      part === '**' ? '.*' : part === '*' ? '[^.]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('\\.');
  return new RegExp(`^${source}$`).test(event);
}
