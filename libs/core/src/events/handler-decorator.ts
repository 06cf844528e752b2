import { OnEvent } from '@nestjs/event-emitter';
import { HUBTEL_HANDLER_ID_METADATA } from './handler-registry.js';

// Derived from OnEvent itself: @nestjs/event-emitter 3.x (Nest 11) does not export OnEventOptions.
type OnEventOptions = Exclude<Parameters<typeof OnEvent>[1], undefined>;

export type HubtelHandlerOptions = Omit<OnEventOptions, 'async' | 'suppressErrors'> & {
  /**
   * The handler's stable identity for this event, instead of `ClassName.methodName`: a job record
   * remembers which handlers succeeded by it, so keep it when renaming the class or method (and
   * set it when one class is provided twice, or the build minifies class names).
   */
  id?: string;
};

/**
 * Builds a handler decorator (`@OnCheckoutPaid()`) as a thin wrapper over `@OnEvent`.
 * It forces `suppressErrors: false` and `async: false`: the inbound pipeline must see a handler
 * fail in order to retry it and, in the end, dead-letter it. (The pipeline calls discovered
 * `@OnEvent` methods directly, so it sees plain `@OnEvent` handlers fail too; `suppressErrors`
 * matters for other `emit()` callers and request-scoped providers.)
 */
export function createHandlerDecorator(event: string): (options?: HubtelHandlerOptions) => MethodDecorator {
  return (options: HubtelHandlerOptions = {}) => {
    const { id, ...rest } = options;
    const onEvent = OnEvent(event, { ...rest, async: false, suppressErrors: false });
    if (id === undefined) return onEvent;
    return (target, key, descriptor) => {
      const method = descriptor.value as object;
      const ids = (Reflect.getMetadata(HUBTEL_HANDLER_ID_METADATA, method) as Record<string, string>) ?? {};
      Reflect.defineMetadata(HUBTEL_HANDLER_ID_METADATA, { ...ids, [event]: id }, method);
      return onEvent(target, key, descriptor);
    };
  };
}
