import { Logger } from '@nestjs/common';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { EVENT_LISTENER_METADATA, type EventEmitter2 } from '@nestjs/event-emitter';

/** Method metadata set by our handler decorators' `id` option: `{ [event]: id }`. */
export const HUBTEL_HANDLER_ID_METADATA = 'hubtel:handler-id';

/** One handler of a pipeline event, as the pipeline calls it. */
export interface PipelineHandler {
  /**
   * Stable identity, what a job record remembers: `Class.method@event` (`id@event` with the
   * decorator's `id` option), or `event#n` for the n-th listener attached by hand (`emitter.on`).
   */
  readonly id: string;
  /** Calls the handler; rejects when it fails, whatever its `suppressErrors` option says. */
  readonly call: (payload: unknown) => unknown;
}

export interface HandlerRegistryOptions {
  emitter: EventEmitter2;
  /** With both (a Nest app): @OnEvent methods are found and called by identity. */
  discovery?: DiscoveryService;
  scanner?: MetadataScanner;
  logger?: Logger;
}

/** An @OnEvent method found at bootstrap, for one of its events. */
interface Discovered {
  id: string;
  /** Registered with `prependListener` (ahead of the others). */
  prepend: boolean;
  /** Direct call of the method; undefined for a request-scoped provider (called through the emitter). */
  call: ((payload: unknown) => unknown) | undefined;
}

interface Resolved {
  /** The emitter's listeners the list was resolved from (re-resolved when they change). */
  listeners: readonly unknown[];
  handlers: readonly PipelineHandler[];
}

type Listener = (...args: unknown[]) => unknown;

/**
 * Who handles a pipeline event, each with a stable identity, so a job remembers which handlers
 * succeeded by name, never by position (a deploy that adds, removes or reorders handlers must not
 * make a recovered job skip one or run one twice).
 *
 * - `@OnEvent` methods (our decorators included) of providers and controllers are found once, by
 *   DiscoveryService, and called directly on their instance: the pipeline sees every failure
 *   (@nestjs/event-emitter would swallow it unless `suppressErrors: false`). Identity:
 *   `Class.method@event`. Two handlers with the same identity (one class provided twice, or two
 *   classes with one name) get `#2`, `#3`… in discovery order, with a warning: give them an `id`
 *   (`@OnCheckoutPaid({ id: 'ship' })`) to make it explicit. A class name is the identity: keep
 *   class names in minified builds, or use `id`.
 * - A request-scoped provider's method is called through the emitter (which builds its instance
 *   per call), so only its `suppressErrors: false` failures are seen (our decorators set it); a
 *   warning says so.
 * - Listeners attached by hand (`emitter.on(event, fn)`) have no identity: they are still called,
 *   in the emitter's order, as `event#0`, `event#1`… (their position among hand-attached listeners
 *   of the event), with a one-time warning when the app also has discovered handlers.
 * - When the emitter's listeners cannot be matched with what was discovered (a wildcard pattern,
 *   the subscriber loader registered twice), the event falls back to positions (`event#i` over
 *   all its listeners, as before identities), with a warning.
 *
 * Resolution is cached per event and redone only when the emitter's listener list changes.
 */
export class HandlerRegistry {
  private discovered: Map<string, Discovered[]> | undefined;
  private readonly cache = new Map<string, Resolved>();
  private readonly combined = new WeakMap<
    readonly string[],
    { parts: ReadonlyArray<readonly PipelineHandler[]>; handlers: readonly PipelineHandler[] }
  >();
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
    const cached = this.combined.get(events);
    if (cached && cached.parts.every((part, index) => part === this.handlersOfEvent(events[index]!)))
      return cached.handlers;
    const parts = events.map((event) => this.handlersOfEvent(event));
    const handlers = Object.freeze(parts.flat());
    this.combined.set(events, { parts, handlers });
    return handlers;
  }

  handlersOfEvent(event: string): readonly PipelineHandler[] {
    const listeners = this.options.emitter.listeners(event);
    const cached = this.cache.get(event);
    if (cached && sameList(cached.listeners, listeners)) return cached.handlers;
    const handlers = this.resolve(event, listeners as Listener[]);
    this.cache.set(event, { listeners: listeners.slice(), handlers });
    return handlers;
  }

  private resolve(event: string, listeners: readonly Listener[]): readonly PipelineHandler[] {
    const discovered = this.discover().get(event) ?? [];
    const wrappers = listeners.filter(isSubscriberWrapper);
    if (wrappers.length !== discovered.length) {
      if (this.options.discovery)
        this.warnOnce(
          `positions:${event}`,
          `Cannot match the ${wrappers.length} @OnEvent listener(s) of "${event}" with the ${discovered.length} handler(s) found at bootstrap (wildcard pattern?): its handlers are identified by position, so a deploy that reorders them may re-run or skip one in a recovered job`,
        );
      return Object.freeze(listeners.map((fn, index) => ({ id: `${event}#${index}`, call: fn })));
    }
    // The subscriber loader registers in discovery order: `on` appends, `prependListener` goes first.
    const expected: Discovered[] = [];
    for (const handler of discovered) {
      if (handler.prepend) expected.unshift(handler);
      else expected.push(handler);
    }
    const handlers: PipelineHandler[] = [];
    let wrapper = 0;
    let manual = 0;
    for (const fn of listeners) {
      if (isSubscriberWrapper(fn)) {
        const found = expected[wrapper++]!;
        handlers.push({ id: found.id, call: found.call ?? fn });
      } else {
        handlers.push({ id: `${event}#${manual++}`, call: fn });
      }
    }
    if (manual > 0 && this.options.discovery) {
      this.warnOnce(
        `manual:${event}`,
        `${manual} listener(s) of "${event}" were attached by hand (emitter.on): they are identified by position (${event}#0…); use a decorated provider method for a stable identity`,
      );
    }
    return Object.freeze(handlers);
  }

  /** Every @OnEvent method of the app's providers and controllers, by event (once). */
  private discover(): Map<string, Discovered[]> {
    if (this.discovered) return this.discovered;
    const byEvent = new Map<string, Discovered[]>();
    const { discovery, scanner } = this.options;
    this.discovered = byEvent;
    if (!discovery || !scanner) return byEvent;
    const taken = new Map<string, number>();
    // Same walk as @nestjs/event-emitter's EventSubscribersLoader, so the order matches its registrations.
    for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || wrapper.isAlias) continue;
      const prototype = (Object.getPrototypeOf(instance) ?? {}) as object;
      const requestScoped = !wrapper.isDependencyTreeStatic();
      const className = instance.constructor?.name || String(wrapper.name);
      for (const method of scanner.getAllMethodNames(prototype)) {
        const fn = instance[method];
        if (typeof fn !== 'function') continue;
        const metadata = Reflect.getMetadata(EVENT_LISTENER_METADATA, fn) as
          Array<{ event: unknown; options?: { prependListener?: boolean } }> | undefined;
        if (!metadata) continue;
        const ids = Reflect.getMetadata(HUBTEL_HANDLER_ID_METADATA, fn) as Record<string, string> | undefined;
        for (const { event: events, options } of metadata) {
          for (const event of Array.isArray(events) ? events : [events]) {
            if (typeof event !== 'string') continue;
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
            if (requestScoped) {
              this.warnOnce(
                `scoped:${id}`,
                `${id} belongs to a request-scoped provider: it is called through the event emitter, so its failures are seen (and retried) only with suppressErrors: false`,
              );
            }
            const call = requestScoped
              ? undefined
              : (payload: unknown) => (instance[method] as Listener).call(instance, payload);
            const list = byEvent.get(event) ?? [];
            list.push({ id, prepend: options?.prependListener === true, call });
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

/**
 * Is this listener one @nestjs/event-emitter's EventSubscribersLoader registered for an @OnEvent
 * method? It registers anonymous closures over `wrapFunctionInTryCatchBlocks` (the library gives
 * them no other mark); anything else was attached by hand. Checked only when an event's listener
 * list changes; a library change that breaks this shows as the position fallback's warning.
 */
const wrapperChecks = new WeakMap<object, boolean>();
function isSubscriberWrapper(fn: unknown): fn is Listener {
  if (typeof fn !== 'function') return false;
  let known = wrapperChecks.get(fn);
  if (known === undefined) {
    known = Function.prototype.toString.call(fn).includes('wrapFunctionInTryCatchBlocks');
    wrapperChecks.set(fn, known);
  }
  return known;
}

function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
