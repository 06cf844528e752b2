import { OnEvent } from '@nestjs/event-emitter';

// Derived from OnEvent itself: @nestjs/event-emitter 3.x (Nest 11) does not export OnEventOptions.
type OnEventOptions = Exclude<Parameters<typeof OnEvent>[1], undefined>;

export type HubtelHandlerOptions = Omit<OnEventOptions, 'async' | 'suppressErrors'>;

/**
 * Builds a handler decorator (`@OnCheckoutPaid()`) as a thin wrapper over `@OnEvent`.
 * It forces `suppressErrors: false` and `async: false`: the inbound pipeline must see a handler
 * fail in order to retry it and, in the end, dead-letter it. (Plain `@OnEvent` swallows errors by
 * default: users mixing it in must pass `{ suppressErrors: false }` to get retries.)
 */
export function createHandlerDecorator(event: string): (options?: HubtelHandlerOptions) => MethodDecorator {
  return (options: HubtelHandlerOptions = {}) =>
    OnEvent(event, { ...options, async: false, suppressErrors: false });
}
