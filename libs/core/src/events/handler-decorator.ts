import { OnEvent } from '@nestjs/event-emitter';
import { HUBTEL_DEFAULT_ACCOUNT } from '../accounts/hubtel-accounts.resolver.js';
import { HubtelConfigError } from '../errors/hubtel.errors.js';

// Derived from OnEvent itself: @nestjs/event-emitter 3.x (Nest 11) does not export OnEventOptions.
type OnEventOptions = Exclude<Parameters<typeof OnEvent>[1], undefined>;

/**
 * Options of the handler and listener decorators. A listener decorator (`@OnCheckoutRejected()`)
 * passes @OnEvent's options on; a handler decorator (`@OnCheckoutPaid()`) reads `id`, `account`
 * and `prependListener` (called before the handlers without it).
 */
export type HubtelHandlerOptions = Omit<OnEventOptions, 'async' | 'suppressErrors'> & {
  /**
   * The handler's stable identity for this event, instead of `ClassName.methodName`: a job record
   * remembers which handlers succeeded by it, so keep it when renaming the class or method (and
   * set it when one class is provided twice, or the build minifies class names).
   */
  id?: string;
  /**
   * Run only for the events of this account, or these accounts (`'north'`, `['north', 'south']`;
   * `'default'` is the default account's). Other accounts' events pass the method by: it returns
   * at once and counts as handled. It filters the method, whichever events it handles.
   */
  account?: string | readonly string[];
};

/** Method metadata of a pipeline handler: one entry per decorator on the method. */
export const HUBTEL_HANDLER_METADATA = 'hubtel:handler';

export interface HubtelHandlerMetadata {
  event: string;
  /** The `id` option: the identity is `id@event` instead of `Class.method@event`. */
  id?: string;
  /** Called before the handlers without it (the order @OnEvent's option gives listeners). */
  prepend?: boolean;
}

/**
 * The events some handler decorator handles: a plain `@OnEvent` on one of them (or on a
 * sub-event, `hubtel.service-app.fulfillment:<code>`) is a 0.2.0 handler the registry warns about.
 */
export const HANDLER_EVENTS = new Set<string>();

/**
 * Builds the decorator of a pipeline job's handlers (`@OnCheckoutPaid()`): it marks the method
 * with our own metadata, not `@OnEvent`. The pipeline finds the method (HandlerRegistry) and calls
 * it once per job, retried until it succeeds; once every handler succeeded it emits the event for
 * `@OnEvent` and `emitter.on` listeners (docs/architecture.md, "Handlers and events").
 */
export function createHandlerDecorator(event: string): (options?: HubtelHandlerOptions) => MethodDecorator {
  HANDLER_EVENTS.add(event);
  return (options: HubtelHandlerOptions = {}) => {
    const { id, account, prependListener } = options;
    const accounts = account === undefined ? undefined : accountSet(account, event);
    const entry: HubtelHandlerMetadata = {
      event,
      ...(id !== undefined ? { id } : {}),
      ...(prependListener ? { prepend: true } : {}),
    };
    return (_target, _key, descriptor) => {
      if (accounts) descriptor = filterByAccount(descriptor, accounts);
      const method = descriptor.value as object;
      const entries = (Reflect.getMetadata(HUBTEL_HANDLER_METADATA, method) as HubtelHandlerMetadata[]) ?? [];
      Reflect.defineMetadata(HUBTEL_HANDLER_METADATA, [...entries, entry], method);
      return descriptor;
    };
  };
}

/**
 * Builds the decorator of an event the modules emit (`@OnCheckoutRejected()`, dead letters,
 * `query`): a thin wrapper over `@OnEvent`, with the `account` filter. It forces
 * `suppressErrors: false` and `async: false`, so the emitter (`emitAsync`) sees a listener fail and
 * the module can log it or, for `query`, answer without it.
 */
export function createListenerDecorator(event: string): (options?: HubtelHandlerOptions) => MethodDecorator {
  return (options: HubtelHandlerOptions = {}) => {
    const { id: _id, account, ...rest } = options;
    const onEvent = OnEvent(event, { ...rest, async: false, suppressErrors: false });
    if (account === undefined) return onEvent;
    const accounts = accountSet(account, event);
    return (target, key, descriptor) => {
      descriptor = filterByAccount(descriptor, accounts);
      onEvent(target, key, descriptor);
      return descriptor;
    };
  };
}

function accountSet(account: string | readonly string[], event: string): ReadonlySet<string> {
  const names = typeof account === 'string' ? [account] : account;
  if (!Array.isArray(names) || names.length === 0 || names.some((name) => typeof name !== 'string'))
    throw new HubtelConfigError(
      `${event} handler account`,
      'must be an account name or a non-empty array of them',
    );
  return new Set(names);
}

/**
 * The method, wrapped to return at once for an event (its first argument) of another account; an
 * event without `account` is the default account's. The metadata of decorators applied before
 * moves to the wrapper, which keeps the method's name (handler identities use it).
 */
function filterByAccount<T>(
  descriptor: TypedPropertyDescriptor<T>,
  accounts: ReadonlySet<string>,
): TypedPropertyDescriptor<T> {
  const method = descriptor.value as unknown as (...args: unknown[]) => unknown;
  if (typeof method !== 'function') return descriptor;
  const filtered = function (this: unknown, ...args: unknown[]): unknown {
    const account = (args[0] as { account?: unknown } | null | undefined)?.account ?? HUBTEL_DEFAULT_ACCOUNT;
    return typeof account === 'string' && accounts.has(account) ? method.apply(this, args) : undefined;
  };
  Object.defineProperty(filtered, 'name', { value: method.name });
  for (const key of Reflect.getMetadataKeys(method) as unknown[])
    Reflect.defineMetadata(key, Reflect.getMetadata(key, method), filtered);
  return { ...descriptor, value: filtered as unknown as T };
}
